"""Every claim's verdict rule, as a pure function of the numbers its page computes.

The rules are stated on each page before its runs; here they are code, in one place, each with a unit
test that reaches every verdict it can give (tests/test_rules.py). Thresholds are named constants.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from critwin_lib.claims.core import CHANCE_BAND

WORKS = 0.25  # a weight-decay schedule "works" when its mean final OOD is at least this above no weight decay
MATCHES = 0.10  # C1: the window "matches" full-run weight decay when it is at most this below it
C2_FACTOR = 5  # C2: the paper's 5-9x, lower end
C2_CLEARLY = 0.15  # C2 partly: middle clearly above early
EDGE_WIDTH = 4  # C4: a sharp switch takes at most this many resolution steps
C6_GAP = 0.25  # C6: the paper's gap is 4 of 12 seeds (0.33); at 8 seeds, at least 2
C7_RANGE = (0.7, 1.1)  # C7: the paper's moderate γ
C8_FAST = 2  # C8: constant weight decay groks at least this many times faster than the windows
C9_SOLVED = 0.10  # C9: a condition "reaches the compositional solution" from this test exact match up
C10_FLAT = 0.5  # C10: an exponent is 0 (Θ(1)) or 2 (Θ(γ²)) when its interval lies within ± this of it
C4B_FOLLOW = 0.5  # C4b: the edge moves by at least this fraction of the shift of t_mem
C13_AGREE = 3  # C13: metrics whose interval agrees with the predicted sign, for "reproduced"


# ---------------------------------------------------------------------- parts of a claim, on fates over seeds
# A claim is split into parts (C1: "the window beats no weight decay", "the window matches full-run weight
# decay"); each part holds, is rejected, or is undecided by the seeds, and `combine` turns the parts into one
# of the four verdicts (spec/statistics.md).
HOLDS, REJECTED, UNDECIDED = "holds", "rejected", "undecided"
ALPHA = 0.05
MARGIN = 0.25  # equivalence margin on a difference of fate shares ("matches", "at chance as")


def part_beats(p_greater: float, p_less: float, alpha: float = ALPHA) -> str:
    """"A beats B" from two one-sided tests over seeds: holds when A > B at α, rejected when B > A at α."""
    if p_greater < alpha:
        return HOLDS
    return REJECTED if p_less < alpha else UNDECIDED


def part_matches(lo: float, hi: float, margin: float = MARGIN, target: float = 0.0) -> str:
    """"It is `target`" (by default: A matches B, a difference of 0) from an interval [lo, hi], two one-sided
    tests (TOST) when it is the 90 % interval: holds when it lies strictly inside target ± margin, rejected when
    it lies entirely outside (touching the bound counts as outside), undecided otherwise and without an interval.
    One boundary convention for every equivalence part (C1's shares, C10's exponents)."""
    if math.isnan(lo) or math.isnan(hi):
        return UNDECIDED
    lo, hi = lo - target, hi - target
    if -margin < lo and hi < margin:
        return HOLDS
    return REJECTED if hi <= -margin or lo >= margin else UNDECIDED


def part_found(share: float) -> str:
    """"It exists" from the share of bootstrap resamples over seeds in which it is found: holds from 95 %,
    rejected at 5 % or less, undecided between."""
    if math.isnan(share):
        return UNDECIDED
    return HOLDS if share >= 0.95 else (REJECTED if share <= 0.05 else UNDECIDED)


def combine_found(shares: tuple[float, ...]) -> str:
    """`part_found` for several things that must all exist: rejected if one is, holds if all do."""
    states = [part_found(s) for s in shares]
    return REJECTED if REJECTED in states else (HOLDS if all(s == HOLDS for s in states) else UNDECIDED)


def part_at_least(lo: float, hi: float, least: float) -> str:
    """"It is at least `least`" from its 95 % interval [lo, hi]: holds when lo ≥ least, rejected when hi < least."""
    if math.isnan(lo) or math.isnan(hi):
        return UNDECIDED
    return HOLDS if lo >= least else (REJECTED if hi < least else UNDECIDED)


def all_of(states: list[str]) -> str:
    """Several parts that must all hold, as one: rejected if one is, holds if all do, else undecided."""
    return REJECTED if REJECTED in states else (HOLDS if states and all(s == HOLDS for s in states) else UNDECIDED)


def combine(parts: dict[str, str]) -> str:
    """Every part holds: reproduced; some hold and some are rejected: partly reproduced; some are rejected and
    none holds: not reproduced; anything else (a part the seeds cannot decide): inconclusive."""
    states = set(parts.values())
    if states == {HOLDS}:
        return "reproduced"
    if HOLDS in states and REJECTED in states:
        return "partly reproduced"
    if REJECTED in states and HOLDS not in states:
        return "not reproduced"
    return "inconclusive"


# ------------------------------------------------------------------------ the rules on mean OOD (before #9)
def verdict_c01(W: float, F: float, N: float) -> str:
    """C1 (the rule before fates): window W matches full-run F (W ≥ F − 0.10) and works (W ≥ N + 0.25)."""
    if W >= F - MATCHES and W >= N + WORKS:
        return "reproduced"
    if W >= N + WORKS:
        return "partly reproduced"
    return "not reproduced"


def verdict_c02(M: float, E: float, N: float) -> str:
    """C2: middle M ≥ 5·early E and works; partly when M ≥ E + 0.15."""
    if M >= N + WORKS and M >= C2_FACTOR * E:
        return "reproduced"
    if M >= E + C2_CLEARLY:
        return "partly reproduced"
    return "not reproduced"


def verdict_c03(E: float, L: float, N: float, M: float) -> str:
    """C3: early E and late L within 0.10 of none N while the middle M works (both: reproduced, one: partly)."""
    at_chance = [abs(v - N) <= CHANCE_BAND for v in (E, L)]
    if M < N + WORKS:  # no placement works: "early and late fail" would say nothing
        return "not reproduced"
    return "reproduced" if all(at_chance) else ("partly reproduced" if any(at_chance) else "not reproduced")


def verdict_c04(has_edge: bool, width: float, resolution: int) -> str:
    """C4: an upward crossing exists and chance → 0.61 takes at most 4 resolution steps (partly: wider)."""
    if not has_edge or math.isnan(width):
        return "not reproduced"
    return "reproduced" if width <= EDGE_WIDTH * resolution else "partly reproduced"


def verdict_c04b(edges: list[tuple[float, float]]) -> str:
    """C4b, given (t_mem, edge) of each protocol whose edge was found (edge NaN: none found): with two edges,
    the later-fitting protocol's edge moves by at least half the shift of t_mem; with one, the edge lies
    within t_mem / 2 of its t_mem (partly)."""
    found = sorted((t, e) for t, e in edges if not math.isnan(e))
    if len(found) >= 2:
        (t_a, e_a), (t_b, e_b) = found[:2]
        return "reproduced" if t_b - t_a > 0 and e_b - e_a >= 0.5 * (t_b - t_a) else "partly reproduced"
    if len(found) == 1:
        t, e = found[0]
        return "partly reproduced" if abs(e - t) <= t / 2 else "not reproduced"
    return "not reproduced"


def verdict_c05(found: pd.DataFrame) -> str:
    """C5, from the γ with an edge (columns gamma, edge, edge_pm; sorted by γ): Spearman ρ(γ, edge) ≤ −0.8
    and the largest γ's bracket entirely before the smallest's; partly when ρ < 0."""
    if len(found) < 2:
        return "not reproduced"
    rho = found["gamma"].corr(found["edge"], method="spearman")
    first, last = found.iloc[0], found.iloc[-1]
    apart = last["edge"] + last["edge_pm"] < first["edge"] - first["edge_pm"]
    if rho <= -0.8 and apart:
        return "reproduced"
    return "partly reproduced" if rho < 0 else "not reproduced"


def verdict_c06(small_share: float, ref_share: float) -> str:
    """C6: the share of reasoning seeds at γ 1.1 exceeds γ 0.5's by ≥ 0.25 (partly: by anything)."""
    d = ref_share - small_share
    if d >= C6_GAP:
        return "reproduced"
    return "partly reproduced" if d > 0 else "not reproduced"


def verdict_c07(basin: pd.DataFrame) -> tuple[str, float]:
    """C7, from the basin (gamma, reasoning, final_ood; sorted by γ): the γ with most reasoning seeds (ties:
    higher OOD) lies in [0.7, 1.1] and beats both ends (partly: one end). Returns (verdict, best γ)."""
    best = basin.sort_values(["reasoning", "final_ood"], ascending=False).iloc[0]
    ends = basin.iloc[[0, -1]]
    if not C7_RANGE[0] <= best["gamma"] <= C7_RANGE[1]:
        return "not reproduced", float(best["gamma"])
    above = int((best["reasoning"] > ends["reasoning"]).sum())
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[above], float(best["gamma"])


def verdict_c08(no_window: bool, ratio: float) -> str:
    """C8, the rule before #10: every window groks in most seeds (no window) and the best constant's median is
    ≥ 2x sooner than the windows' pooled median; partly: one of them."""
    fast = ratio >= C8_FAST
    return "reproduced" if no_window and fast else ("partly reproduced" if no_window or fast else "not reproduced")


def verdict_c09(learned: bool, best_test: float) -> str:
    """C9: when every schedule learned the training distribution, no schedule reaches 0.10 on the test split."""
    if not learned:
        return "inconclusive"
    if best_test < C9_SOLVED:
        return "reproduced"
    return "partly reproduced" if best_test < 0.5 else "not reproduced"


C10_PARTS = ("memorization rate Θ(1) in γ", "reasoning rate Θ(γ²)")


def c10_parts(mem: dict[str, float], rea: dict[str, float]) -> dict[str, str]:
    """C10's parts on the γ-exponents of the transformer's early rates (dicts with lo, hi): memorization's
    exponent is 0 and reasoning's is 2, each within ± C10_FLAT (`part_matches` on their 95 % intervals);
    `combine` turns them into the verdict."""
    return {C10_PARTS[0]: part_matches(mem["lo"], mem["hi"], C10_FLAT, target=0.0),
            C10_PARTS[1]: part_matches(rea["lo"], rea["hi"], C10_FLAT, target=2.0)}


def verdict_c10(mem: dict[str, float], rea: dict[str, float]) -> str:
    """C10's old rule (before issue #10, read on AdamW's rates): the memorization rate's γ-exponent interval
    within ± 0.5 (Θ(1)) and the reasoning rate's covers 2 above 0 (Θ(γ²)); partly: one of them."""
    flat = not math.isnan(mem["lo"]) and -C10_FLAT <= mem["lo"] and mem["hi"] <= C10_FLAT
    quadratic = not math.isnan(rea["lo"]) and rea["lo"] <= 2 <= rea["hi"] and rea["lo"] > 0
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[int(flat) + int(quadratic)]


def verdict_c11(persists: bool, lower_plateau: bool, more_spread: bool) -> str:
    """C11: the window persists at depth, with a lower plateau and more seed variance (partly: one of them)."""
    if not persists:
        return "not reproduced"
    return "reproduced" if lower_plateau and more_spread else (
        "partly reproduced" if lower_plateau or more_spread else "not reproduced")


def verdict_c12(window_works: bool, constant_much_worse: bool) -> str:
    """C12: under SGD the window works and constant weight decay is much worse (partly: one of them)."""
    return "reproduced" if window_works and constant_much_worse else (
        "partly reproduced" if window_works or constant_much_worse else "not reproduced")


C13_DIRECTION = {"ci/wq1": 1, "srank/embed": -1, "order/embed": 1, "align/embed_resid": 1}  # reasoning vs memorizing


def agreeing_c13(diffs: dict[str, Any]) -> list[str]:
    """The metrics whose interval (mean, lo, hi) of the difference excludes 0 in the predicted direction."""
    return [k for k, s in C13_DIRECTION.items() if s * diffs[k][1] > 0 and s * diffs[k][2] > 0]


def verdict_c13(n_agree: int) -> str:
    """C13: at least 3 of the 4 metrics agree (partly: at least 1)."""
    return "reproduced" if n_agree >= C13_AGREE else ("partly reproduced" if n_agree >= 1 else "not reproduced")
