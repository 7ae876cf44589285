"""The paper's headline cliff (C4′): moving the window's onset by 100 steps of 20,000 takes OOD from chance to
reasoning (+100: 0.15 → 0.61, +400: 0.93). The coarse onset sweep (C4) can only bracket an edge; this design
tiles the bracket it found with onsets at the paper's resolution scaled to the run (100 steps at 20,000, 32 at
6,400), so a jump that sharp would fall between two neighbouring onsets.

The rule reads the grid in the paper's own metric, mean final OOD accuracy (since 2026-12-07); until then it read
the share of reasoning seeds against a jump of 0.4, a translation of the paper's numbers (`read_cliff`'s `value`
keeps both, so the page's history can say what the old rule gives).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from critwin_lib import config, protocol, stats
from critwin_lib.claims import fates, onsets, rules
from critwin_lib.claims.core import PAPER_RESOLUTION, Design
from critwin_lib.sizes import Size, get_profile


def resolution(P: Size) -> int:
    """The paper's 100 steps of 20,000, scaled to the profile's run (at least one step)."""
    return max(1, round(PAPER_RESOLUTION * P.steps / 20_000))


def fine_grid(P: Size, lo_frac: float, hi_frac: float) -> list[int]:
    """Onsets every `resolution(P)` steps from lo to hi (both included, as fractions of the run), ordered coarse
    to fine: every other onset first, so that a sweep cut off half-way has already tiled the bracket at twice
    the spacing."""
    lo, hi = P.step_at(lo_frac, "lo_frac"), P.step_at(hi_frac, "hi_frac")
    if hi <= lo:
        raise config.ConfigError(f"hi_frac: must be above lo_frac ({hi_frac} <= {lo_frac})")
    res = resolution(P)
    grid = list(range(lo, hi + 1, res))
    return grid[::2] + grid[1::2]


@dataclass
class CliffDesign(Design):
    grid: list[int]  # in training order (coarse to fine)
    resolution: int
    falling: bool = False  # the edge it tiles is a fall (a later onset stops working), not a rise


def cliff_design(*, profile: str, n_seeds: int, gamma: float, lo_frac: float, hi_frac: float,
                 window_frac: float, protocol_name: str = "", falling: bool = False,
                 window_lambda: float = 0.0, first_seed: int = 0) -> CliffDesign:
    """The cliff's runs: the window (`window_lambda`, 0: the protocol's) at every onset of the fine grid over
    [lo, hi], and no weight decay, n_seeds each from `first_seed` (the first seeds of the coarse sweep, so its runs
    at the bracket's ends are reused)."""
    P = get_profile(profile)
    name = protocol.resolve(protocol_name, P)
    protocol.get_protocol(name, "protocol_name")
    seeds = P.seeds(n_seeds, first=first_seed)
    grid = fine_grid(P, lo_frac, hi_frac)
    specs = onsets.sweep_specs(P, seeds, gamma, name, grid, window_frac, window_lambda)
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(name)}: {P.steps} steps, {len(seeds)} seeds, onsets every "
               f"{resolution(P)} steps from {min(grid)} to {max(grid)} ({len(grid)} onsets)")
    return CliffDesign(specs, summary, seeds, grid, resolution(P), falling, protocol=name)


# ------------------------------------------------------------------------------ what the fine grid shows
OOD = "final_ood"  # the rule's value per run: its final OOD accuracy, the paper's metric (since 2026-12-07)
SHARE = "reasoning"  # the rule's value before: 1 where the run reasons, so block means are shares of seeds
PAPER_ONE, PAPER_FOUR = 0.61, 0.93  # the paper's mean OOD one and four resolution steps after the edge
JUMPS = {OOD: PAPER_ONE - fates.CHANCE_OOD,  # the paper's jump, at least: chance (0.15) to 0.61 within 100 steps
         SHARE: 0.4}  # the old rule's jump in reasoning share (the paper's 0.46 read as shares, rounded down)
CLIFF_JUMP = JUMPS[OOD]
SPAN = 4  # resolutions: the jump must happen within 4 × 100 steps of 20,000 (128 of 6,400): the paper's +400


def adjacent_jumps(per_run: pd.DataFrame, span: float, falling: bool = False) -> pd.DataFrame:
    """Every pair of onsets at most `span` apart: the change in reasoning share from the earlier to the later
    (signed as the design's direction) and the exact one-sided McNemar p on the seeds they share; uncorrected
    for the many pairs, so a description beside the rule, not the rule."""
    runs = per_run[per_run["onset"] >= 0]
    wide = runs.assign(r=runs["fate"] == "reasoning").pivot_table(index="seed", columns="onset", values="r",
                                                                  aggfunc="first")
    rows = []
    on = sorted(wide.columns)
    for i, a in enumerate(on):
        for b in on[i + 1:]:
            if b - a > span:
                break
            both = wide[[a, b]].dropna().astype(bool)
            first, later = both[a], both[b]
            if falling:
                first, later = later, first
            gained, lost = int((later & ~first).sum()), int((first & ~later).sum())
            rows.append({"from": int(a), "to": int(b), "seeds": len(both),
                         "change": (int(later.sum()) - int(first.sum())) / len(both) if len(both) else math.nan,
                         "p": stats.mcnemar_exact(gained, lost, alternative="greater")})
    return pd.DataFrame(rows, columns=["from", "to", "seeds", "change", "p"])


# ------------------------------------------------------------------------------ the cliff's rule
BLOCK = SPAN  # onsets per block: the steepest change is read between two neighbouring blocks of 4 onsets
N_PERM = 2000  # circular shifts of each seed's fate sequence across the onsets, for the steepest change's p
PAPER_DRAWS = 10_000  # simulated grids under the paper's cliff, for "the paper's cliff is excluded"
N_POWER_PAPER = 300  # ... inside the power line's simulated designs
POWER_DRAWS = 400  # simulated designs for the power line (each with its own N_POWER_PERM shifts)
N_POWER_PERM = 400


def _wide(per_run: pd.DataFrame, value: str = OOD) -> pd.DataFrame:
    """Seeds (rows) × fine-grid onsets (columns, sorted): the run's final OOD accuracy (`OOD`) or 1.0 where it
    reasons (`SHARE`); seeds missing anywhere left out."""
    if value not in JUMPS:
        raise ValueError(f"value: one of {sorted(JUMPS)}, not {value!r}")
    runs = per_run[per_run["onset"] >= 0]
    v = runs["final_ood"] if value == OOD else runs["fate"] == "reasoning"
    return runs.assign(v=v.astype(float)).pivot_table(
        index="seed", columns="onset", values="v", aggfunc="first").dropna().sort_index(axis=1)


def block_changes(x: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """For values x (..., seeds, onsets): at each cut i (block ≤ i ≤ onsets − block), their mean over the
    `block` onsets from i on minus the mean over the `block` onsets before i; shape (..., cuts)."""
    share = x.mean(axis=-2)  # (..., onsets)
    c = np.concatenate([np.zeros(share.shape[:-1] + (1,)), np.cumsum(share, axis=-1)], axis=-1)
    n = share.shape[-1]
    cuts = np.arange(block, n - block + 1)
    return ((c[..., cuts + block] - c[..., cuts]) - (c[..., cuts] - c[..., cuts - block])) / block


def _steepest_p(x: np.ndarray, observed: float, sign: int, n_perm: int, rng: np.random.Generator) -> float:
    """The share of null grids whose steepest change in the design's direction is at least `observed`. A null grid
    shifts each seed's sequence (of OOD accuracies, or of fates) circularly by its own random offset (since
    2026-12-06): each seed keeps its own sequence, a single sharp switch included, but where along the bracket
    it switches no longer lines up with the other seeds, so a small p says the seeds switch together, the paper's
    population cliff, not merely that each seed switches sharply somewhere. (Shuffling each seed's fates across
    the onsets, the null before, broke each seed's sequence apart and called any single switch steep.)"""
    n = x.shape[-1]
    shift = rng.integers(0, n, (n_perm, x.shape[0], 1))
    idx = (np.arange(n) + shift) % n
    shifted = np.take_along_axis(np.broadcast_to(x, (n_perm,) + x.shape), idx, axis=-1)
    null = (sign * block_changes(shifted)).max(axis=-1)
    return float(np.mean(null >= observed - 1e-12))


def switch_onsets(x: np.ndarray, grid: list[int], sign: int) -> np.ndarray:
    """Each seed's own switch: the onset at the cut where its reasoning after (mean over the onsets from the cut
    on) minus before (over the onsets before it) is largest in the design's direction; NaN for a seed whose fate
    never changes across the bracket."""
    n = x.shape[1]
    c = np.concatenate([np.zeros((x.shape[0], 1)), np.cumsum(x, axis=1)], axis=1)
    cuts = np.arange(1, n)
    after = (c[:, [n]] - c[:, cuts]) / (n - cuts)
    before = c[:, cuts] / cuts
    gain = sign * (after - before)
    best = gain.argmax(axis=1)
    out = np.asarray(grid, float)[cuts[best]]
    return np.where(x.min(axis=1) == x.max(axis=1), np.nan, out)


END_WORDS = {"memorizing": "memorizing", "other rule": "on another wrong rule",
             "not fitted": "with the training set unfitted"}  # how a run that does not reason ends, in words


@dataclass
class Cliff:
    """The fine grid read by the cliff's rule (on the cliff page section): the steepest change of the mean value
    (final OOD accuracy; before 2026-12-07 the reasoning share) between two neighbouring blocks of onsets, with its
    p against shifted seed sequences; the change across the whole bracket (last block − first block) with its BCa
    interval over seeds; the least-squares slope of the value on onset with a bootstrap interval over seeds, and
    the steps the paper's jump takes at that slope. Changes are signed in the design's direction (a rise, or a
    fall when `falling`)."""

    value: str  # OOD or SHARE (`JUMPS`)
    falling: bool
    resolution: int
    grid: list[int]
    seeds: int
    shares: pd.Series  # the reasoning share per onset (whatever the value)
    steepest: float
    steepest_at: float  # the cut: the first onset of the later block
    p_steepest: float
    bracket: float
    bracket_lo: float
    bracket_hi: float
    slope: float  # change in share per 100 steps, in the design's direction
    slope_lo: float
    slope_hi: float
    state: str  # rules.HOLDS (a cliff), REJECTED (no change of the paper's size, or the paper's cliff excluded)
    jumps: pd.DataFrame
    paper_p: float = math.nan  # how often the paper's cliff gives a grid no steeper than this one (`paper_p`)
    switches: pd.Series | None = None  # each seed's own switch onset (NaN: its fate never changes in the bracket)
    others: dict[str, int] | None = None  # how the switching seeds' runs that do not reason end (fate: runs)

    @property
    def span(self) -> int:
        return SPAN * self.resolution

    @property
    def jump(self) -> float:
        """The paper's jump in this reading's value."""
        return JUMPS[self.value]

    @property
    def what(self) -> str:
        """The value in words."""
        return "mean OOD accuracy" if self.value == OOD else "reasoning share"

    def width(self, slope: float) -> float:
        """Steps a change of the paper's jump takes at `slope` (per 100 steps); inf where the value does not move
        the design's way."""
        return 100 * self.jump / slope if slope > 0 else math.inf

    def switch_text(self) -> str:
        """Where the seeds switch, each on its own: how many switch at all, and the spread of their switch onsets."""
        if self.switches is None:
            return "no seed switches"
        on = self.switches.dropna()
        if not len(on):
            return f"none of the {self.seeds} seeds changes fate across the bracket"
        q1, q3 = (float(on.quantile(q)) for q in (0.25, 0.75))
        parts = [f"{END_WORDS.get(fate, fate)} ({k})"
                 for fate, k in sorted((self.others or {}).items(), key=lambda kv: -kv[1])]
        ends = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)
        return (f"{len(on)} of {self.seeds} seeds change fate across the bracket, each at its own onset: from "
                f"{on.min():.0f} to {on.max():.0f} (middle half {q1:.0f}–{q3:.0f})"
                + (f"; where they do not reason, their runs end {ends}" if ends else ""))

    def text(self) -> str:
        way = "fall" if self.falling else "rise"
        if math.isnan(self.steepest):
            return (f"too few onsets or seeds to read ({len(self.grid)} onsets, {self.seeds} seeds; the rule needs "
                    f"two blocks of {BLOCK} onsets and two seeds)")
        takes = f"{self.width(self.slope):,.0f} steps" if self.slope > 0 else "forever (it goes the other way)"
        if self.slope_hi <= 0:
            within = "the interval holds no such " + way
        elif self.slope_lo <= 0:
            within = f"at least {self.width(self.slope_hi):,.0f}, or never"
        else:
            within = f"{self.width(self.slope_hi):,.0f} to {self.width(self.slope_lo):,.0f}"
        return (f"steepest {way} in {self.what} between neighbouring blocks of {BLOCK} onsets ({self.span} steps "
                f"apart) {self.steepest:+.2f} at onset {self.steepest_at:.0f} (p {self.p_steepest:.3f} against each "
                f"seed's sequence shifted); {self.switch_text()}; the paper's cliff gives a grid no steeper in "
                f"{100 * self.paper_p:.1f} % of simulations; "
                f"{way} across the bracket {self.bracket:+.2f} (95 % interval {self.bracket_lo:+.2f} to "
                f"{self.bracket_hi:+.2f}); fitted slope {self.slope:+.3f} per 100 steps (95 % interval "
                f"{self.slope_lo:+.3f} to {self.slope_hi:+.3f}): at that slope a {way} of {self.jump:.2f} takes "
                f"{takes} ({within})")


def decide_cliff(steepest: float, p_steepest: float, bracket_hi: float, paper_p: float = math.nan,
                 jump: float = CLIFF_JUMP) -> str:
    """The cliff's rule, its changes in mean OOD accuracy (`jump` the paper's 0.46; the old rule read reasoning
    shares against 0.4): rejected when the change across the whole bracket stays below `jump` (its 95 % upper
    bound; a value that moves one way cannot jump further than it moves in all), or (stated 2026-12-06) when the
    paper's population cliff is excluded in the bracket, the grids it gives being no steeper than this one in
    fewer than rules.ALPHA of simulations (`paper_p`); else holds when the steepest change between neighbouring
    blocks is at least `jump` and the null of shifted seed sequences rarely matches it (p < rules.ALPHA); else
    undecided."""
    if not math.isnan(bracket_hi) and bracket_hi < jump:
        return rules.REJECTED
    if not math.isnan(paper_p) and paper_p < rules.ALPHA:
        return rules.REJECTED
    if steepest >= jump and p_steepest < rules.ALPHA:
        return rules.HOLDS
    return rules.UNDECIDED


def read_cliff(per_run: pd.DataFrame, resolution: int, falling: bool = False, n_perm: int = N_PERM,
               seed: int = 0, value: str = OOD) -> Cliff:
    """The cliff's numbers on a fine grid's window runs (onset, seed, fate, final_ood), read in `value` (the
    rule's OOD, or the old rule's SHARE); fewer than two blocks of onsets: nothing to read (undecided)."""
    wide, fate = _wide(per_run, value), _wide(per_run, SHARE)
    fate = fate.loc[wide.index, wide.columns]
    grid, sign = [int(o) for o in wide.columns], -1 if falling else 1
    jumps = adjacent_jumps(per_run, SPAN * resolution, falling)
    nan = math.nan
    if len(grid) < 2 * BLOCK or len(wide) < 2:
        return Cliff(value=value, falling=falling, resolution=resolution, grid=grid, seeds=len(wide),
                     shares=fate.mean(), steepest=nan, steepest_at=nan, p_steepest=nan, bracket=nan,
                     bracket_lo=nan, bracket_hi=nan, slope=nan, slope_lo=nan, slope_hi=nan,
                     state=rules.UNDECIDED, jumps=jumps)
    x = wide.to_numpy()
    rng = np.random.default_rng(seed)
    changes = sign * block_changes(x)
    i = int(np.argmax(changes))
    steepest, at = float(changes[i]), float(grid[i + BLOCK])
    p = _steepest_p(x, steepest, sign, n_perm, rng)
    per_seed = sign * (x[:, -BLOCK:].mean(axis=1) - x[:, :BLOCK].mean(axis=1))
    bracket = stats.exact_mean(per_seed)
    b_lo, b_hi = stats.bca_ci(per_seed)
    onset = np.tile(np.asarray(grid, float), len(x))
    slope = sign * 100 * stats.ols_slope(onset, x.ravel())
    boot = rng.integers(0, len(x), (stats.N_BOOT, len(x)))
    xs = x[boot]  # (boot, seeds, onsets)
    g = np.asarray(grid, float) - np.mean(grid)
    slopes = sign * 100 * (xs * g).sum(axis=(1, 2)) / (len(x) * (g * g).sum())
    s_lo, s_hi = (float(np.quantile(slopes, q)) for q in (0.025, 0.975))
    pp = _paper_p(grid, resolution, falling, len(wide), steepest, PAPER_DRAWS, seed, value)
    switches = pd.Series(switch_onsets(fate.to_numpy(), grid, sign), index=wide.index, name="switch onset")
    others = _other_fates(per_run, switches.dropna().index, grid)
    return Cliff(value=value, falling=falling, resolution=resolution, grid=grid, seeds=len(wide), shares=fate.mean(),
                 steepest=steepest, steepest_at=at, p_steepest=p, bracket=bracket, bracket_lo=b_lo,
                 bracket_hi=b_hi, slope=slope, slope_lo=s_lo, slope_hi=s_hi,
                 state=decide_cliff(steepest, p, b_hi, pp, JUMPS[value]), jumps=jumps, paper_p=pp,
                 switches=switches, others=others)


def _other_fates(per_run: pd.DataFrame, seeds: pd.Index, grid: list[int]) -> dict[str, int]:
    """How the runs of the seeds that switch end where they do not reason (fate: runs), so that a switch to
    memorizing reads apart from a window that ends too late to refit the training set."""
    runs = per_run[per_run["seed"].isin(seeds) & per_run["onset"].isin(grid) & (per_run["fate"] != "reasoning")]
    counts = runs.drop_duplicates(["seed", "onset"])["fate"].value_counts()
    return {str(f): int(k) for f, k in counts.items()}


def paper_curve(grid: list[int], resolution: int, falling: bool = False, value: str = OOD) -> np.ndarray:
    """The paper's cliff per onset, its edge at the bracket's middle: mean OOD accuracy at chance (0.15) before
    it, 0.61 one resolution later, 0.93 four resolutions later, linear between; mirrored for a fall. In `SHARE`,
    the reasoning share those imply (`fates.paper_share`: 0 before the edge)."""
    g = np.asarray(grid, float)
    edge = (g.min() + g.max()) / 2
    d = (edge - g if falling else g - edge) / resolution
    base = fates.CHANCE_OOD if value == OOD else 0.0
    one, four = ((PAPER_ONE, PAPER_FOUR) if value == OOD
                 else (fates.paper_share(PAPER_ONE), fates.paper_share(PAPER_FOUR)))
    return np.where(d < 0, base, np.where(d < 1, base + (one - base) * d,
                                          np.minimum(four, one + (four - one) * (d - 1) / 3)))


def paper_draws(rng: np.random.Generator, shape: tuple[int, ...], curve: np.ndarray, value: str = OOD
                ) -> np.ndarray:
    """Grids (..., seeds, onsets) drawn from the paper's cliff `curve`, seeds independent. In OOD each run reasons
    (OOD 1) or sits at chance (0.15), with the probability that gives the curve's mean OOD (`fates.paper_share`):
    the most variable runs that mean allows, so a grid this flat is no rarer than under any other spread."""
    if value == OOD:
        return np.where(rng.random(shape) < fates.paper_share(curve), 1.0, fates.CHANCE_OOD)
    return (rng.random(shape) < curve).astype(float)


def paper_p(fine: Cliff, draws: int = PAPER_DRAWS, seed: int = 0) -> float:
    """How often the paper's cliff (`paper_curve`, seeds independent) gives a grid of this size whose steepest
    change is no steeper than this one's. Part of the rule since 2026-12-06 (below rules.ALPHA the paper's
    population cliff is excluded in the bracket); beside it before."""
    return _paper_p(fine.grid, fine.resolution, fine.falling, fine.seeds, fine.steepest, draws, seed, fine.value)


def _paper_p(grid: list[int], resolution: int, falling: bool, seeds: int, steepest: float, draws: int, seed: int,
             value: str = OOD) -> float:
    if math.isnan(steepest):
        return math.nan
    curve, sign = paper_curve(grid, resolution, falling, value), -1 if falling else 1
    x = paper_draws(np.random.default_rng(seed), (draws, seeds, len(curve)), curve, value)
    return float(np.mean((sign * block_changes(x)).max(axis=-1) <= steepest + 1e-12))


def cliff_power(grid: list[int], resolution: int, n_seeds: int, falling: bool = False, draws: int = POWER_DRAWS,
                n_perm: int = N_POWER_PERM, seed: int = 0, value: str = OOD) -> float:
    """The chance the cliff's rule holds on this grid with n_seeds seeds if the paper's cliff were the truth (seeds
    independent, `paper_curve` drawn by `paper_draws`)."""
    if len(grid) < 2 * BLOCK:
        return 0.0
    rng = np.random.default_rng(seed)
    curve, sign, hits = paper_curve(sorted(grid), resolution, falling, value), -1 if falling else 1, 0
    jump = JUMPS[value]
    for _ in range(draws):
        x = paper_draws(rng, (n_seeds, len(curve)), curve, value)
        steepest = float((sign * block_changes(x)).max())
        if steepest < jump:
            continue
        per_seed = sign * (x[:, -BLOCK:].mean(axis=1) - x[:, :BLOCK].mean(axis=1))
        hi = stats.bca_ci(per_seed, n_boot=999)[1]
        pp = _paper_p(sorted(grid), resolution, falling, n_seeds, steepest, N_POWER_PAPER, int(rng.integers(2**31)),
                      value)
        if decide_cliff(steepest, _steepest_p(x, steepest, sign, n_perm, rng), hi, pp, jump) == rules.HOLDS:
            hits += 1
    return hits / draws
