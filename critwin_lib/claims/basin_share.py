"""C6 and C7 on *basin shares*, the rules of the three-window design (registered 2026-12-06, before its runs):
a seed's basin share at a γ is the share of the placed windows under which it reasons, so the rules compare each
seed with itself across γ and no single window's timing decides (the window moves with γ, C5). Here: the shares,
the two rules (one-sided sign-flip tests over seeds, C7's two parts one Holm family), the design's power at the
paper's shares and at ours, the page's basin table, and where the fate rule's "training set fitted" decides.
`basin` builds the page from them.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import stats
from critwin_lib.claims import onsets, rules
from critwin_lib.claims.core import tag

C6_GAMMAS = (0.5, 1.1)  # the paper's comparison: 8/12 at γ = 0.5, 12/12 at γ = 1.1
C6_PAPER_SHARES = (8 / 12, 12 / 12)  # the paper's effect, for the power of the design
POOLED_POWER_DRAWS = 2_000  # each draw runs a sign-flip test and a bootstrap
C7_PARTS = ("beats the smallest γ", "beats the largest γ")
NONE = "none"  # the window name of a run without weight decay (the pooled design's reference at each γ)

def seed_shares(runs: pd.DataFrame) -> pd.DataFrame:
    """Per seed (rows) and γ (columns): the share of the windows in which the seed reasons, its *basin share*
    (`runs`: window runs with window, gamma, seed, fate; a seed that lacks one of the windows at a γ is left out
    there)."""
    ok = runs[runs["window"] != NONE].assign(r=lambda f: (f["fate"] == "reasoning").astype(float))
    wide = ok.pivot_table(index=["seed", "gamma"], columns="window", values="r", aggfunc="first")
    return wide.dropna().mean(axis=1).unstack("gamma").sort_index(axis=1)


@functools.lru_cache(maxsize=4096)
def _flip(d: tuple[float, ...]) -> tuple[float, float]:
    return stats.sign_flip_test(d, "greater"), stats.sign_flip_test(d, "less")


def _paired(d: np.ndarray) -> dict[str, Any]:
    """A seed-level difference's mean, bootstrap 95 % interval and one-sided sign-flip p's (either way)."""
    d = d[~np.isnan(d)]
    if not len(d):
        return {"diff": math.nan, "lo": math.nan, "hi": math.nan, "p": math.nan, "p_other": math.nan, "n": 0}
    lo, hi = stats.bootstrap_ci(d)
    p, p_other = _flip(tuple(sorted(np.round(d, 9).tolist())))  # the test is blind to seed order: cache on it
    return {"diff": float(d.mean()), "lo": lo, "hi": hi, "p": p, "p_other": p_other, "n": int(len(d))}


def c06_pooled(shares: pd.DataFrame) -> dict[str, Any]:
    """C6 on basin shares (`seed_shares`): per seed, the share at γ 1.1 minus the share at γ 0.5. Holds when a
    one-sided sign-flip test over seeds finds it above 0 at α; rejected when it finds it below 0, or when the
    bootstrap 95 % interval of its mean lies below C6_GAP (the data exclude the paper's gap)."""
    small, ref = C6_GAMMAS
    t = _paired((shares[ref] - shares[small]).to_numpy(float) if {small, ref} <= set(shares.columns)
                else np.array([]))
    state = rules.part_beats(t["p"], t["p_other"]) if t["n"] else rules.UNDECIDED
    if state == rules.UNDECIDED and t["n"] and t["hi"] < rules.C6_GAP:
        state = rules.REJECTED
    return {**t, "state": state}


def c07_pooled(shares: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """C7's two parts on basin shares: per seed, the mean share over the moderate γ (rules.C7_RANGE) minus the
    share at the smallest γ, and minus the share at the largest. One-sided sign-flip tests over seeds, the two
    parts one Holm family (one rejected part decides): a part holds at an adjusted p < α the paper's way and is
    rejected at one the other way; undecided when the extreme is itself moderate or there is no moderate γ."""
    lo, hi = rules.C7_RANGE
    mid_cols = [g for g in shares.columns if lo <= g <= hi]
    mid = shares[mid_cols].mean(axis=1, skipna=False) if mid_cols else None
    parts = {}
    for label, g in zip(C7_PARTS, (shares.columns.min(), shares.columns.max()), strict=True):
        usable = mid is not None and not lo <= g <= hi
        parts[label] = {**_paired((mid - shares[g]).to_numpy(float) if usable else np.array([])), "gamma": float(g)}
    family = rules.holm_family({k: (v["p"], v["p_other"]) for k, v in parts.items()})
    for k, v in parts.items():
        v["state"], v["p_holm"], v["p_other_holm"] = family[k] if v["n"] else (rules.UNDECIDED, math.nan, math.nan)
    return parts


def pooled_power(n: int, windows: int = 3, shares: tuple[float, float] = C6_PAPER_SHARES,
                 draws: int = POOLED_POWER_DRAWS, agree: bool = False, seed: int = 0) -> float:
    """The chance that C6's pooled rule says "reproduced" with n seeds and `windows` windows per γ if the paper's
    shares held at every window: each run reasons with its γ's share, the windows of a seed independently, or
    (`agree`) all of a seed's windows together (a seed reasons everywhere or nowhere: the least the pooling can
    gain). The two γ's runs of a seed are drawn independently."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(draws):
        cols = {}
        for g, s in zip(C6_GAMMAS, shares, strict=True):
            draw = rng.random((n, 1 if agree else windows)) < s
            cols[g] = draw.mean(axis=1)
        hits += c06_pooled(pd.DataFrame(cols))["state"] == rules.HOLDS
    return hits / draws


def observed_power(runs: pd.DataFrame, draws: int = 500, seed: int = 0) -> dict[str, float]:
    """How often the pooled rules say "reproduced" on designs like this one drawn from the observed seeds: seeds
    resampled with all their runs (the arms stay paired), C6's and C7's verdicts read on each draw."""
    shares = seed_shares(runs)
    rng = np.random.default_rng(seed)
    n, c6, c7 = len(shares), 0, 0
    for _ in range(draws):
        s = shares.iloc[rng.integers(0, n, n)].reset_index(drop=True)
        c6 += c06_pooled(s)["state"] == rules.HOLDS
        c7 += rules.combine({k: v["state"] for k, v in c07_pooled(s).items()}) == "reproduced"
    return {"c6": c6 / draws, "c7": c7 / draws}


def pooled_table(runs: pd.DataFrame, gammas: list[float]) -> pd.DataFrame:
    """Per γ: the mean basin share over seeds with its bootstrap 95 % interval, and the reasoning seeds under each
    window (columns `k <window>`) and without weight decay (`k none`, when run)."""
    shares = seed_shares(runs)
    rows = []
    for g in shares.columns:
        v = shares[g].dropna().to_numpy(float)
        lo, hi = stats.bootstrap_ci(v)
        at = runs[runs["gamma"] == g]
        counts = {f"k {w}": int((f["fate"] == "reasoning").sum()) for w, f in at.groupby("window", sort=False)}
        rows.append({"gamma": float(g), "seeds": len(v), "share": float(v.mean()) if len(v) else math.nan,
                     "share_lo": lo, "share_hi": hi, **counts})
    return pd.DataFrame(rows).merge(onsets.gamma_conventions(gammas), on="gamma")


def unfitted(runs: pd.DataFrame) -> dict[str, Any]:
    """Where the fate rule's "training set fitted" bites: the window (not none) with the most runs that end unfitted,
    its count of them and of its runs, and the same at C6's two γ (`unfitted_*` numbers; none when every run
    fitted)."""
    lost = runs[(runs["window"] != NONE) & (runs["fate"] == "not fitted")]
    if lost.empty:
        return {}
    w = lost["window"].value_counts().idxmax()
    mine = runs[runs["window"] == w]
    out = {"unfitted_window": w, "unfitted_k": int((mine["fate"] == "not fitted").sum()), "unfitted_n": len(mine)}
    for g in C6_GAMMAS:
        at = mine[mine["gamma"] == g]
        out.update({f"unfitted_k_{tag(g)}": int((at["fate"] == "not fitted").sum()), f"unfitted_n_{tag(g)}": len(at)})
    return out
