"""The onset sweep shared by the anchor-window claims (C4, C4b), the init-scale claims (C5, the explorer)
and the rate model's overlay (C10): one 25 % window at the protocol's λ at each onset of a grid, against no
weight decay, and where the mean final OOD accuracy crosses from chance towards reasoning.

`sweep_specs` lists the runs; `analyse` loads them and finds the edge (narrowing its bracket with
`edges.find_edge` when asked, which trains the onsets it visits); `gamma_sweep` does it at every γ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from critwin_lib import config, edges, protocol, stats
from critwin_lib.claims.core import CHANCE_BAND, PAPER_RESOLUTION, Spec, condition_table, fetch, tag
from critwin_lib.claims.core import window_lambda as _in_window  # its parameters here are named window_lambda
from critwin_lib.sizes import Size

REASONING_OOD = 0.61  # the paper's "+100 steps" level (C4): the edge is half-way from no weight decay to it


def sweep_specs(P: Size, seeds: list[int], gamma: float, proto: str, onsets: list[int], window_frac: float,
                window_lambda: float = 0.0) -> list[Spec]:
    """No weight decay (onset -1), then one window (`window_frac` of the run) at each onset, every seed; its λ is
    `window_lambda`, or the protocol's at 0."""
    lam = _in_window(proto, window_lambda)
    length = protocol.window_steps(P, 0.0, window_frac)[1]
    for o in onsets:
        if o + length > P.steps:
            raise config.ConfigError(f"onsets: a window at {o} ends after the run ({P.steps} steps)")
    wds = [(-1, config.WDSchedule.none())] + [(o, config.WDSchedule.window(o, length, lam))
                                              for o in onsets]
    return [({"protocol": proto, "onset": o, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=proto))
            for o, wd in wds for s in seeds]


def gamma_specs(P: Size, seeds: list[int], gammas: list[float], proto: str, onsets: list[int],
                window_frac: float) -> list[Spec]:
    """`sweep_specs` at every γ (labelled with it)."""
    return [({**lab, "gamma": g}, cfg) for g in gammas
            for lab, cfg in sweep_specs(P, seeds, g, proto, onsets, window_frac)]


@dataclass
class OnsetSweep:
    """One protocol's onset sweep: the no-weight-decay level N, its t_mem, the threshold θ = (N + 0.61) / 2,
    the coarse bracket of the first upward crossing (and of a downward one), the refined edge, and the
    transition width (fewest steps from an onset at chance to one at ≥ 0.61)."""

    protocol: str
    lam: float
    N: float
    t_mem_none: float
    theta: float
    resolution: int
    bracket: tuple[int, int] | None
    falling: tuple[int, int] | None
    edge: edges.Edge | None
    width: float
    per_run: pd.DataFrame
    history: pd.DataFrame

    def table(self) -> pd.DataFrame:
        """Per onset (-1: none): `condition_table` and the onset in units of t_mem."""
        t = condition_table(self.per_run, ["onset"]).sort_values("onset")
        t["onset_over_t_mem"] = t["onset"] / self.t_mem_none
        t.loc[t["onset"] < 0, "onset_over_t_mem"] = math.nan
        return t


def _first_crossing(means: pd.Series, theta: float, rising: bool) -> tuple[int, int] | None:
    pairs = zip(means.index, means.index[1:], strict=False)
    if rising:
        return next(((a, b) for a, b in pairs if means[a] < theta <= means[b]), None)
    return next(((a, b) for a, b in pairs if means[a] >= theta > means[b]), None)


def analyse(P: Size, seeds: list[int], gamma: float, proto: str, onsets: list[int], window_frac: float,
            results_dir: str, train_missing: bool, workers: int, refine: bool = True,
            window_lambda: float = 0.0) -> OnsetSweep:
    """An onset sweep of one protocol's window at equal λ (`sweep_specs`), its no-weight-decay baseline, and the onset
    edge: the first upward crossing of θ = (N + 0.61) / 2 between neighbouring onsets of the sweep, narrowed
    by bisection (with `refine`) to the paper's resolution scaled to the run (100 steps at 20k)."""
    resolution = max(1, round(PAPER_RESOLUTION * P.steps / 20_000))
    history, per_run = fetch(sweep_specs(P, seeds, gamma, proto, onsets, window_frac, window_lambda),
                             results_dir, train_missing, workers)
    none = per_run[per_run["onset"] == -1]
    N, t_mem_none = float(none["final_ood"].mean()), float(none["t_mem"].mean())
    theta = (N + REASONING_OOD) / 2
    coarse = per_run[per_run["onset"] >= 0].groupby("onset")["final_ood"].mean()
    bracket, falling = _first_crossing(coarse, theta, True), _first_crossing(coarse, theta, False)
    extra_hist, extra_runs = [], []

    def evaluate(on: list[int]) -> dict[int, float]:
        means = {o: float(coarse[o]) for o in on if o in coarse.index}
        todo = [o for o in on if o not in coarse.index]
        if todo:
            h, r = fetch(sweep_specs(P, seeds, gamma, proto, todo, window_frac, window_lambda)[len(seeds):],
                         results_dir, train_missing, workers)
            extra_hist.append(h)
            extra_runs.append(r)
            means.update(r.groupby("onset")["final_ood"].mean().to_dict())
        return means

    found = None
    if bracket is not None and refine:
        lo, hi = (edges.on_grid(x, resolution) for x in bracket)
        found = edges.find_edge(evaluate, lo, hi, theta, resolution)
    if extra_runs:
        per_run = pd.concat([per_run, *extra_runs], ignore_index=True)
        history = pd.concat([history, *extra_hist], ignore_index=True)
    means = per_run[per_run["onset"] >= 0].groupby("onset")["final_ood"].mean()
    width = edges.transition_width(means.index.tolist(), means.tolist(), N + CHANCE_BAND, REASONING_OOD)
    return OnsetSweep(proto, _in_window(proto, window_lambda), N, t_mem_none, theta, resolution, bracket,
                      falling, found, width, per_run, history)


@dataclass
class GammaSweep:
    """The onset sweep at every γ: one row per γ (`edges`: t_mem, N, θ, the edge ± its half-width, the best
    onset), a per-(γ, onset) table, every run and the mean OOD curves."""

    edges: pd.DataFrame
    table: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame


def gamma_conventions(gammas: list[float]) -> pd.DataFrame:
    """Each γ's weight std (γ·σ₀) and the same std in the precursor papers' exponent convention
    (std = d_model^-γ_exp), so their phase diagrams can be compared."""
    rows = []
    for g in gammas:
        m = config.ModelConfig(init_gamma=g, init_sigma0=protocol.SIGMA0)
        rows.append({"gamma": g, "std": m.init_std, "gamma_exponent": m.gamma_exponent})
    return pd.DataFrame(rows)


def gamma_sweep(P: Size, seeds: list[int], gammas: list[float], proto: str, onsets: list[int], window_frac: float,
                results_dir: str, train_missing: bool, workers: int, refine: bool = False) -> GammaSweep:
    """`analyse` at every γ. Without `refine` an edge is the coarse bracket's middle, ± half its width."""
    fetch(gamma_specs(P, seeds, gammas, proto, onsets, window_frac), results_dir, train_missing, workers)
    rows, runs, hists = [], [], []
    for g in gammas:
        a = analyse(P, seeds, g, proto, onsets, window_frac, results_dir, train_missing, workers, refine=refine)
        coarse = a.edge or (edges.Edge(*a.bracket, a.theta) if a.bracket is not None else None)
        edge, pm = (coarse.edge, coarse.uncertainty) if coarse else (math.nan, math.nan)
        swept = a.per_run[a.per_run["onset"] >= 0].groupby("onset")["final_ood"].mean()
        rows.append({"gamma": g, "t_mem": a.t_mem_none, "ood_none": a.N, "theta": a.theta, "edge": edge,
                     "edge_pm": pm, "edge_over_t_mem": edge / a.t_mem_none, "refined": a.edge is not None,
                     "closing": a.falling is not None, "best_onset": int(swept.idxmax()),
                     "best_onset_ood": float(swept.max())})
        runs.append(a.per_run.assign(gamma=g))
        hists.append(a.history.assign(gamma=g))
    per_run, history = pd.concat(runs, ignore_index=True), pd.concat(hists, ignore_index=True)
    return GammaSweep(edges=pd.DataFrame(rows).merge(gamma_conventions(gammas), on="gamma"),
                      table=condition_table(per_run, ["gamma", "onset"]).sort_values(["gamma", "onset"]),
                      per_run=per_run, curves=stats.mean_ci(history, ["gamma", "onset", "step"], "acc/test_ood"))


def edge_numbers(edges_df: pd.DataFrame) -> dict[str, float]:
    """Glue values per γ: edge_<γ>, edge_pm_<γ>, t_mem_<γ>."""
    out = {}
    for r in edges_df.to_dict("records"):
        out.update({f"edge_{tag(r['gamma'])}": r["edge"], f"edge_pm_{tag(r['gamma'])}": r["edge_pm"],
                    f"t_mem_{tag(r['gamma'])}": r["t_mem"]})
    return out


# ------------------------------------------------------------------ the edge of the reasoning share
EDGE_LEVEL = 0.5  # the onset edge: where half the seeds come to reason as the onset moves later
N_BOOT_EDGE = 2000


def first_rise(onsets: np.ndarray, shares: np.ndarray, level: float) -> float:
    """The first onset where the share rises through `level` (linear between neighbouring onsets); NaN if never."""
    for i in range(len(onsets) - 1):
        if shares[i] < level <= shares[i + 1]:
            return float(onsets[i] + (level - shares[i]) / (shares[i + 1] - shares[i]) * (onsets[i + 1] - onsets[i]))
    return math.nan


def last_fall(onsets: np.ndarray, shares: np.ndarray, level: float) -> float:
    """Where the share falls through `level` for good: between the last onset at or above it and the next, all
    later ones below (linear between the two); NaN if the share never reaches `level` or ends at or above it.
    A dip that recovers is not a fall."""
    above = [i for i, s in enumerate(shares) if s >= level]
    if not above or above[-1] == len(shares) - 1:
        return math.nan
    i = above[-1]
    return float(onsets[i] + (shares[i] - level) / (shares[i] - shares[i + 1]) * (onsets[i + 1] - onsets[i]))


@dataclass
class ShareEdge:
    """The onset edge of the reasoning share and its bootstrap over seeds (a seed keeps its runs at every
    onset): the edge on the data, the 95 % percentile interval of the edges found, and how often a resample
    has one at all."""

    level: float
    edge: float
    lo: float
    hi: float
    found: float
    shares: pd.Series  # reasoning share per onset
    falling: bool = False  # the edge where the share falls through the level (the window closing), not rises

    def text(self) -> str:
        way = f"falls through {self.level:g} for good" if self.falling else f"rises through {self.level:g}"
        if math.isnan(self.edge):
            return f"no onset where the reasoning share {way} ({self.found:.0%} of resamples over seeds have one)"
        return (f"the reasoning share {way} at onset {self.edge:.0f} (95 % bootstrap "
                f"interval {self.lo:.0f}–{self.hi:.0f}; an edge in {self.found:.0%} of resamples over seeds)")


def share_edge(per_run: pd.DataFrame, level: float = EDGE_LEVEL, n_boot: int = N_BOOT_EDGE, seed: int = 0,
               falling: bool = False) -> ShareEdge:
    """`per_run`: window runs with onset, seed and fate; seeds missing at some onset are left out. `falling`:
    where the share falls through `level` for good instead (`last_fall`: where a window placed later stops
    working)."""
    cross = last_fall if falling else first_rise
    wide = per_run.assign(r=per_run["fate"] == "reasoning").pivot_table(
        index="seed", columns="onset", values="r", aggfunc="first").dropna().astype(float)
    grid = wide.columns.to_numpy(float)
    shares = wide.mean()
    edge = cross(grid, shares.to_numpy(), level)
    rng = np.random.default_rng(seed)
    boot = wide.to_numpy()[rng.integers(0, len(wide), (n_boot, len(wide)))].mean(axis=1)
    found = np.array([cross(grid, row, level) for row in boot])
    ok = found[~np.isnan(found)]
    lo, hi = (float(np.quantile(ok, 0.025)), float(np.quantile(ok, 0.975))) if len(ok) else (math.nan, math.nan)
    return ShareEdge(level, edge, lo, hi, float(len(ok) / n_boot), shares, falling)


@dataclass
class EdgeShift:
    """Two protocols' onset sweeps on the same seeds: how far the end of fitting (mean t_mem of the seeds'
    no-weight-decay runs) and the reasoning share's onset edge move from protocol a to b, with a bootstrap over
    seeds (a seed keeps all its runs in both): 95 % intervals of the t_mem shift and of the ratio
    edge shift / t_mem shift, and how often a resample finds an edge in each protocol."""

    t_shift: float
    t_lo: float
    t_hi: float
    edges: tuple[float, float]
    found: tuple[float, float]
    ratio: float
    ratio_lo: float
    ratio_hi: float


def edge_shift(runs: pd.DataFrame, a: str, b: str, level: float = EDGE_LEVEL, n_boot: int = N_BOOT_EDGE,
               seed: int = 0) -> EdgeShift:
    """`runs`: both protocols' sweeps (protocol, onset (-1: no weight decay), seed, fate, t_mem); seeds missing
    anywhere are left out."""
    wide, grids, tm = {}, {}, {}
    for p in (a, b):
        r = runs[runs["protocol"] == p]
        w = r[r["onset"] >= 0].assign(x=r["fate"] == "reasoning").pivot_table(
            index="seed", columns="onset", values="x", aggfunc="first").astype(float)
        wide[p], grids[p] = w, w.columns.to_numpy(float)
        tm[p] = r[r["onset"] < 0].set_index("seed")["t_mem"]
    seeds = sorted(set(wide[a].dropna().index) & set(wide[b].dropna().index) & set(tm[a].dropna().index)
                   & set(tm[b].dropna().index))
    if not seeds:  # e.g. no seed fits the training set without weight decay: nothing to compare
        nan = math.nan
        return EdgeShift(nan, nan, nan, (nan, nan), (nan, nan), nan, nan, nan)
    X = {p: wide[p].loc[seeds].to_numpy() for p in (a, b)}
    T = {p: tm[p].loc[seeds].to_numpy(float) for p in (a, b)}

    def stat(idx: np.ndarray) -> tuple[float, float, float]:
        e = [first_rise(grids[p], X[p][idx].mean(axis=0), level) for p in (a, b)]
        return e[0], e[1], float(T[b][idx].mean() - T[a][idx].mean())

    e_a, e_b, dt = stat(np.arange(len(seeds)))
    rng = np.random.default_rng(seed)
    boot = np.array([stat(rng.integers(0, len(seeds), len(seeds))) for _ in range(n_boot)])
    both = ~np.isnan(boot[:, 0]) & ~np.isnan(boot[:, 1]) & (boot[:, 2] != 0)
    ratios = (boot[both, 1] - boot[both, 0]) / boot[both, 2]
    r_lo, r_hi = (float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975))) if len(ratios) else \
        (math.nan, math.nan)
    t_lo, t_hi = (float(np.nanquantile(boot[:, 2], 0.025)), float(np.nanquantile(boot[:, 2], 0.975)))
    return EdgeShift(dt, t_lo, t_hi, (e_a, e_b), tuple(float(np.mean(~np.isnan(boot[:, i]))) for i in (0, 1)),
                     (e_b - e_a) / dt if dt else math.nan, r_lo, r_hi)
