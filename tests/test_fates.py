"""Fates over seeds: counts with exact intervals, paired comparisons, and the power of a design."""

import pandas as pd
import pytest

from critwin_lib.claims import fates
from critwin_lib.claims.core import fate


def _run(final_ood, final_train=1.0, trained=0.8, seed=0, condition="a"):
    return {"condition": condition, "seed": seed, "final_ood": final_ood, "max_ood": final_ood,
            "final_train": final_train, "final_trained_shift": trained}


def test_a_run_has_one_of_four_fates():
    assert fate(_run(0.9)) == "reasoning"
    assert fate(_run(0.9, final_train=0.5)) == "reasoning"  # reasoning is read from OOD alone
    assert fate(_run(0.1, final_train=0.98)) == "not fitted"
    assert fate(_run(0.1, trained=0.8)) == "memorizing"
    assert fate(_run(0.1, trained=0.3)) == "other rule"
    assert fate({**_run(0.1), "max_ood": 0.7}, "max_ood") == "reasoning"  # another metric, same rule


def test_share_table_counts_fates_with_exact_intervals():
    runs = pd.DataFrame([_run(0.9, seed=s) for s in range(3)] + [_run(0.1, seed=3, trained=0.2)])
    t = fates.share_table(fates.with_fates(runs), ["condition"]).iloc[0]
    assert (t["seeds"], t["reasoning"], t["other_rule"], t["share"]) == (4, 3, 1, 0.75)
    assert 0.19 < t["share_lo"] < 0.2 and t["share_hi"] > 0.99


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
