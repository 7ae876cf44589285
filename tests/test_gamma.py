"""The γ claims (C5, C6, C7) and the theory claim (C10): their errors and their measurements (rules: test_rules)."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import theory
from critwin_lib.claims import core, init_scale, onsets, rates
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
    (init_scale.c06_c07, {"n_seeds": 2, "gammas": [0.7, 1.1], "window_start_frac": 0.0, "window_frac": 0.25}, "gammas"),
    (init_scale.c06_c07, {"n_seeds": 2, "gammas": [0.5, 1.1], "window_start_frac": 0.9, "window_frac": 0.25},
     "window_start_frac"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [0.5, 1.1],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12}, "c5_gammas"),
    (rates.c10, {"n_seeds": 2, "rate_gammas": [1.0], "c5_n_seeds": 2, "c5_gammas": [1.0],
                  "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 0}, "theory_seeds"),
    (init_scale.x01, {"n_seeds": 2, "gammas": [1.0], "onset_fracs": [0.0], "window_frac": 0.25, "theory_seeds": 12,
                  "protocol_name": "nope"}, "protocol_name"),
])
def test_bad_parameters_fail_before_any_training(tmp_path, fn, params, match):
    with pytest.raises(ConfigError, match=match):
        fn(profile="smoke", results_dir=str(tmp_path / "results"), **params)
    assert not (tmp_path / "results").exists()
