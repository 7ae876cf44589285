"""The group-sequential design (`critwin_lib.sequential`, `claims.looks`): O'Brien–Fleming-type boundaries, looks
taken only as far as the seeds go, a stop at the first look that decides, and an error rate kept at α."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import sequential
from critwin_lib.claims import fates, looks, rules
from critwin_lib.config import ConfigError


def test_the_spending_function_spends_alpha_by_the_last_look():
    assert sequential.spent(1.0, 0.05) == pytest.approx(0.05)
    assert 0 < sequential.spent(1 / 3, 0.05) < sequential.spent(2 / 3, 0.05) < 0.05


def test_nominal_levels_match_the_textbook_obrien_fleming_type_boundaries():
    # Lan-DeMets O'Brien-Fleming-type spending, three equally spaced looks, one-sided 0.025: z 3.71, 2.51, 1.99
    lv = sequential.nominal_levels([16, 32, 48], 0.025)
    z = [float(-__import__("scipy").stats.norm.ppf(a)) for a in lv]
    assert z == pytest.approx([3.71, 2.51, 1.99], abs=0.01)
    assert sequential.nominal_levels([48], 0.05) == pytest.approx([0.05])


@pytest.mark.parametrize("bad", [[], [16, 16], [32, 16], [0, 16], "16", [16.0, 32], [True, 2]])
def test_looks_must_be_increasing_seed_counts(bad):
    with pytest.raises(ConfigError, match="^looks:"):
        sequential.check_looks(bad)


def _decide(r, levels=fates.FIXED):
    part = fates.beats("a beats b", r["a"], r["b"], levels)
    return rules.combine({"beats": part.state}), {"beats": part}


def _seeds(values):
    return pd.Series(values, index=range(len(values)))


def test_a_design_stops_at_the_first_look_that_decides_and_takes_no_look_the_seeds_do_not_reach():
    strong = {"a": _seeds([True] * 48), "b": _seeds([False] * 48)}
    p = looks.run(_decide, strong, [16, 32, 48])
    assert [t.seeds for t in p.taken] == [16] and p.verdict == "reproduced" and p.stopped
    assert "stopped at look 1 of 3" in p.status()
    tie = {"a": _seeds([True, False] * 12), "b": _seeds([True, False] * 12)}
    p = looks.run(_decide, tie, [16, 32, 48])  # 24 seeds stored: look 2 (32) is not reached yet
    assert [t.seeds for t in p.taken] == [16] and p.verdict == "inconclusive" and not p.stopped
    assert p.status() == "look 1 of 3 (16 seeds) did not decide; the next, look 2, is at 32 seeds"
    table = p.table()
    assert list(table["verdict"]) == ["inconclusive", "not taken", "not taken"]
    assert table["beats: p below"].is_monotonic_increasing


def test_a_design_that_reaches_its_last_look_undecided_stops_there_and_says_so():
    tie = {"a": _seeds([True, False] * 24), "b": _seeds([True, False] * 24)}
    p = looks.run(_decide, tie, [16, 32, 48])
    assert [t.seeds for t in p.taken] == [16, 32, 48] and p.verdict == "inconclusive" and p.stopped
    assert p.status() == "the design reached its maximum, 48 seeds (look 3 of 3), undecided"
    assert list(p.table()["verdict"]) == ["inconclusive"] * 3


def test_the_first_look_is_held_to_a_much_stricter_level_than_the_last():
    ten = {"a": _seeds([True] * 10 + [False] * 6), "b": _seeds([False] * 16)}  # exact McNemar p = 0.5 ** 10
    first = looks.run(_decide, ten, [16, 32, 48])
    assert first.verdict == "inconclusive" and first.taken[0].parts["beats"].p == pytest.approx(0.5 ** 10)
    assert looks.run(_decide, ten, [16]).verdict == "reproduced"  # one look: the fixed-sample level


def test_the_design_keeps_its_error_rate_and_finds_a_large_effect_early():
    null = looks.power(_decide, {"a": 0.5, "b": 0.5}, [16, 32, 48], draws=3000)
    assert null["power"] <= 0.05  # "reproduced" when a does not beat b: at most α over all looks
    big = looks.power(_decide, {"a": 0.95, "b": 0.0}, [16, 32, 48], draws=500)
    assert big["power"] == 1.0 and big["stop_1"] > 0.9 and big["mean_seeds"] < 18
    assert math.isclose(sum(v for k, v in big.items() if k.startswith("stop_")), 1.0)


def test_a_look_holds_every_interval_to_its_level():
    lv = fates.look_levels([16, 32, 48], 0)
    x, y = np.array([True] * 8 + [False] * 8), np.array([False] * 16)
    wide, fixed = fates.beats("x", x, y, lv), fates.beats("x", x, y)
    assert wide.lo < fixed.lo and wide.hi > fixed.hi and "99.98 % interval" in wide.text()
    assert fates.matches("x", x, y, levels=lv).level == lv.matches > 0.99


def test_power_at_the_observed_shares_keeps_the_arms_paired():
    """Seeds drawn from the observed ones with all their conditions: identical arms can never beat each other, and a
    clear win is found nearly always."""
    import pandas as pd

    from critwin_lib.claims import looks
    from critwin_lib.claims.window_placement import decide_c1

    seeds = range(16)
    same = pd.Series([s % 2 == 0 for s in seeds], index=list(seeds))
    tied = {"window": same, "full": same, "none": same}
    assert looks.power_observed(decide_c1, tied, [16], draws=200) == 0.0  # the window never beats none
    clear = {"window": pd.Series(True, index=list(seeds)), "full": pd.Series(True, index=list(seeds)),
             "none": pd.Series(False, index=list(seeds))}
    assert looks.power_observed(decide_c1, clear, [16], draws=200) == 1.0


def test_paired_draws_give_a_seed_one_fate_draw_across_conditions():
    import numpy as np

    from critwin_lib.claims import fates

    d = fates.draw_fates(np.random.default_rng(0), {"a": 0.9, "b": 0.5}, (200, 16), paired=True)
    assert not (d["b"] & ~d["a"]).any()  # reasoning at the smaller share implies reasoning at the larger
    i = fates.draw_fates(np.random.default_rng(0), {"a": 0.9, "b": 0.5}, (200, 16))
    assert (i["b"] & ~i["a"]).any() and abs(d["a"].mean() - 0.9) < 0.02 and abs(d["b"].mean() - 0.5) < 0.03
