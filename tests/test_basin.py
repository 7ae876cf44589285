"""C6/C7's basin read over three windows (`basin`, the design registered before its runs): each seed's basin
share, the seed-level tests, C7's Holm family, the power of the design, bad input before any training, and the
design the page reads (registered before its runs)."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib.claims import basin, basin_share, registry
from critwin_lib.config import ConfigError

WINDOWS = ("middle", "early", "late")


def _runs(reasons: dict[float, list[tuple[int, int, int]]]) -> pd.DataFrame:
    """Window runs: reasons[γ][seed] = (middle, early, late), 1 when the seed reasons under that window."""
    return pd.DataFrame([{"window": w, "gamma": g, "seed": s, "fate": "reasoning" if ok else "memorizing"}
                         for g, seeds in reasons.items() for s, flags in enumerate(seeds)
                         for w, ok in zip(WINDOWS, flags, strict=True)])


def test_a_seeds_basin_share_is_the_share_of_windows_where_it_reasons():
    runs = _runs({0.5: [(1, 0, 0), (1, 1, 1)], 1.1: [(0, 0, 0), (1, 1, 0)]})
    runs = pd.concat([runs, pd.DataFrame([{"window": basin_share.NONE, "gamma": 0.5, "seed": 0, "fate": "reasoning"}])])
    s = basin_share.seed_shares(runs)
    assert s.loc[0, 0.5] == pytest.approx(1 / 3) and s.loc[1, 0.5] == 1 and s.loc[1, 1.1] == pytest.approx(2 / 3)
    missing = runs[~((runs["gamma"] == 1.1) & (runs["seed"] == 0) & (runs["window"] == "late"))]
    assert math.isnan(basin_share.seed_shares(missing).loc[0, 1.1])  # a seed without all windows sits out at that γ


@pytest.mark.parametrize("small, ref, state", [
    ([(0, 0, 1)] * 8, [(1, 1, 1)] * 8, "holds"),  # every seed's share higher at γ 1.1: p = 1/256
    ([(1, 1, 1)] * 8, [(0, 0, 1)] * 8, "rejected"),  # the reverse
    ([(1, 0, 0), (0, 1, 0)] * 4, [(1, 0, 0), (0, 1, 0)] * 4, "rejected"),  # no difference, interval below the gap
    ([(0, 0, 0)] * 2 + [(1, 1, 1)] * 2, [(1, 1, 1)] * 2 + [(0, 0, 0)] * 2, "undecided"),  # 4 seeds, wide interval
])
def test_c6_pooled_reaches_each_state(small, ref, state):
    got = basin_share.c06_pooled(basin_share.seed_shares(_runs({0.5: small, 1.1: ref})))
    assert got["state"] == state and got["n"] == len(small)


def test_c7_pooled_parts_are_one_holm_family_against_each_end():
    n = 6
    top, bottom = [(1, 1, 1)] * n, [(0, 0, 0)] * n
    clear = basin_share.c07_pooled(basin_share.seed_shares(_runs({0.25: bottom, 0.5: bottom, 1.1: top, 1.5: bottom})))
    assert [clear[k]["state"] for k in basin_share.C7_PARTS] == ["holds", "holds"]
    assert clear[basin_share.C7_PARTS[0]]["p_holm"] == pytest.approx(2 / 64)  # 1/64 twice over
    assert (clear[basin_share.C7_PARTS[0]]["gamma"], clear[basin_share.C7_PARTS[1]]["gamma"]) == (0.25, 1.5)
    one = basin_share.c07_pooled(basin_share.seed_shares(_runs({0.25: bottom[:5], 1.1: top[:5], 1.5: top[:5]})))
    # 5 seeds: p = 1/32 alone, 1/16 after Holm: the moderate γ does not beat the smallest at the family's level
    first = one[basin_share.C7_PARTS[0]]
    assert first["p"] == pytest.approx(1 / 32) and first["state"] == "undecided"
    assert one[basin_share.C7_PARTS[1]]["state"] == "undecided"
    reversed_ = basin_share.c07_pooled(basin_share.seed_shares(_runs({0.25: top, 1.1: bottom, 1.5: top})))
    assert [reversed_[k]["state"] for k in basin_share.C7_PARTS] == ["rejected", "rejected"]
    no_end = basin_share.c07_pooled(basin_share.seed_shares(_runs({0.7: top, 1.1: top})))
    assert {v["state"] for v in no_end.values()} == {"undecided"}  # both ends are moderate


def test_the_pooled_design_sees_the_papers_gap_and_pooling_helps_only_when_windows_differ():
    independent = basin_share.pooled_power(16, draws=300)
    agree = basin_share.pooled_power(16, draws=300, agree=True)
    assert agree <= independent and independent > 0.8
    assert basin_share.pooled_power(4, draws=200) == 0.0  # 4 seeds cannot reach p < 0.05 on a sign-flip test


def test_observed_power_resamples_seeds_with_all_their_runs():
    runs = _runs({0.25: [(0, 0, 0)] * 8, 0.5: [(0, 0, 1)] * 8, 1.1: [(1, 1, 1)] * 8, 1.5: [(0, 1, 0)] * 8})
    seen = basin_share.observed_power(runs, draws=50)
    assert seen == {"c6": 1.0, "c7": 1.0}  # every seed the same: every resample decides the same way


def test_pooled_table_gives_each_gammas_mean_share_and_counts_per_window():
    runs = _runs({0.5: [(1, 0, 0)] * 4, 1.1: [(1, 1, 1)] * 4})
    t = basin_share.pooled_table(runs, [0.5, 1.1]).set_index("gamma")
    assert t.loc[0.5, "share"] == pytest.approx(1 / 3) and t.loc[1.1, "share"] == 1
    assert (t.loc[0.5, "k middle"], t.loc[0.5, "k early"], t.loc[1.1, "k late"]) == (4, 0, 4)
    assert np.isfinite(t["share_lo"]).all() and "std" in t


@pytest.mark.parametrize("params, match", [
    ({"windows": {"middle": 0.375}, "pooled": True}, "windows"),  # pooling one window
    ({"windows": {"none": 0.375, "early": 0.0}}, "windows"),  # the name of the runs without weight decay
    ({"pooled": "yes"}, "pooled"),
    ({"none": 1}, "none"),
])
def test_bad_pooled_design_fails_before_any_training(tmp_path, params, match):
    base = {"n_seeds": 2, "gammas": [0.5, 1.1], "windows": {"middle": 0.375, "early": 0.0}, "window_frac": 0.25}
    with pytest.raises(ConfigError, match=f"^{match}"):
        basin.c06_c07(profile="smoke", results_dir=str(tmp_path / "results"), **{**base, **params})
    assert not (tmp_path / "results").exists()


def test_the_page_reads_the_registered_three_window_design_at_every_gamma():
    p = registry.page("c06_c07_basin")
    d = registry.design_at(p, "quick")
    assert d.pooled and d.none and list(d.windows) == ["middle", "early", "late"]
    assert len(d.specs) == 16 * 6 * 4 and 0.25 in d.gammas and len(d.seeds) == 16
    # the one-window design before it (its first window, 12 seeds, γ 0.5-1.5) is part of it: the page recomputes it
    assert set(basin.EARLIER["gammas"]) <= set(d.gammas) and basin.EARLIER["n_seeds"] <= len(d.seeds)
    with pytest.raises(ConfigError, match="^upcoming"):
        registry.upcoming_defaults(p, "quick")  # nothing is waiting for runs any more


@pytest.mark.slow
def test_the_pooled_page_reads_every_window_and_keeps_the_one_window_verdicts(tmp_path):
    r = basin.c06_c07(profile="smoke", n_seeds=2, gammas=[0.5, 1.1], window_frac=0.25, pooled=True, none=True,
                      windows={"middle": 0.375, "early": 0.0, "late": 0.75}, results_dir=str(tmp_path / "results"),
                      workers=0)
    n = r.numbers
    assert {"one_window_verdict", "one_window_verdict_c7", "pooled_diff", "observed_power"} <= set(n)
    assert set(r.pooled["gamma"]) == {0.5, 1.1} and "k none" in r.pooled
    assert r.sensitivity["rule"].sum() == 1 and r.sensitivity.loc[r.sensitivity["rule"], "window"].item().startswith(
        "pooled")
    assert {row["verdict"] for row in r.rows} <= {"reproduced", "partly reproduced", "not reproduced", "inconclusive"}
    pooled = r.sensitivity[r.sensitivity["window"].str.startswith("pooled")]
    assert list(pooled["a seed reasons when"]) == list(basin.SUCCESS.values())  # the rule's metric, then the others
    assert n["pooled_any_verdict"] == pooled["C6"].iloc[1] and n["pooled_final_verdict"] == n["verdict"]


def test_the_page_recomputes_what_the_one_window_design_before_it_said():
    d = basin.c06_c07_design(profile="smoke", n_seeds=16, gammas=[0.25, 0.5, 0.7, 1.0, 1.1, 1.5],
                             windows={"middle": 0.375, "early": 0.0}, window_frac=0.25, pooled=True)
    # under the first window, γ 0.5 reasons in seeds 0-10 and γ 1.1 in seeds 0-3; the 4 seeds past the earlier
    # design's 12 (and γ 0.25) reason everywhere, and must not count
    ok = {0.5: set(range(11)), 1.1: set(range(4))}
    runs = pd.DataFrame([{"window": w, "gamma": g, "seed": s,
                          "final_success": s >= 12 or g == 0.25 or s in ok.get(g, set(range(6)))}
                         for w in ("middle", "early") for g in d.gammas for s in d.seeds])
    runs = runs.assign(final_ood=runs["final_success"] * 0.9, max_ood=0.9, final_trained_shift=0.0, t_mem=10.0,
                       fate="memorizing")
    said = basin.earlier_reading(runs, d)
    assert (said["earlier_k_g0p5"], said["earlier_k_g1p1"], said["earlier_n"]) == (11, 4, 12)
    assert said["earlier_verdict"] == "not reproduced"  # 7 seeds at γ 0.5 only, none at 1.1 only: reversed
    fewer = basin.c06_c07_design(profile="smoke", n_seeds=4, gammas=[0.5, 1.1], windows={"middle": 0.375,
                                 "early": 0.0}, window_frac=0.25, pooled=True)
    assert basin.earlier_reading(runs, fewer) == {}  # a design without the earlier one's γ cannot say it


def test_the_box_reads_the_pooled_shares_where_the_page_pools():
    from critwin_lib.claims import boxes

    n = {"seeds": 16, "verdict": "not reproduced", "verdict_c7": "inconclusive", "pooled_diff": -0.3,
         "pooled_lo": -0.45, "pooled_hi": -0.15, "pooled_power": 0.99, "pooled_power_agree": 0.65,
         "basin_g0p5": 0.6, "basin_g1p1": 0.3, "basin_g0p25": 0.5, "basin_lo_g0p5": 0.4, "k_g0p5": 11, "n_g0p5": 16}
    text = boxes.c06_c07_box(n)
    assert "γ 0.25: 0.50, γ 0.5: 0.60, γ 1.1: 0.30 (mean over 16 seeds)" in text
    assert "-0.30 [-0.45, -0.15]" in text and "reversed here" in text and "C6 not reproduced, C7 inconclusive" in text
    table = pd.DataFrame({"C6": ["reproduced", "not reproduced", "reproduced", "inconclusive"]})
    ahead = boxes.c06_c07_box({**n, "pooled_hi": 0.1, "verdict": "reproduced", "observed_power": 0.574,
                               "pooled_p": 0.046}, table)
    assert "reversed" not in ahead
    assert "says *reproduced* in 57% of designs like this one (one-sided p 0.046)" in ahead
    assert "C6 flips in 2 of 4 rows of the sensitivity table" in ahead
    assert "fitted or not" not in ahead  # the same verdict from OOD accuracy alone: nothing to add
    unfit = {"unfitted_window": "late", "unfitted_k_g0p5": 10, "unfitted_n_g0p5": 16, "unfitted_k_g1p1": 3,
             "unfitted_n_g1p1": 16}
    told = boxes.c06_c07_box({**n, "pooled_hi": 0.1, "verdict": "reproduced", "observed_power": 0.574,
                              "pooled_p": 0.046, "pooled_any_verdict": "inconclusive", **unfit}, table)
    assert ("Read from OOD accuracy alone, fitted or not, C6 is *inconclusive* (the late window leaves 10 of 16 runs "
            "unfitted at γ 0.5, 3 of 16 at γ 1.1).") in told


def test_the_page_says_where_the_fitted_rule_bites():
    runs = pd.DataFrame([{"window": w, "gamma": g, "seed": s,
                          "fate": "not fitted" if (w, g) == ("late", 0.5) and s < 10 or w == "none" else "reasoning"}
                         for w in ("early", "late", "none") for g in (0.5, 1.1) for s in range(16)])
    assert basin_share.unfitted(runs) == {"unfitted_window": "late", "unfitted_k": 10, "unfitted_n": 32,
                                    "unfitted_k_g0p5": 10, "unfitted_n_g0p5": 16, "unfitted_k_g1p1": 0,
                                    "unfitted_n_g1p1": 16}
    assert basin_share.unfitted(runs.assign(fate="reasoning")) == {}  # every run fitted: nothing to say
