"""The γ claims (C5, C6, C7) and the theory claim (C10): their rules, their errors, their measurements."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import claims, stats, theory
from critwin_lib.config import ConfigError

GAMMAS = [0.5, 0.7, 1.0, 1.1, 1.5]


def test_exact_binomial_interval_matches_closed_forms():
    lo, hi = stats.binomial_ci(12, 12)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 12))  # k = n: lo = (α/2)^(1/n)
    lo, hi = stats.binomial_ci(0, 8)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 8))
    lo, hi = stats.binomial_ci(8, 12)
    assert 0.34 < lo < 8 / 12 < hi < 0.91


def test_gamma_conventions_give_the_exponent_equivalent():
    t = claims.gamma_conventions([0.5, 1.0])
    assert list(t["std"]) == pytest.approx([0.125, 0.25])
    assert t["gamma_exponent"].iloc[0] == pytest.approx(0.5)  # 64^-0.5 = 0.125
    assert (np.asarray(64.0) ** -t["gamma_exponent"]).tolist() == pytest.approx(t["std"].tolist())


@pytest.mark.parametrize("bad", [[], [0.5, -1.0], [1.0, 1.0], "1.0", [True]])
def test_bad_gamma_lists_are_refused(bad):
    with pytest.raises(ConfigError, match="gammas"):
        claims.gamma_list(bad)


def _edges(edge, pm=800.0):
    return pd.DataFrame({"gamma": GAMMAS[:len(edge)], "edge": edge, "edge_pm": pm}).dropna()


def test_c5_rule():
    assert claims._verdict_c05(_edges([4000, 4000, 2400, 2400, 800])) == "reproduced"
    assert claims._verdict_c05(_edges([4000, 2400, 4000, 2400, 4000])) == "not reproduced"  # ρ = 0
    assert claims._verdict_c05(_edges([2400, 2400, 2400, 2400, 800], pm=1000)) == "partly reproduced"  # overlap
    assert claims._verdict_c05(_edges([800, 1600, 2400, 3200, 4000])) == "not reproduced"  # later with γ
    assert claims._verdict_c05(_edges([2400])) == "not reproduced"  # one edge says nothing about a trend


def _basin(k, n=8):
    return pd.DataFrame({"gamma": GAMMAS, "reasoning": k, "seeds": n,
                         "final_ood": np.asarray(k) / n, "share": np.asarray(k) / n})


def test_c6_and_c7_rules():
    b = _basin([5, 8, 8, 8, 6]).set_index("gamma")
    assert claims._verdict_c06(b.loc[0.5], b.loc[1.1]) == "reproduced"  # 8/8 vs 5/8: gap 0.375
    b = _basin([7, 8, 8, 8, 6]).set_index("gamma")
    assert claims._verdict_c06(b.loc[0.5], b.loc[1.1]) == "partly reproduced"
    assert claims._verdict_c06(b.loc[1.1], b.loc[0.5]) == "not reproduced"
    assert claims._verdict_c07(_basin([5, 8, 7, 7, 6])) == ("reproduced", 0.7)
    assert claims._verdict_c07(_basin([5, 8, 7, 7, 8])) == ("partly reproduced", 0.7)  # tie broken by OOD
    assert claims._verdict_c07(_basin([8, 7, 7, 7, 6])) == ("not reproduced", 0.5)


def test_c10_rule():
    flat = {"exponent": 0.1, "lo": -0.3, "hi": 0.4}
    steep = {"exponent": 2.1, "lo": 1.5, "hi": 2.6}
    nan = {"exponent": math.nan, "lo": math.nan, "hi": math.nan}
    assert claims._verdict_c10(flat, steep) == "reproduced"
    assert claims._verdict_c10(flat, nan) == "partly reproduced"
    assert claims._verdict_c10({"exponent": -3, "lo": -4, "hi": -2}, {"exponent": 1, "lo": 0.5, "hi": 1.5}) \
        == "not reproduced"


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
    (claims.c05, {"n_seeds": 2, "gammas": [0.5, 0.5], "onset_fracs": [0.0], "window_frac": 0.25}, "gammas"),
    (claims.c05, {"n_seeds": 2, "gammas": [1.0], "onset_fracs": [0.9], "window_frac": 0.25}, "onsets"),
    (claims.c06, {"n_seeds": 2, "gammas": [0.7, 1.1], "window_start_frac": 0.0, "window_frac": 0.25}, "gammas"),
    (claims.c06, {"n_seeds": 2, "gammas": [0.5, 1.1], "window_start_frac": 0.9, "window_frac": 0.25},
     "window_start_frac"),
    (claims.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [0.5, 1.1],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12}, "c5_gammas"),
    (claims.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 0}, "theory_seeds"),
    (claims.x01, {"n_seeds": 2, "gammas": [1.0], "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12,
                  "protocol_name": "nope"}, "protocol_name"),
])
def test_bad_parameters_fail_before_any_training(tmp_path, fn, params, match):
    with pytest.raises(ConfigError, match=match):
        fn(profile="smoke", results_dir=str(tmp_path / "results"), **params)
    assert not (tmp_path / "results").exists()
