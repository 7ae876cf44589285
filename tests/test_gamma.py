"""The γ claims (C5, C6, C7) and the theory claim (C10): their errors and their measurements (rules: test_rules)."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import experiment, theory
from critwin_lib.claims import basin, core, init_scale, onsets, rates
from critwin_lib.config import ConfigError

GAMMAS = [0.5, 0.7, 1.0, 1.1, 1.5]


def test_gamma_conventions_give_the_exponent_equivalent():
    t = onsets.gamma_conventions([0.5, 1.0])
    assert list(t["std"]) == pytest.approx([0.125, 0.25])
    assert t["gamma_exponent"].iloc[0] == pytest.approx(0.5)  # 64^-0.5 = 0.125
    assert (np.asarray(64.0) ** -t["gamma_exponent"]).tolist() == pytest.approx(t["std"].tolist())


@pytest.mark.parametrize("bad", [[], [0.5, -1.0], [1.0, 1.0], "1.0", [True]])
def test_bad_gamma_lists_are_refused(bad):
    with pytest.raises(ConfigError, match="gammas"):
        core.gamma_list(bad)


def test_rate_exponent_recovers_a_power_law_and_refuses_shrinking_rates():
    rng = np.random.default_rng(1)
    g = [0.5, 0.7, 1.0, 1.5]
    fit = theory.rate_exponent(g, [x ** 2 * (1 + 0.05 * rng.standard_normal(6)) for x in g])
    assert fit["lo"] < 2 < fit["hi"] and fit["exponent"] == pytest.approx(2, abs=0.1) and fit["n_gammas"] == 4
    fit = theory.rate_exponent(g, [np.full(4, -1.0)] * 3 + [np.ones(4)])
    assert math.isnan(fit["exponent"]) and fit["n_gammas"] == 1


def test_margin_rates_split_memorization_from_reasoning():
    steps = np.arange(0, 101, 10)
    h = pd.DataFrame({"step": steps, "margin/train": -1 + 0.03 * steps, "margin/test_ood": -1 + 0.01 * steps})
    r = theory.margin_rates(h, start=20)
    assert r["memorization"] == pytest.approx(0.02) and r["reasoning"] == pytest.approx(0.01)
    assert r["train_margin"] == pytest.approx(0.03)


def test_theory_cells_follow_the_run_fraction():
    share = theory.window_shares(theory.RateModel(), [0.5, 1.1], [0.0, 0.375, 0.75], 12)
    assert share.shape == (3, 2)
    assert share[0].max() == 0 and share[2].max() == 0  # early and late windows fail in the model
    assert share[1, 1] >= share[1, 0]  # the middle window: larger γ at least as good


@pytest.mark.parametrize("fn, params, match", [
    (init_scale.c05, {"n_seeds": 2, "gammas": [0.5, 0.5], "onset_fracs": [0.0], "window_frac": 0.25}, "gammas"),
    (init_scale.c05, {"n_seeds": 2, "gammas": [1.0], "onset_fracs": [0.9], "window_frac": 0.25}, "onsets"),
    (basin.c06_c07, {"n_seeds": 2, "gammas": [0.7, 1.1], "windows": {"early": 0.0}, "window_frac": 0.25},
     "gammas"),
    (basin.c06_c07, {"n_seeds": 2, "gammas": [0.5, 1.1], "windows": {"late": 0.9}, "window_frac": 0.25},
     "windows"),
    (basin.c06_c07, {"n_seeds": 2, "gammas": [0.5, 1.1], "windows": [0.0], "window_frac": 0.25}, "windows"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [0.5, 1.1],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12}, "c5_gammas"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 0}, "theory_seeds"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12, "sgd_lr": 0.0}, "sgd_lr"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0], "onset_fracs": [0.0],
                  "window_frac": 0.25, "theory_seeds": 12, "sensitivity_lrs": [0.003, -1]}, "sensitivity_lrs"),
    (init_scale.x01, {"n_seeds": 2, "gammas": [1.0], "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12,
                  "protocol_name": "nope"}, "protocol_name"),
])
def test_bad_parameters_fail_before_any_training(tmp_path, fn, params, match):
    with pytest.raises(ConfigError, match=match):
        fn(profile="smoke", results_dir=str(tmp_path / "results"), **params)
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("b, c, n, state", [
    (6, 0, 12, "holds"),  # 6 seeds reason at γ 1.1 only: one-sided McNemar p = 1/64
    (4, 0, 12, "undecided"),  # p = 1/16: not enough; the interval still reaches the paper's gap
    (0, 6, 12, "rejected"),  # the reverse is significant
    (1, 1, 24, "rejected"),  # no difference and an interval that excludes the paper's gap
    (0, 0, 4, "undecided"),  # 4 agreeing seeds exclude nothing
])
def test_c6_part_reaches_each_state(b, c, n, state):
    assert basin.c06_part(b, c, n) == state


def _basin(k, n=12):
    return pd.DataFrame({"gamma": GAMMAS, "reasoning": k, "seeds": n})


@pytest.mark.parametrize("k, parts", [
    ([2, 11, 12, 11, 3], ("holds", "holds")),
    ([2, 11, 12, 11, 10], ("holds", "undecided")),
    ([12, 2, 3, 2, 3], ("rejected", "undecided")),
    ([6, 6, 6, 6, 6], ("undecided", "undecided")),
])
def test_c7_pools_the_moderate_range_against_each_extreme(k, parts):
    got = basin.c07_parts(_basin(k))
    assert (got["beats the smallest γ"], got["beats the largest γ"]) == parts


def test_c6_power_grows_with_seeds_and_is_low_at_the_papers_count():
    p12, p24 = basin.c06_power(12), basin.c06_power(24)
    assert 0.2 < p12 < 0.6 and p24 > p12 and basin.c06_power(4) == 0.0


def _sweep_runs(reasoning_onsets: dict[float, list[list[int]]]) -> pd.DataFrame:
    """Window runs: for each γ, per seed, the onsets under which the seed reasons (onsets 0, 1600, 3200, 4800)."""
    rows = [{"gamma": g, "seed": s, "onset": o, "fate": "reasoning" if o in ok else "memorizing"}
            for g, seeds in reasoning_onsets.items() for s, ok in enumerate(seeds) for o in (0, 1600, 3200, 4800)]
    return pd.DataFrame(rows)


@pytest.mark.parametrize("earlier, state", [(True, "holds"), (False, "rejected")])
def test_c5_trend_reads_where_each_seeds_windows_work(earlier, state):
    late, early = [[3200, 4800]] * 4, [[0, 1600]] * 4
    runs = _sweep_runs({0.5: late if earlier else early, 1.0: [[1600, 3200]] * 4, 1.5: early if earlier else late})
    t = init_scale.c05_trend(runs)
    assert t["state"] == state and t["n"] == 12


def test_c5_trend_is_undecided_without_reasoning_seeds():
    runs = _sweep_runs({0.5: [[]] * 2, 1.0: [[0]] * 2, 1.5: [[]] * 2})
    assert init_scale.c05_trend(runs)["state"] == "undecided"
    assert init_scale.window_centroids(runs)["centroid"].isna().sum() == 4


def test_c10_sensitivity_table_applies_the_rule_to_every_regime():
    import pandas as pd

    def fit(lo, hi):
        return {"exponent": (lo + hi) / 2, "lo": lo, "hi": hi, "n_gammas": 7}

    by_regime = {rates.SGD: {"memorization": fit(-0.2, 0.2), "reasoning": fit(1.8, 2.2)},
                 rates.ADAMW: {"memorization": fit(-6, -4.5), "reasoning": fit(3.2, 6)},
                 rates.sgd_label(0.003): {"memorization": fit(-0.2, 0.9), "reasoning": fit(1.8, 2.2)}}
    runs = pd.DataFrame({"regime": [rates.SGD] * 3 + [rates.ADAMW] * 2 + [rates.sgd_label(0.003)] * 2,
                         "seed": [0, 1, 2, 0, 1, 0, 1]})
    t = rates.regime_table(by_regime, runs).set_index("regime")
    assert t.loc[rates.SGD, "verdict"] == "reproduced" and t.loc[rates.SGD, "the rule's"]
    assert t.loc[rates.ADAMW, "verdict"] == "not reproduced" and not t.loc[rates.ADAMW, "the rule's"]
    assert t.loc[rates.sgd_label(0.003), "verdict"] == "inconclusive"
    assert t["seeds per γ"].tolist() == [3, 2, 2]


def test_c10_sensitivity_table_applies_the_check_to_the_rules_row_only():
    import pandas as pd

    def fit(x):
        return {"exponent": x, "lo": x - 0.2, "hi": x + 0.2, "n_gammas": 7}

    check = rates.sgd_label(0.001)
    by_regime = {rates.SGD: {"memorization": fit(0.0), "reasoning": fit(2.0)},
                 check: {"memorization": fit(0.05), "reasoning": fit(0.9)}}
    runs = pd.DataFrame({"regime": [rates.SGD, check], "seed": [0, 0]})
    t = rates.regime_table(by_regime, runs, check).set_index("regime")
    assert t.loc[rates.SGD, "verdict"] == "inconclusive"  # reasoning moves at a third of the lr: undecided
    assert t.loc[check, "verdict"] == "partly reproduced"  # read alone, its exponents decide


@pytest.mark.parametrize("kw", [{"check_lr": 0.01}, {"check_lr": 0.02}, {"check_lr": -0.001}])
def test_c10_check_lr_must_be_a_smaller_learning_rate(tmp_path, kw):
    params = {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0], "onset_fracs": [0.0],
              "window_frac": 0.25, "theory_seeds": 12, "sgd_lr": 0.01}
    with pytest.raises(ConfigError, match="^check_lr"):
        rates.c10(profile="smoke", results_dir=str(tmp_path / "results"), **params, **kw)
    assert not (tmp_path / "results").exists()


def test_c10_reads_lr_0003_checked_at_0001():
    from critwin_lib.claims import registry

    c10 = registry.page("c10_two_timescales")
    d = registry.design_at(c10, "quick")  # the rule of 2026-12-06: lr 0.003 checked at lr 0.001, lr 0.01 beside
    regimes = {m["regime"] for m, _ in d.rate_specs}
    assert d.sgd_lr == 0.003 and d.check_lr == 0.001 and {rates.sgd_label(0.001), rates.sgd_label(0.01)} <= regimes
    per = {r: sum(m["regime"] == r for m, _ in d.rate_specs) for r in regimes}
    assert per[rates.SGD] == per[rates.sgd_label(0.001)] == per[rates.sgd_label(0.01)] == 7 * 12


def test_c1_and_c2_c3_read_their_registered_decay_set_rows_at_both_lengths_the_half_run_design_none():
    from critwin_lib.claims import registry

    c1 = registry.page("c01_critical_window")
    assert "quick" not in c1.upcoming  # read since its runs were stored
    d = registry.design_at(c1, "quick")
    assert sum(m["condition"] == "window, quarter budget" for m, _ in d.specs) == 48  # the quarter-budget window
    decay = [m for m, _ in d.specs if m["protocol"] == "mid-fit-paper-decay"]
    assert len(decay) == 64 and {m["condition"] for m in decay} == {"window", "full, equal budget"}
    c23 = registry.page("c02_c03_budget_placement")
    assert "quick" not in c23.upcoming  # read since its runs were stored (2026-12-07)
    now = registry.design_at(c23, "quick")
    decayed = [(m, cfg) for m, cfg in now.specs if m["protocol"] == "mid-fit-paper-decay"]
    assert sorted(m["condition"] for m, _ in decayed) == sorted(["early", "middle", "late"] * 32)
    shared = {experiment.run_key(cfg) for m, cfg in decayed if m["condition"] == "middle"}
    assert len(shared) == 32 and shared <= set(d.keys)  # its middle window is C1's decay-set window
    main, paper_decay = "quarter-fit-matrices-20k", "quarter-fit-paper-decay-20k"
    for page, conditions in ((c1, ["window", "full, equal budget"]), (c23, ["early", "middle", "late"])):
        assert "paper" not in page.upcoming  # read since its 48 runs were stored (2026-12-07)
        at_paper = registry.design_at(page, "paper")
        decayed = [(m, cfg) for m, cfg in at_paper.specs if m["protocol"] == paper_decay]
        assert sorted(m["condition"] for m, _ in decayed) == sorted(conditions * 12)  # 12 seeds from the first
        assert {m["seed"] for m, _ in decayed} == set(range(4, 16))
        # the half-run design was read before the decay set existed: it keeps no such row
        assert {m["protocol"] for m, _ in registry.design_at(page, "paper", True).specs} == {main}
