"""Fates over seeds: counts with exact intervals, paired comparisons, and the power of a design."""

import math

import pandas as pd
import pytest

from critwin_lib.claims import fates, onsets, rules, window_onset
from critwin_lib.claims.core import fate


def _run(final_ood, final_train=1.0, trained=0.8, seed=0, condition="a"):
    return {"condition": condition, "seed": seed, "final_ood": final_ood, "max_ood": final_ood,
            "final_train": final_train, "final_trained_shift": trained}


def test_a_run_has_one_of_four_fates():
    assert fate(_run(0.9)) == "reasoning"
    assert fate(_run(0.9, final_train=0.5)) == "not fitted"  # reasoning needs the training set fitted (2026-12-06)
    assert fate(_run(0.9, final_train=0.99)) == "reasoning"
    assert fate(_run(0.1, final_train=0.98)) == "not fitted"
    assert fate(_run(0.1, trained=0.8)) == "memorizing"
    assert fate(_run(0.1, trained=0.3)) == "other rule"
    assert fate({**_run(0.1), "max_ood": 0.7}, "max_ood") == "reasoning"  # another metric, same rule
    # the rule before 2026-12-06, a sensitivity row: reasoning read from OOD accuracy alone
    assert fate(_run(0.9, final_train=0.5), require_fit=False) == "reasoning"
    assert fate(_run(0.1, trained=0.3), require_fit=False) == "other rule"


def test_sensitivity_rows_include_the_reading_fitted_or_not():
    runs = pd.DataFrame([_run(0.9, final_train=0.6, seed=s) for s in range(4)]).assign(protocol="p", close_ood=0.9)
    rows = {m: r for _, m, r in fates.by_protocol_and_metric(runs)}
    assert list(rows) == [*fates.METRICS, fates.WHATEVER_FIT] and fates.FITTED == "final"
    assert (rows["final"]["fate"] == "not fitted").all()  # the rule: these runs never fit the training set
    assert (rows[fates.WHATEVER_FIT]["fate"] == "reasoning").all()  # the rule before 2026-12-06


def test_share_table_counts_fates_with_exact_intervals():
    runs = pd.DataFrame([_run(0.9, seed=s) for s in range(3)] + [_run(0.1, seed=3, trained=0.2)])
    t = fates.share_table(fates.with_fates(runs), ["condition"]).iloc[0]
    assert (t["seeds"], t["reasoning"], t["other_rule"], t["share"]) == (4, 3, 1, 0.75)
    assert 0.19 < t["share_lo"] < 0.2 and t["share_hi"] > 0.99


def test_how_the_rest_end_tells_a_wiped_model_from_a_memorizing_one():
    runs = pd.DataFrame([_run(0.1, final_train=0.05, seed=s, condition="late") for s in range(3)]
                        + [_run(0.1, seed=s, condition="none") for s in range(3)]
                        + [_run(0.9, seed=s, condition="middle") for s in range(3)])
    ok = fates.with_fates(runs)
    t = fates.share_table(ok, ["condition"]).join(ok.groupby("condition")["final_train"].mean(), on="condition")
    text = fates.how_the_rest_end(t, ["late", "none", "middle"])
    assert "late: 3 of 3 do not reason (3 not fitted; mean final training accuracy of all its seeds 0.05)" in text
    assert "none: 3 of 3 do not reason (3 memorizing; mean final training accuracy of all its seeds 1.00)" in text
    assert text.endswith("middle: 0 of 3 do not reason")


def test_paired_comparisons_use_the_seeds_both_conditions_have():
    a = pd.Series([True] * 12, index=range(12))
    b = pd.Series([False] * 16, index=range(16))
    c = fates.beats("a beats b", a, b)
    assert c.n == 12 and c.state == "holds" and c.p == pytest.approx(0.5 ** 12)
    m = fates.matches("a matches a", a, a)
    assert m.state == "holds" and m.diff == 0


def test_power_grows_with_seeds_and_is_nil_where_no_test_can_pass():
    def decide(r):
        return "reproduced" if fates.beats("x", r["x"], r["y"]).state == "holds" else "inconclusive"

    shares = {"x": 0.9, "y": 0.1}
    assert fates.power(decide, shares, 4, draws=500) == 0  # 4 discordant seeds: p ≥ 1/16
    assert fates.power(decide, shares, 8, draws=500) < fates.power(decide, shares, 16, draws=500)
    assert fates.paper_share(0.93) == pytest.approx(0.78 / 0.85) and fates.paper_share(0.1) == 0


def _two_sweeps(edge_a: int, edge_b: int, t_a: int, t_b: int, n: int = 12) -> pd.DataFrame:
    """Seeds that reason exactly when the window's onset is at or after a protocol's edge (a step in the share)."""
    rows = []
    grids = {"a": [0, 400, 800, 1200, 1600], "b": [0, 800, 1600, 2400, 3200]}
    for p, e, t in (("a", edge_a, t_a), ("b", edge_b, t_b)):
        grid = grids[p]
        for s in range(n):
            rows.append({"protocol": p, "onset": -1, "seed": s, "fate": "memorizing", "t_mem": t + 10 * (s % 3)})
            rows += [{"protocol": p, "onset": o, "seed": s, "fate": "reasoning" if o >= e else "memorizing",
                      "t_mem": math.nan} for o in grid]
    return pd.DataFrame(rows)


def test_the_edge_shift_follows_t_mem_when_every_seed_switches_where_fitting_ends():
    shift = onsets.edge_shift(_two_sweeps(800, 2400, 800, 2400), "a", "b", n_boot=200)
    assert shift.found == (1.0, 1.0)
    assert shift.edges == (pytest.approx(600), pytest.approx(2000))  # half-way between the grid's onsets
    assert shift.t_shift == pytest.approx(1600) and shift.t_lo > 0
    assert shift.ratio == pytest.approx(1400 / 1600)
    verdict, parts = window_onset.decide_c04b(shift)
    assert verdict == "reproduced", parts


def test_an_edge_that_stays_put_while_t_mem_moves_is_only_partly_the_claim():
    shift = onsets.edge_shift(_two_sweeps(800, 800, 800, 2400), "a", "b", n_boot=200)
    assert shift.ratio_hi < rules.C4B_FOLLOW
    verdict, parts = window_onset.decide_c04b(shift)
    assert parts["the edge moves with t_mem"] == rules.REJECTED
    assert verdict == "partly reproduced"  # both protocols have an edge, it does not move with t_mem


def test_without_an_edge_in_one_protocol_the_shift_is_not_judged():
    runs = _two_sweeps(800, 10_000, 800, 2400)  # b never reasons
    shift = onsets.edge_shift(runs, "a", "b", n_boot=200)
    verdict, parts = window_onset.decide_c04b(shift)
    assert shift.found[1] == 0 and parts["the edge moves with t_mem"] == rules.UNDECIDED
    assert verdict == "not reproduced"


def test_the_same_t_mem_leaves_c4b_untestable():
    shift = onsets.edge_shift(_two_sweeps(800, 2400, 1000, 1000), "a", "b", n_boot=200)
    assert window_onset.decide_c04b(shift)[0] == "inconclusive"


def test_without_a_seed_that_fits_there_is_nothing_to_compare():
    runs = _two_sweeps(800, 2400, 800, 2400).assign(t_mem=math.nan)
    shift = onsets.edge_shift(runs, "a", "b", n_boot=50)
    assert math.isnan(shift.t_shift) and math.isnan(shift.found[0])
    verdict, parts = window_onset.decide_c04b(shift)
    assert verdict == "inconclusive" and set(parts.values()) == {rules.UNDECIDED}


def test_row_verdict_reads_one_row_of_a_sensitivity_table():
    table = pd.DataFrame([{"protocol": "p", "metric": m, "onset": o, "verdict": v}
                          for m, o, v in [("final", "as the claim", "reproduced"),
                                          (fates.WHATEVER_FIT, "as the claim", "inconclusive"),
                                          ("final", 600, "not reproduced")]])
    assert fates.row_verdict(table, "p", fates.WHATEVER_FIT) == "inconclusive"
    assert fates.row_verdict(table, "p", fates.FITTED) == "reproduced"


def test_a_share_that_falls_as_the_onset_moves_later_has_a_closing_edge_and_no_rising_one():
    """Windows that work early and wipe the model late (the paper length's C4 sweep): the rule's rising edge is
    absent, the falling one is found where half the seeds stop reasoning."""
    rows = [{"onset": o, "seed": s, "fate": "reasoning" if o < 2000 else "not fitted"}
            for s in range(8) for o in (0, 1000, 2000, 3000)]
    runs = pd.DataFrame(rows)
    rise, fall = onsets.share_edge(runs, n_boot=200), onsets.share_edge(runs, n_boot=200, falling=True)
    assert math.isnan(rise.edge) and rise.found == 0 and "rises" in rise.text()
    assert fall.edge == pytest.approx(1500) and fall.found == 1.0
    assert fall.text().startswith("the reasoning share falls through 0.5 for good at onset 1500")
    assert onsets.last_fall([0, 1, 2], [1.0, 0.75, 0.25], 0.5) == pytest.approx(1.5)
    assert onsets.last_fall([0, 1, 2, 3], [0.75, 0.25, 0.5, 0.0], 0.5) == pytest.approx(2)  # the dip recovers
    assert math.isnan(onsets.last_fall([0, 1, 2], [0.6, 0.3, 0.5], 0.5))  # ends at the level: no fall
    assert math.isnan(onsets.last_fall([0, 1], [0.2, 0.1], 0.5))  # never reaches it


def test_the_headline_groups_flipped_rows_by_protocol_and_says_a_shared_verdict_once():
    def row(protocol, metric, onset, verdict):
        return {"protocol": protocol, "metric": metric, "onset": onset, "verdict": verdict}

    rows = [row("mid-fit-matrices", "final", "as the claim", "reproduced"),
            row("mid-fit-matrices", "max over training", "as the claim", "not reproduced"),
            row("mid-fit", "final", "as the claim", "not reproduced"),
            row("mid-fit", "max over training", "as the claim", "not reproduced"),
            row("mid-fit-matrices", "final", 800, "not reproduced")]
    table = pd.DataFrame(rows)
    assert fates.headline(table, "reproduced") == (
        "the verdict flips in 4 of 5 rows, each to not reproduced: the quick protocol (max over training, final at "
        "onset 800); the first protocol tried (every row)")
    mixed = pd.DataFrame([*rows[:3], row("mid-fit", "max over training", "as the claim", "inconclusive")])
    assert fates.headline(mixed, "reproduced") == (
        "the verdict flips in 3 of 4 rows: the quick protocol (to not reproduced: max over training); the first "
        "protocol tried (to not reproduced: final; to inconclusive: max over training)")
    onsets = pd.DataFrame([row("mid-fit-matrices", "final", "as the claim", "reproduced"),
                           *(row("mid-fit-matrices", "final", o, "inconclusive") for o in (0, 1600, 3200)),
                           row("mid-fit-matrices", "final", 800, "not reproduced"),
                           row("mid-fit-matrices", "when the window closes", "as the claim", "inconclusive"),
                           row("mid-fit", "final", "as the claim", "inconclusive"),
                           row("mid-fit", "max over training", "as the claim", "inconclusive")])
    assert fates.headline(onsets, "reproduced") == (  # a metric's onsets in one phrase, per verdict
        "the verdict flips in 7 of 8 rows: the quick protocol (to inconclusive: final at onsets 0, 1600 and 3200, "
        "when the window closes; to not reproduced: final at onset 800); the first protocol tried (every row: to "
        "inconclusive)")
    assert fates.headline(table.iloc[:2], "reproduced") == (
        "the verdict flips in 1 of 2 rows, to not reproduced: the quick protocol (max over training)")
    assert fates.headline(table.iloc[[0, 4]], "not reproduced") == (
        "the verdict flips in 1 of 2 rows, to reproduced: the quick protocol (final)")
    assert fates.headline(table.iloc[1:4], "not reproduced") == (
        "the verdict holds across all 3 rows of the sensitivity table")
