"""Deciding a claim on fates over seeds (spec/statistics.md): how many seeds reach each fate per condition
(with exact intervals), whether one condition beats or matches another on the same seeds, and the power
of a design against the paper's effect.

A run's fate is `core.fate`; "reasoning" is the fate the claims count. Conditions of one page share their
seeds (same init, same batch order), so comparisons are paired by seed: exact McNemar tests for "beats"
and Tango's score interval of the difference of shares for "matches" (TOST at 90 %).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import protocol, sequential, stats
from critwin_lib.claims import rules
from critwin_lib.claims.core import FATES, fate

POWER_DRAWS = 10_000
METRICS = {"final": "final_ood", "max over training": "max_ood", "when the window closes": "close_ood"}
FITTED = "final"  # the rule's own row: reasoning needs the training set fitted (since 2026-12-06 on every page)
REASONS_FITTED = "final OOD > 0.5, training set fitted"  # the fate rule's reasoning, as a sensitivity row says it
WHATEVER_FIT = "final (fitted or not)"  # the rule before 2026-12-06, a sensitivity row: OOD accuracy alone
CHANCE_OOD = 0.15  # the paper's chance level on (4, 3)


def paper_share(mean_ood: float | np.ndarray, chance: float = CHANCE_OOD) -> float | np.ndarray:
    """The share of reasoning seeds a paper's mean OOD accuracy implies when seeds are bimodal (a seed reasons,
    OOD ≈ 1, or sits at chance): (mean − chance) / (1 − chance), within [0, 1]; elementwise on an array."""
    share = np.clip((np.asarray(mean_ood, float) - chance) / (1 - chance), 0.0, 1.0)
    return float(share) if share.ndim == 0 else share


def with_fates(per_run: pd.DataFrame, ood: str = "final_ood", require_fit: bool = True) -> pd.DataFrame:
    """`per_run` with a `fate` column read from the OOD accuracy column `ood` (final, max, at window close);
    reasoning needs the training set fitted unless `require_fit` is False (`core.fate`)."""
    return per_run.assign(fate=[fate(r, ood, require_fit) for _, r in per_run.iterrows()])


def reasons(per_run: pd.DataFrame, mask: pd.Series) -> pd.Series:
    """Per seed (the index), whether the run of the selected condition reasons."""
    sel = per_run[mask]
    return pd.Series((sel["fate"] == "reasoning").to_numpy(), index=sel["seed"].to_numpy()).sort_index()


def final_ood(per_run: pd.DataFrame, mask: pd.Series) -> pd.Series:
    """Per seed (the index), the final OOD accuracy of the selected condition's run (a size in the paper's metric
    reads it)."""
    sel = per_run[mask]
    return pd.Series(sel["final_ood"].to_numpy(float), index=sel["seed"].to_numpy()).sort_index()


def share_table(per_run: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per condition: seeds, seeds of each fate, the share that reasons with its exact (Clopper–Pearson) 95 %
    interval, and the mean OOD accuracy with a BCa interval (NaN below 8 seeds)."""
    rows = []
    for keys, g in per_run.groupby(by, sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        n, k = len(g), int((g["fate"] == "reasoning").sum())
        lo, hi = stats.binomial_ci(k, n)
        m_lo, m_hi = stats.bca_ci(g["final_ood"].to_numpy())
        rows.append({**dict(zip(by, keys, strict=True)), "seeds": n,
                     **{f.replace(" ", "_"): int((g["fate"] == f).sum()) for f in FATES},
                     "share": k / n if n else float("nan"), "share_lo": lo, "share_hi": hi,
                     "final_ood": float(g["final_ood"].mean()), "ood_lo": m_lo, "ood_hi": m_hi})
    return pd.DataFrame(rows)


@dataclass
class Comparison:
    """One part of a claim: `a` beats or matches `b` on the seeds they share."""

    part: str  # what the part says, e.g. "window beats none"
    test: str  # "beats" (exact McNemar) or "matches" (TOST on Tango's 90 % interval, margin ± rules.MARGIN)
    n: int
    k_a: int
    k_b: int
    diff: float  # share(a) − share(b)
    lo: float  # its interval: 95 % for "beats", 90 % for "matches"
    hi: float
    p: float  # beats: one-sided p that a > b; matches: the larger of the two one-sided TOST p-values (approx.)
    state: str  # rules.HOLDS, REJECTED or UNDECIDED
    b: int = 0  # discordant seeds: a reasons and b does not
    c: int = 0  # ... and the other way
    least: float = math.nan  # "size": the paper's size the difference's interval must reach
    level: float = stats.LEVEL  # the interval's two-sided level (a look of a sequential design holds it higher)
    alpha: float = rules.ALPHA  # "beats": the one-sided level its p is held to

    def text(self) -> str:
        if self.test in ("ratio", "ood difference"):  # a size in the paper's metric, mean OOD over seeds
            what = "ratio of mean OOD" if self.test == "ratio" else "difference of mean OOD"
            unit = "×" if self.test == "ratio" else ""
            fmt = (lambda v: f"{v:.2f}") if self.test == "ratio" else (lambda v: f"{v:+.2f}")
            return (f"{self.part}: {what} {fmt(self.diff)}{unit} over {self.n} seeds, {100 * self.level:.4g} % paired "
                    f"bootstrap interval [{fmt(self.lo)}, {fmt(self.hi)}], the paper's ≥ {fmt(self.least)}{unit} → "
                    f"{self.state}{self._short_of_size()}")
        ci = f"{100 * self.level:.4g} % interval [{self.lo:+.2f}, {self.hi:+.2f}]"
        test = {"beats": f"one-sided exact McNemar p {self.p:.3f}" + (
                    f" (held to {self.alpha:.2g})" if self.alpha != rules.ALPHA else ""),
                "matches": f"margin ± {rules.MARGIN:g}", "size": f"the paper's size ≥ {self.least:+.2f}"}[self.test]
        return (f"{self.part}: {self.k_a}/{self.n} vs {self.k_b}/{self.n} seeds, difference {self.diff:+.2f}, {ci}, "
                f"{test} → {self.state}{self._short_of_size()}")

    def _short_of_size(self) -> str:
        """A size part that holds on its interval alone says so: the observed difference is below the paper's."""
        if self.test in ("size", "ratio", "ood difference") and self.state == rules.HOLDS and self.diff < self.least:
            return " (the observed difference is below the paper's size; only its interval reaches it)"
        return ""


Seeds = pd.Series | np.ndarray  # per seed, whether the run reasons (arrays: already aligned by seed)


def _aligned(a: Seeds, b: Seeds) -> tuple[np.ndarray, np.ndarray]:
    """The two conditions on the seeds they share."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a, b
    common = a.index.intersection(b.index)
    return a.loc[common].to_numpy(bool), b.loc[common].to_numpy(bool)


@functools.lru_cache(maxsize=65536)
def _mcnemar(b: int, c: int) -> tuple[float, float]:
    return stats.mcnemar_exact(b, c, "greater"), stats.mcnemar_exact(b, c, "less")


@functools.lru_cache(maxsize=65536)
def _beats(b: int, c: int, n: int, level: float) -> tuple[float, float, float, float, float]:
    return *_mcnemar(b, c), *stats.tango_ci(b, c, n, level)


@dataclass(frozen=True)
class Levels:
    """The levels a page's tests are held to: the fixed-sample ones by default; a look of a sequential design
    holds them to its nominal levels (`look_levels`)."""

    beats: float = rules.ALPHA  # one-sided α of a "beats" test
    interval: float = stats.LEVEL  # two-sided level of a "beats" part's interval (and so of its size part)
    matches: float = 0.90  # two-sided level of a "matches" part's interval (TOST at (1 − level) / 2 a side)


FIXED = Levels()


def look_levels(looks: list[int], k: int) -> Levels:
    """Look k (0-based) of a design with `looks`: every test held to its O'Brien–Fleming-type nominal level, so
    that over all looks a "beats" test keeps α = 0.05 and each side of an interval (1 − level) / 2."""
    a_beats = sequential.nominal_levels(looks, rules.ALPHA)[k]
    a_side = sequential.nominal_levels(looks, (1 - stats.LEVEL) / 2)[k]
    return Levels(beats=a_beats, interval=1 - 2 * a_side, matches=1 - 2 * a_beats)


def beats_counts(b: int, c: int) -> tuple[str, float, float]:
    """The "beats" test on discordant counts alone (b pairs where only a succeeds, c where only b does), the
    same exact McNemar test as `beats` (and so the exact sign test of b ups against c downs): the part's state,
    the one-sided p that a is above b and the one-sided p that it is below."""
    p_more, p_less = _mcnemar(b, c)
    return rules.part_beats(p_more, p_less), p_more, p_less


def beats(part: str, a: Seeds, b: Seeds, levels: Levels = FIXED) -> Comparison:
    """"a beats b": a reasons on more seeds than b, paired by seed (exact McNemar, one-sided, α = 0.05 unless
    `levels` says otherwise), with Tango's interval of the difference of shares."""
    x, y = _aligned(a, b)
    n, bb, cc = len(x), int((x & ~y).sum()), int((~x & y).sum())
    p_more, p_less, d, lo, hi = _beats(bb, cc, n, levels.interval)
    return Comparison(part, "beats", n, int(x.sum()), int(y.sum()), d, lo, hi, p_more,
                      rules.part_beats(p_more, p_less, levels.beats), bb, cc, level=levels.interval,
                      alpha=levels.beats)


def reaches(part: str, won: Comparison, least: float) -> Comparison:
    """"a beats b by the paper's size", on a "beats" comparison: its 95 % interval of the difference of shares
    reaches `least` (holds) or lies below it (rejected: the data exclude the paper's size)."""
    return dataclasses.replace(won, part=part, test="size", p=math.nan, state=rules.part_reaches(won.hi, least),
                               least=least)


SIZE_BOOT = 4000  # paired bootstrap resamples of a size in mean OOD on the data
SIM_BOOT = 300  # ... inside a power simulation, thousands of designs (the interval's ends move by about 0.01)


def ood_of(reasons: Seeds, chance: float = CHANCE_OOD) -> Seeds:
    """Per seed, the OOD accuracy a bimodal seed has (1 when it reasons, chance otherwise): what a power simulation,
    which draws fates, feeds a size read in mean OOD (as `paper_share` reads the paper's means the other way)."""
    return reasons * (1.0 - chance) + chance


def mean_size(part: str, a: Seeds, b: Seeds, least: float, kind: str = "ratio", level: float = stats.LEVEL,
              boots: int = SIZE_BOOT, seed: int = 0) -> Comparison:
    """"a beats b by the paper's size" in the paper's own metric, mean final OOD accuracy over seeds: the ratio
    mean(a) / mean(b) (`kind` "ratio") or the difference (`kind` "ood difference"), with a paired bootstrap
    percentile interval over seeds at `level` (a resampled seed keeps both its runs). Holds when the interval reaches
    `least`, rejected when it lies below it (the data exclude the paper's size)."""
    x, y = (np.asarray(v, float) for v in _aligned_values(a, b))
    n = len(x)
    stat = (lambda u, v: u.mean(-1) / v.mean(-1)) if kind == "ratio" else (lambda u, v: u.mean(-1) - v.mean(-1))
    if n == 0:
        return Comparison(part, kind, 0, 0, 0, math.nan, math.nan, math.nan, math.nan, rules.UNDECIDED, least=least,
                          level=level)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = float(stat(x, y))
        idx = np.random.default_rng(seed).integers(0, n, (boots, n))
        dist = stat(x[idx], y[idx])
    dist = np.where(np.isnan(dist), np.inf, dist)  # 0 / 0: no ratio to read; counts as unbounded
    lo, hi = (float(q) for q in np.quantile(dist, [(1 - level) / 2, (1 + level) / 2], method="inverted_cdf"))
    return Comparison(part, kind, n, 0, 0, est, lo, hi, math.nan, rules.part_reaches(hi, least), least=least,
                      level=level)


def _aligned_values(a: Seeds, b: Seeds) -> tuple[np.ndarray, np.ndarray]:
    """Two per-seed series (any values) on the seeds they share."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a, b
    common = a.index.intersection(b.index)
    return a.loc[common].to_numpy(), b.loc[common].to_numpy()


def matches(part: str, a: Seeds, b: Seeds, margin: float = rules.MARGIN, levels: Levels = FIXED) -> Comparison:
    """"a matches b": the 90 % interval (or `levels.matches`) of the difference of shares lies within ± margin
    (TOST, paired)."""
    x, y = _aligned(a, b)
    n, bb, cc = len(x), int((x & ~y).sum()), int((~x & y).sum())
    d, lo, hi = stats.tango_ci(bb, cc, n, levels.matches)
    return Comparison(part, "matches", n, int(x.sum()), int(y.sum()), d, lo, hi, float("nan"),
                      rules.part_matches(lo, hi, margin), bb, cc, level=levels.matches)


def draw_fates(rng: np.random.Generator, shares: dict[str, float], shape: tuple[int, int], paired: bool = False
               ) -> dict[str, np.ndarray]:
    """Simulated seeds (shape: designs × seeds) reasoning with each condition's share: independently across the
    conditions, or (`paired`) from one uniform draw per seed, so that a seed reasoning under a condition of
    smaller share reasons under every larger one. The arms of a design share their seeds (same init and batch
    order), which makes their fates agree more than independent draws do; `paired` is the most agreement the
    shares allow, so the two bound the power between them."""
    if paired:
        u = rng.random(shape)
        return {c: u < p for c, p in shares.items()}
    return {c: rng.random(shape) < p for c, p in shares.items()}


def power(decide: Callable[[dict[str, Seeds]], str], shares: dict[str, float], n: int,
          draws: int = POWER_DRAWS, seed: int = 0, paired: bool = False) -> float:
    """The chance that `decide` (a page's rule on per-seed reasoning, by condition) says "reproduced" when each
    condition's seeds reason with the paper's share (independently, or `paired`: `draw_fates`): the power of n
    seeds per condition."""
    rng = np.random.default_rng(seed)
    draw = draw_fates(rng, shares, (draws, n), paired)
    return sum(decide({c: v[i] for c, v in draw.items()}) == "reproduced" for i in range(draws)) / draws


def seeds_for_power(decide: Callable[[dict[str, Seeds]], str], shares: dict[str, float], target: float = 0.8,
                    candidates: tuple[int, ...] = (8, 12, 16, 24, 32, 48, 64), draws: int = 2000) -> float:
    """The fewest seeds per condition among `candidates` at which the design reaches `target` power (NaN: none)."""
    return next((float(n) for n in candidates if power(decide, shares, n, draws) >= target), math.nan)


Decide = Callable[[dict[str, Seeds]], tuple[str, dict[str, Comparison]]]


def ood_at(history: pd.DataFrame, per_run: pd.DataFrame, steps: list[int]) -> list[float]:
    """Each run's OOD accuracy at the first evaluation at or after its step in `steps` (e.g. when its window
    closes); NaN past the end."""
    h = history.drop_duplicates(["key", "step"])[["key", "step", "acc/test_ood"]].sort_values("step")
    want = pd.DataFrame({"key": per_run["key"].to_numpy(), "step": steps, "i": range(len(per_run))})
    got = pd.merge_asof(want.sort_values("step"), h, on="step", by="key", direction="forward")
    return got.sort_values("i")["acc/test_ood"].astype(float).tolist()


def by_protocol_and_metric(per_run: pd.DataFrame) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(protocol, OOD metric, its runs with fates read under that metric) for every row of a sensitivity table:
    each metric of `METRICS` (reasoning with the training set fitted, the rule), then final OOD with reasoning read
    from OOD accuracy alone (`WHATEVER_FIT`, the rule before 2026-12-06)."""
    for proto in per_run["protocol"].unique():
        runs = per_run[per_run["protocol"] == proto]
        for metric, col in METRICS.items():
            yield proto, metric, with_fates(runs, col)
        yield proto, WHATEVER_FIT, with_fates(runs, "final_ood", require_fit=False)


def sensitivity(per_run: pd.DataFrame, main: str, select: Callable[[pd.DataFrame], dict[str, pd.Series]],
                decide: Decide, onsets: dict[Any, Callable[[pd.DataFrame], dict[str, pd.Series]]] | None = None,
                require_fit: bool = True) -> pd.DataFrame:
    """The verdict the same rule gives under each protocol × metric, and (page's protocol, final OOD, reasoning
    fitted where the page's rule requires it) under each alternative selection in `onsets` ({label: select})."""
    rows = []
    for proto, metric, runs in by_protocol_and_metric(per_run):
        verdict, parts = decide(select(runs))
        rows.append({"protocol": proto, "metric": metric, "onset": "as the claim", "seeds": _seeds(parts),
                     "verdict": verdict, "parts": "; ".join(f"{k}: {c.state}" for k, c in parts.items())})
    for label, sel in (onsets or {}).items():
        runs = with_fates(per_run[per_run["protocol"] == main], require_fit=require_fit)
        verdict, parts = decide(sel(runs))
        rows.append({"protocol": main, "metric": "final", "onset": label, "seeds": _seeds(parts),
                     "verdict": verdict, "parts": "; ".join(f"{k}: {c.state}" for k, c in parts.items())})
    return pd.DataFrame(rows)


def _seeds(parts: dict[str, Comparison]) -> int:
    return min(c.n for c in parts.values()) if parts else 0


def row_verdict(table: pd.DataFrame, protocol: str, metric: str) -> str:
    """The verdict of a sensitivity table's row for `protocol` and `metric` at the claim's own onset."""
    row = table[(table["protocol"] == protocol) & (table["metric"] == metric) & (table["onset"] == "as the claim")]
    return str(row["verdict"].iloc[0])


def _rows_in_words(rows: pd.DataFrame) -> str:
    """Sensitivity rows as one phrase: a metric's rows at several onsets merged ("final at onsets 0, 800 and
    1600"), the rows without an onset sweep by their metric alone."""
    said = []
    for metric, at in rows.groupby("metric", sort=False):
        plain = at[at["onset"] == "as the claim"]
        onsets = [str(o) for o in at["onset"] if o != "as the claim"]
        said += [metric] * len(plain)
        if onsets:
            listed = onsets[0] if len(onsets) == 1 else f"{', '.join(onsets[:-1])} and {onsets[-1]}"
            said.append(f"{metric} at onset{'s' if len(onsets) > 1 else ''} {listed}")
    return ", ".join(said)


def headline(table: pd.DataFrame, verdict: str) -> str:
    """Whether the headline verdict holds across the sensitivity table, or where it flips: the flipped rows grouped
    by protocol ("every row" where all of a protocol's rows flip alike), within a protocol by the verdict they flip
    to unless all flips share one, which is then said once, and a metric's onsets merged (`_rows_in_words`)."""
    flips = table[table["verdict"] != verdict]
    if flips.empty:
        return f"the verdict holds across all {len(table)} rows of the sensitivity table"
    alike = flips["verdict"].nunique() == 1
    groups = []
    for name, rows in flips.groupby("protocol", sort=False):
        whole = len(rows) > 1 and len(rows) == (table["protocol"] == name).sum() and rows["verdict"].nunique() == 1
        if whole:
            groups.append(f"{name} (every row{'' if alike else ': to ' + rows['verdict'].iloc[0]})")
        elif alike:
            groups.append(f"{name} ({_rows_in_words(rows)})")
        else:
            groups.append(f"{name} (" + "; ".join(f"to {v}: {_rows_in_words(r)}" for v, r in
                                                  rows.groupby("verdict", sort=False)) + ")")
    to = (f", {'each ' if len(flips) > 1 else ''}to {flips['verdict'].iloc[0]}" if alike else "")
    return protocol.in_words(f"the verdict flips in {len(flips)} of {len(table)} rows{to}: {'; '.join(groups)}")


def part_numbers(prefix: str, parts: dict[str, Comparison]) -> dict[str, Any]:
    """Each part's state, difference, interval, p and text, and its interval's level in percent (a sequential
    look's, not always 90 or 95), keyed '<prefix><part>_<what>'."""
    out = {}
    for key, c in parts.items():
        tag = f"{prefix}{key.replace(' ', '_')}"
        out.update({f"{tag}_state": c.state, f"{tag}_diff": c.diff, f"{tag}_lo": c.lo, f"{tag}_hi": c.hi,
                    f"{tag}_p": c.p, f"{tag}_level_pct": 100 * c.level, f"{tag}_text": c.text()})
    return out


def how_the_rest_end(table: pd.DataFrame, conditions: list[str]) -> str:
    """How the seeds that do not reason end, per condition of a `share_table` (with a `final_train` column):
    a rule that counts reasoning seeds calls a wiped model and a memorizing one alike "at chance", and a
    reader should see which one a condition's seeds are."""
    t = table.set_index("condition")
    parts = []
    for c in conditions:
        r = t.loc[c]
        rest = int(r["seeds"]) - int(r["reasoning"])
        counts = {f: int(r[f.replace(" ", "_")]) for f in FATES[1:]}  # share_table's column names
        kinds = [f"{k} {f}" for f, k in counts.items() if k]
        parts.append(f"{c}: {rest} of {int(r['seeds'])} do not reason"
                     + (f" ({', '.join(kinds)}; mean final training accuracy of all its seeds "
                        f"{float(r['final_train']):.2f})" if rest else ""))
    return "; ".join(parts)
