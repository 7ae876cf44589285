"""Every verdict rule reaches each verdict it can give, on synthetic per-seed numbers, and its boundaries
fall where the pages say."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib.claims import history as rule_history
from critwin_lib.claims import rules
from critwin_lib.claims.core import VERDICTS

GAMMAS = [0.5, 0.7, 1.0, 1.1, 1.5]


@pytest.mark.parametrize("W, F, N, verdict", [
    (0.90, 0.91, 0.15, "reproduced"),  # the paper's numbers
    (0.81, 0.91, 0.15, "reproduced"),  # at the tolerance: W = F − 0.10
    (0.80, 0.91, 0.15, "partly reproduced"),  # just below it, but the window works
    (0.40, 0.91, 0.15, "partly reproduced"),  # works: W = N + 0.25
    (0.39, 0.91, 0.15, "not reproduced"),  # does not work
    (0.25, 0.62, 0.17, "not reproduced"),  # the shipped quick runs
])
def test_c1(W, F, N, verdict):
    assert rule_history.verdict_c01(W, F, N) == verdict


@pytest.mark.parametrize("M, E, N, verdict", [
    (0.75, 0.15, 0.15, "reproduced"),  # 5x and works
    (0.74, 0.15, 0.15, "partly reproduced"),  # below 5x, still clearly above early
    (0.30, 0.15, 0.15, "partly reproduced"),  # M = E + 0.15
    (0.29, 0.15, 0.15, "not reproduced"),
    (0.25, 0.77, 0.17, "not reproduced"),  # the shipped quick runs: early beats middle
])
def test_c2(M, E, N, verdict):
    assert rule_history.verdict_c02(M, E, N) == verdict


@pytest.mark.parametrize("E, L, N, M, verdict", [
    (0.15, 0.20, 0.15, 0.90, "reproduced"),  # both within 0.10 of none
    (0.15, 0.26, 0.15, 0.90, "partly reproduced"),  # late just out
    (0.77, 0.69, 0.17, 0.90, "not reproduced"),  # both help
    (0.15, 0.15, 0.15, 0.39, "not reproduced"),  # the middle does not work either: nothing to compare
])
def test_c3(E, L, N, M, verdict):
    assert rule_history.verdict_c03(E, L, N, M) == verdict


@pytest.mark.parametrize("has_edge, width, verdict", [
    (True, 400, "reproduced"), (True, 401, "partly reproduced"), (True, math.nan, "not reproduced"),
    (False, 100, "not reproduced")])
def test_c4(has_edge, width, verdict):
    assert rule_history.verdict_c04(has_edge, width, resolution=100) == verdict


@pytest.mark.parametrize("edges, verdict", [
    ([(1000, 1100), (3000, 2100)], "reproduced"),  # t_mem +2000, edge +1000: half of it
    ([(1000, 1100), (3000, 2000)], "partly reproduced"),  # the edge moves by less than half
    ([(1000, 1100), (3000, math.nan)], "partly reproduced"),  # one edge, near its t_mem
    ([(1000, 1600), (3000, math.nan)], "not reproduced"),  # one edge, more than t_mem / 2 away
    ([(1000, math.nan), (3000, math.nan)], "not reproduced"),
])
def test_c4b(edges, verdict):
    assert rule_history.verdict_c04b(edges) == verdict


def _edges(edge, pm=800.0):
    return pd.DataFrame({"gamma": GAMMAS[:len(edge)], "edge": edge, "edge_pm": pm}).dropna()


def test_c5():
    assert rule_history.verdict_c05(_edges([4000, 4000, 2400, 2400, 800])) == "reproduced"
    assert rule_history.verdict_c05(_edges([4000, 2400, 4000, 2400, 4000])) == "not reproduced"  # ρ = 0
    assert rule_history.verdict_c05(_edges([2400, 2400, 2400, 2400, 800], pm=1000)) == "partly reproduced"  # overlap
    assert rule_history.verdict_c05(_edges([800, 1600, 2400, 3200, 4000])) == "not reproduced"  # later with γ
    assert rule_history.verdict_c05(_edges([2400])) == "not reproduced"  # one edge says nothing about a trend


@pytest.mark.parametrize("small, ref, verdict", [
    (5 / 8, 8 / 8, "reproduced"), (6 / 8, 8 / 8, "reproduced"),  # gap 0.25: the boundary
    (7 / 8, 8 / 8, "partly reproduced"), (8 / 8, 8 / 8, "not reproduced"), (8 / 8, 5 / 8, "not reproduced")])
def test_c6(small, ref, verdict):
    assert rule_history.verdict_c06(small, ref) == verdict


def _basin(k, n=8):
    return pd.DataFrame({"gamma": GAMMAS, "reasoning": k, "seeds": n, "final_ood": np.asarray(k) / n})


def test_c7():
    assert rule_history.verdict_c07(_basin([5, 8, 7, 7, 6])) == ("reproduced", 0.7)
    assert rule_history.verdict_c07(_basin([5, 8, 7, 7, 8])) == ("partly reproduced", 0.7)  # tie broken by OOD
    assert rule_history.verdict_c07(_basin([8, 7, 7, 7, 6])) == ("not reproduced", 0.5)  # best outside [0.7, 1.1]
    assert rule_history.verdict_c07(_basin([8, 8, 8, 8, 8])) == ("not reproduced", 0.5)  # flat: first γ wins


@pytest.mark.parametrize("no_window, ratio, verdict", [
    (True, 5.0, "reproduced"), (True, 2.0, "reproduced"), (True, 1.99, "partly reproduced"),
    (False, 3.0, "partly reproduced"), (False, 1.0, "not reproduced"), (True, math.nan, "partly reproduced")])
def test_c8(no_window, ratio, verdict):
    assert rule_history.verdict_c08(no_window, ratio) == verdict


@pytest.mark.parametrize("learned, best, verdict", [
    (True, 0.02, "reproduced"), (True, 0.0999, "reproduced"), (True, 0.10, "partly reproduced"),
    (True, 0.8, "not reproduced"), (False, 0.0, "inconclusive")])
def test_c9(learned, best, verdict):
    assert rules.verdict_c09(learned, best) == verdict


def test_c10_parts_reach_every_state_and_every_verdict():
    def e(lo, hi):
        return {"exponent": (lo + hi) / 2, "lo": lo, "hi": hi}

    nan = {"exponent": math.nan, "lo": math.nan, "hi": math.nan}
    mem, rea = rules.C10_PARTS
    assert rules.c10_parts(e(-0.49, 0.49), e(1.51, 2.49)) == {mem: rules.HOLDS, rea: rules.HOLDS}
    # the boundaries, as for every equivalence part: touching target ± margin is outside
    assert rules.c10_parts(e(-0.5, 0.4), e(1.6, 2.5)) == {mem: rules.UNDECIDED, rea: rules.UNDECIDED}
    assert rules.c10_parts(e(0.5, 1.0), e(1.0, 1.5)) == {mem: rules.REJECTED, rea: rules.REJECTED}
    assert rules.c10_parts(e(-0.6, 0.4), e(1.4, 2.6)) == {mem: rules.UNDECIDED, rea: rules.UNDECIDED}
    assert rules.c10_parts(e(0.51, 3), e(-1, 1.49)) == {mem: rules.REJECTED, rea: rules.REJECTED}
    assert rules.c10_parts(e(-6, -0.51), e(2.51, 4))[rea] == rules.REJECTED
    assert rules.c10_parts(nan, nan) == {mem: rules.UNDECIDED, rea: rules.UNDECIDED}  # no power law to fit
    for (m, r), verdict in [((e(-0.2, 0.2), e(1.8, 2.2)), "reproduced"), ((e(-0.2, 0.2), e(3, 4)), "partly reproduced"),
                            ((e(1, 2), e(3, 4)), "not reproduced"), ((e(-0.2, 0.2), nan), "inconclusive")]:
        assert rules.combine(rules.c10_parts(m, r)) == verdict


def test_c10_old_rule():
    flat = {"exponent": 0.1, "lo": -0.5, "hi": 0.5}  # the boundary of Θ(1)
    steep = {"exponent": 2.1, "lo": 1.5, "hi": 2.6}
    nan = {"exponent": math.nan, "lo": math.nan, "hi": math.nan}
    assert rule_history.verdict_c10(flat, steep) == "reproduced"
    assert rule_history.verdict_c10(flat, nan) == "partly reproduced"
    assert rule_history.verdict_c10({"exponent": -3, "lo": -4, "hi": -2}, steep) == "partly reproduced"
    assert rule_history.verdict_c10({"exponent": -3, "lo": -4, "hi": -2}, {"exponent": 1, "lo": 0.5, "hi": 1.5}) \
        == "not reproduced"
    assert rule_history.verdict_c10({"exponent": 0, "lo": -0.6, "hi": 0.4}, nan) == "not reproduced"


@pytest.mark.parametrize("persists, lower, spread, verdict", [
    (True, True, True, "reproduced"), (True, False, True, "partly reproduced"),
    (True, True, False, "partly reproduced"), (True, False, False, "not reproduced"),
    (False, True, True, "not reproduced")])
def test_c11(persists, lower, spread, verdict):
    assert rule_history.verdict_c11(persists, lower, spread) == verdict


@pytest.mark.parametrize("works, worse, verdict", [
    (True, True, "reproduced"), (True, False, "partly reproduced"), (False, True, "partly reproduced"),
    (False, False, "not reproduced")])
def test_c12(works, worse, verdict):
    assert rule_history.verdict_c12(works, worse) == verdict


def test_c13_counts_the_metrics_whose_interval_agrees_with_the_predicted_sign():
    diffs = {"ci/wq1": (0.2, 0.1, 0.3), "srank/embed": (-1.0, -2.0, -0.5), "order/embed": (0.3, 0.1, 0.5),
             "align/embed_resid": (0.1, -0.1, 0.3)}
    assert rules.agreeing_c13(diffs) == ["ci/wq1", "srank/embed", "order/embed"]
    assert rule_history.verdict_c13(3) == "reproduced"
    diffs["srank/embed"] = (1.0, 0.5, 2.0)  # the wrong sign does not count
    assert rules.agreeing_c13(diffs) == ["ci/wq1", "order/embed"]
    assert rule_history.verdict_c13(2) == "partly reproduced" and rule_history.verdict_c13(0) == "not reproduced"


def test_every_rule_answers_with_a_verdict_of_the_four():
    outs = [rule_history.verdict_c01(0.5, 0.5, 0.1), rules.verdict_c09(False, 0), rule_history.verdict_c13(1)]
    assert set(outs) <= set(VERDICTS)


# ------------------------------------------------------------------ parts, and the rules on fates (issue #9)
@pytest.mark.parametrize("parts, verdict", [
    ({"a": "holds", "b": "holds"}, "reproduced"),
    ({"a": "holds", "b": "rejected"}, "partly reproduced"),
    ({"a": "holds", "b": "rejected", "c": "undecided"}, "partly reproduced"),
    ({"a": "rejected", "b": "undecided"}, "not reproduced"),
    ({"a": "rejected"}, "not reproduced"),
    ({"a": "holds", "b": "undecided"}, "inconclusive"),
    ({"a": "undecided"}, "inconclusive"),
])
def test_parts_combine_into_the_four_verdicts(parts, verdict):
    assert rules.combine(parts) == verdict


def test_beats_and_matches_parts():
    assert rules.part_beats(0.01, 0.9) == "holds" and rules.part_beats(0.9, 0.01) == "rejected"
    assert rules.part_beats(0.05, 0.05) == "undecided"  # α is strict
    assert rules.part_matches(-0.2, 0.24) == "holds" and rules.part_matches(-0.25, 0.1) == "undecided"
    assert rules.part_matches(-0.6, -0.25) == "rejected" and rules.part_matches(0.3, 0.9) == "rejected"
    assert rules.part_matches(math.nan, math.nan) == "undecided"


def test_a_size_part_is_rejected_when_the_interval_stays_below_the_papers_size():
    from critwin_lib.claims import fates

    assert rules.part_reaches(0.48, rules.C2_SIZE) == "rejected" and rules.part_reaches(0.49, rules.C2_SIZE) == "holds"
    assert rules.part_reaches(math.nan, 0.5) == "undecided"
    won = fates.beats("a beats b", _seeds(10), _seeds(8))
    sized = fates.reaches("a beats b by the paper's size", won, 0.49)
    assert (sized.diff, sized.lo, sized.hi) == (won.diff, won.lo, won.hi) and sized.state == "rejected"
    assert sized.text().endswith("the paper's size ≥ +0.49 → rejected") and won.state == "undecided"


def test_a_size_part_that_holds_on_its_interval_alone_says_the_difference_is_below_the_papers_size():
    from critwin_lib.claims import fates

    short = fates.reaches("a beats b by the paper's size", fates.beats("a beats b", _seeds(12), _seeds(6)), 0.49)
    assert short.state == "holds" and short.diff < 0.49  # +0.38: the interval reaches +0.49, the estimate does not
    assert short.text().endswith("only its interval reaches it)")
    full = fates.reaches("a beats b by the paper's size", fates.beats("a beats b", _seeds(14), _seeds(2)), 0.49)
    assert full.state == "holds" and full.text().endswith("→ holds")


def _seeds(k, n=16):
    return pd.Series([True] * k + [False] * (n - k), index=range(n))


def test_c1_on_fates():
    from critwin_lib.claims.window_placement import decide_c1

    assert decide_c1({"window": _seeds(15), "full": _seeds(15), "none": _seeds(0)})[0] == "reproduced"
    v, parts = decide_c1({"window": _seeds(6), "full": _seeds(14), "none": _seeds(0)})
    assert v == "partly reproduced" and parts["matches full"].state == "rejected"  # beats none, far below full
    v, parts = decide_c1({"window": _seeds(1), "full": _seeds(3, 4), "none": _seeds(0, 4)})
    assert v == "inconclusive"  # 4 seeds: nothing can be decided (the shipped C1 runs)
    assert decide_c1({"window": _seeds(0), "full": _seeds(14), "none": _seeds(0)})[0] == "not reproduced"


def test_c2_and_c3_on_fates():
    from critwin_lib.claims.budget_placement import decide_c2, decide_c3

    assert decide_c2({"middle": _seeds(14), "early": _seeds(1)})[0] == "reproduced"
    assert decide_c2({"middle": _seeds(1), "early": _seeds(14)})[0] == "not reproduced"
    v, parts = decide_c2({"middle": _seeds(8), "early": _seeds(6)})  # a design that would see the paper's effect
    assert v == "not reproduced" and parts["reaches size"].state == "rejected"  # ... sees far less: not inconclusive
    assert parts["middle beats early"].state == "undecided"
    v, parts = decide_c2({"middle": _seeds(14, 64), "early": _seeds(2, 64)})  # clearly above, far below the size
    assert v == "partly reproduced" and parts["middle beats early"].state == "holds"
    assert decide_c2({"middle": _seeds(2, 4), "early": _seeds(0, 4)})[0] == "inconclusive"  # 4 seeds decide nothing
    assert decide_c3({"early": _seeds(0), "late": _seeds(1), "none": _seeds(0)})[0] == "reproduced"
    assert decide_c3({"early": _seeds(12), "late": _seeds(1), "none": _seeds(0)})[0] == "partly reproduced"
    assert decide_c3({"early": _seeds(12), "late": _seeds(11), "none": _seeds(0)})[0] == "not reproduced"


@pytest.mark.parametrize("share, state", [(0.95, rules.HOLDS), (0.949, rules.UNDECIDED), (0.051, rules.UNDECIDED),
                                          (0.05, rules.REJECTED), (math.nan, rules.UNDECIDED)])
def test_something_exists_from_the_share_of_resamples_that_find_it(share, state):
    assert rules.part_found(share) == state


def test_several_things_exist_only_if_each_does():
    assert rules.combine_found((0.99, 0.96)) == rules.HOLDS
    assert rules.combine_found((0.99, 0.5)) == rules.UNDECIDED
    assert rules.combine_found((0.99, 0.01)) == rules.REJECTED


@pytest.mark.parametrize("lo, hi, state", [(0.5, 2.0, rules.HOLDS), (0.49, 2.0, rules.UNDECIDED),
                                           (-1.0, 0.49, rules.REJECTED), (math.nan, 1.0, rules.UNDECIDED)])
def test_at_least_by_an_interval(lo, hi, state):
    assert rules.part_at_least(lo, hi, 0.5) == state


def test_holm_family_holds_a_part_alone_significant_to_the_familys_level():
    from critwin_lib.claims import rules as r

    fam = r.holm_family({"a": (0.02, 0.9), "b": (0.5, 0.5), "c": (0.9, 0.001)})
    assert fam["a"][0] == "undecided" and fam["a"][1] == pytest.approx(0.06)  # each direction its own family: 0.02 × 3
    assert fam["c"][0] == "rejected" and fam["c"][2] == pytest.approx(0.003)
    assert r.holm_family({"a": (0.01, 0.9)})["a"][0] == "holds"  # a family of one is the part alone
    assert r.holm_family({"a": (math.nan, math.nan), "b": (0.001, 0.9)})["a"][0] == "undecided"


def test_c10_parts_with_the_check_are_decided_only_where_a_third_of_the_lr_keeps_the_exponent():
    def e(x, half=0.2):
        return {"exponent": x, "lo": x - half, "hi": x + half}

    mem, rea = rules.C10_PARTS
    read = (e(0.0), e(2.0))
    assert rules.c10_parts(*read, check=(e(0.1), e(1.9))) == {mem: rules.HOLDS, rea: rules.HOLDS}
    assert rules.c10_parts(*read, check=(e(0.1), e(0.8))) == {mem: rules.HOLDS, rea: rules.UNDECIDED}
    far = (e(1.5), e(3.5))  # both rejected alone ...
    assert set(rules.c10_parts(*far).values()) == {rules.REJECTED}
    # ... and undecided when a third of the learning rate moves them: the runs are not in the theory's regime
    assert set(rules.c10_parts(*far, check=(e(0.5), e(1.0))).values()) == {rules.UNDECIDED}
    nan = {"exponent": math.nan, "lo": math.nan, "hi": math.nan}
    assert not rules.c10_lr_stable(e(2.0), nan) and rules.c10_lr_stable(e(2.0), e(2.2))
    assert rules.combine(rules.c10_parts(*read, check=(e(0.1), e(0.8)))) == "inconclusive"
