"""Every claim's verdict rule, as a pure function of the numbers its page computes.

The rules are stated on each page before its runs; here they are code, in one place, each with a unit
test that reaches every verdict it can give (tests/test_rules.py). Thresholds are named constants.
"""

from __future__ import annotations

import math
from typing import Any

from critwin_lib import stats

WORKS = 0.25  # a weight-decay schedule "works" when its mean final OOD is at least this above no weight decay
MATCHES = 0.10  # C1: the window "matches" full-run weight decay when it is at most this below it
C2_FACTOR = 5  # C2: the paper's 5-9x, lower end
C2_CLEARLY = 0.15  # C2 partly: middle clearly above early
EDGE_WIDTH = 4  # C4: a sharp switch takes at most this many resolution steps
C6_GAP = 0.25  # C6: the paper's gap is 4 of 12 seeds (0.33); at 8 seeds, at least 2
C7_RANGE = (0.7, 1.1)  # C7: the paper's moderate γ
C8_FAST = 2  # C8: constant weight decay groks at least this many times faster than the windows (until 2026-12-06)
C8_SIZE = 5.0  # C8: the paper's "≈ 5× faster", its size in its own metric (the ratio of grokking times)
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
# The paper's sizes, as differences of reasoning shares: a mean OOD accuracy m implies a share (m − 0.15) / 0.85
# when seeds are bimodal (`fates.paper_share`); a part "A beats B by the paper's size" is rejected when the 95 %
# interval of the difference lies below its size: the data exclude what the paper reports.
SIZE_WORKS = 0.54  # the paper's "reasoning regime" (C4: mean OOD 0.61, share 0.54) against chance (0.15, share 0)
C2_SIZE = 0.49  # C2's 5-9x read generously: middle at 0.61 (share 0.54), early at the top of the 0.07-0.19 it
#                 implies (0.19, share 0.05)
# Since 2026-12-06 C1's and C2's size parts read the paper's own metric, mean final OOD accuracy over seeds, with a
# paired bootstrap interval (`fates.mean_size`); the share sizes above stay for the rule history and for C12.
C1_OOD_GAIN = 0.46  # window − none in mean OOD: the paper's reasoning regime (0.61) against chance (0.15)
C2_RATIO = 5.0  # middle / early in mean OOD: the lower end of the paper's 5-9x


def part_beats(p_greater: float, p_less: float, alpha: float = ALPHA) -> str:
    """"A beats B" from two one-sided tests over seeds: holds when A > B at α, rejected when B > A at α."""
    if p_greater < alpha:
        return HOLDS
    return REJECTED if p_less < alpha else UNDECIDED


def holm_family(pairs: dict[str, tuple[float, float]], alpha: float = ALPHA) -> dict[str, tuple[str, float, float]]:
    """Parts of one claim whose single rejecting part decides its verdict, held to α as a family: each part's
    one-sided p in the paper's direction and in the other ({part: (p_holds, p_rejects)}) is Holm-adjusted within
    its direction across the parts; a part holds at an adjusted p_holds < α and is rejected at an adjusted
    p_rejects < α. Returns {part: (state, adjusted p_holds, adjusted p_rejects)}."""
    names = list(pairs)
    up = stats.holm([pairs[k][0] for k in names])
    down = stats.holm([pairs[k][1] for k in names])
    return {k: (part_beats(u, d, alpha) if not (math.isnan(u) or math.isnan(d)) else UNDECIDED, u, d)
            for k, u, d in zip(names, up, down, strict=True)}


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


def part_reaches(hi: float, least: float) -> str:
    """"The difference is of the paper's size" from the upper end of its 95 % interval: rejected when it lies below
    `least` (the data exclude the paper's size), holds when it reaches it, undecided without an interval."""
    if math.isnan(hi):
        return UNDECIDED
    return REJECTED if hi < least else HOLDS


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


def verdict_c09(learned: bool, best_test: float) -> str:
    """C9: when every schedule learned the training distribution, no schedule reaches 0.10 on the test split."""
    if not learned:
        return "inconclusive"
    if best_test < C9_SOLVED:
        return "reproduced"
    return "partly reproduced" if best_test < 0.5 else "not reproduced"


C10_PARTS = ("memorization rate Θ(1) in γ", "reasoning rate Θ(γ²)")


def c10_parts(mem: dict[str, float], rea: dict[str, float],
              check: tuple[dict[str, float], dict[str, float]] | None = None) -> dict[str, str]:
    """C10's parts on the γ-exponents of the transformer's early rates (dicts with exponent, lo, hi):
    memorization's exponent is 0 and reasoning's is 2, each within ± C10_FLAT (`part_matches` on their 95 %
    intervals); `combine` turns them into the verdict. With `check` (the same exponents at a learning rate three
    times smaller, the rule of 2026-12-06): a part is decided only where its exponent there lies inside the
    interval read (`c10_lr_stable`); otherwise the runs are not near the theory's gradient flow and it is undecided."""
    parts = {C10_PARTS[0]: part_matches(mem["lo"], mem["hi"], C10_FLAT, target=0.0),
             C10_PARTS[1]: part_matches(rea["lo"], rea["hi"], C10_FLAT, target=2.0)}
    if check is not None:
        for name, read, smaller in zip(C10_PARTS, (mem, rea), check, strict=True):
            if not c10_lr_stable(read, smaller):
                parts[name] = UNDECIDED
    return parts


def c10_lr_stable(read: dict[str, float], smaller: dict[str, float]) -> bool:
    """Under a gradient flow a smaller learning rate slows every rate alike and leaves its γ-exponent unchanged: the
    exponent at a third of the learning rate lies inside the 95 % interval of the one read."""
    e = smaller["exponent"]
    return not math.isnan(e) and not math.isnan(read["lo"]) and read["lo"] <= e <= read["hi"]


C13_DIRECTION = {"ci/wq1": 1, "srank/embed": -1, "order/embed": 1, "align/embed_resid": 1}  # reasoning vs memorizing


def agreeing_c13(diffs: dict[str, Any]) -> list[str]:
    """The metrics whose interval (mean, lo, hi) of the difference excludes 0 in the predicted direction."""
    return [k for k, s in C13_DIRECTION.items() if s * diffs[k][1] > 0 and s * diffs[k][2] > 0]


