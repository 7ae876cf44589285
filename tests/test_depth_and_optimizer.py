"""C11 and C12 (`depth`, `optimizer`, on `anchors`): the conditions at each depth and optimizer, SGD's
weight-decay accounting, the paired contrasts and seed spread, the verdict rules, and bad input."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import config, experiment, protocol, schedules
from critwin_lib.claims import anchors, depth, optimizer
from critwin_lib.config import ConfigError
from critwin_lib.sizes import get_profile

PLACEMENTS = {"early": 0.0, "middle": 0.375, "late": 0.75}


def test_the_sgd_window_shrinks_the_weights_per_step_as_the_adamw_window():
    adamw, sgd = protocol.PROTOCOLS["mid-fit-matrices"], protocol.PROTOCOLS["sgd-mid-fit-matrices"]
    momentum = config.TrainConfig().momentum
    assert sgd.optimizer == "sgd" and adamw.optimizer == "adamw" and sgd.wd_params == adamw.wd_params
    assert sgd.lr * sgd.window_lambda / (1 - momentum) == pytest.approx(adamw.lr * adamw.window_lambda)
    # steady state of torch's SGD on a parameter whose gradient is only the coupled L2 term: v = λp / (1 - μ)
    v, p, lr, lam = 0.0, 1.0, sgd.lr, sgd.window_lambda
    for _ in range(500):
        v = momentum * v + lam * p
    assert lr * v == pytest.approx(adamw.lr * adamw.window_lambda, rel=1e-6)


def test_an_sgd_run_is_its_own_run_and_trains_with_sgd():
    P = get_profile("smoke")
    wd = protocol.window(P, 0.375, 0.25, protocol.PROTOCOLS["sgd-mid-fit-matrices"].window_lambda)
    sgd = protocol.anchor_run(P, 0, wd, protocol="sgd-mid-fit-matrices")
    adamw = protocol.anchor_run(P, 0, wd, protocol="mid-fit-matrices")
    assert (sgd.train.optimizer, sgd.train.momentum, sgd.train.wd_params) == ("sgd", 0.9, "matrices")
    assert experiment.run_key(sgd) != experiment.run_key(adamw)
    assert adamw == protocol.anchor_run(P, 0, wd)  # the AdamW default's runs (and keys) are unchanged


def test_windows_carry_the_constant_budget_and_placements_are_named():
    P = get_profile("quick")
    conds = anchors.anchor_conditions(P, [0.0, 0.375, 0.75], 0.25, 6.0)
    assert [c for c, _, _ in conds] == ["none", "full", "window", "window", "window"]
    full = conds[1][2]
    assert full.base == pytest.approx(1.5)
    for _, onset, wd in conds[2:]:
        assert schedules.budget(wd, P.steps) == pytest.approx(schedules.budget(full, P.steps))
        assert wd.windows[0][0] == onset
    runs = pd.DataFrame({"condition": ["none", "full", "window", "window"], "onset": [math.nan, math.nan, 2400, 1600]})
    names = anchors.name_placements(runs, P, PLACEMENTS).tolist()
    assert names == ["none", "full", "middle", "onset 1600"]


def test_paired_contrasts_difference_each_seed_with_itself():
    rows = [{"optimizer": "SGD", "seed": s, "name": n, "final_ood": v}
            for s, vals in enumerate([(0.1, 0.9, 0.2, 0.3, 0.1), (0.2, 0.7, 0.1, 0.5, 0.2)])
            for n, v in zip(["none", "middle", "full", "early", "late"], vals, strict=True)]
    c = optimizer.paired_contrasts(pd.DataFrame(rows), "optimizer").set_index("contrast")
    assert c.loc["middle − none", "mean"] == pytest.approx(0.65)
    assert c.loc["middle − full", "mean"] == pytest.approx(0.65)
    assert (c.loc["middle − full", "lo"], c.loc["middle − full", "hi"]) == pytest.approx((0.6, 0.7))
    assert c.loc["full − none", "mean"] == pytest.approx(0.0) and (c["n"] == 2).all()


def test_seed_spread_is_the_pooled_sd_over_onsets():
    rows = [{"condition": "window", "onset": o, "seed": s, "final_ood": v}
            for o, vals in ((0, [0.0, 1.0, 0.0, 1.0]), (800, [0.5, 0.5, 0.5, 0.5])) for s, v in enumerate(vals)]
    sd, lo, hi = depth.spread_ci(pd.DataFrame(rows), n_boot=200)
    assert sd == pytest.approx(np.std([0, 1, 0, 1], ddof=1) / 2)
    assert 0 <= lo <= sd <= hi


def test_the_sgd_learning_rate_is_the_one_fitting_nearest_mid_run():
    assert optimizer.mid_fit_lr({0.01: 5000.0, 0.03: 1900.0, 0.1: 800.0}, 6400) == 0.03
    assert optimizer.mid_fit_lr({0.01: math.inf, 0.03: 2500.0}, 6400) == 0.03  # never fitted: out
    assert optimizer.mid_fit_lr({0.01: 4500.0, 0.03: 1900.0}, 6400) == 0.01  # a tie: the lower rate
    assert math.isnan(optimizer.mid_fit_lr({0.01: math.inf}, 6400))


C11 = {"profile": "smoke", "n_seeds": 0, "gamma": 1.0, "depths": [2, 4], "onset_fracs": [0.0, 0.375, 0.75],
       "placements": PLACEMENTS, "window_frac": 0.25, "workers": 0}
C12 = {"profile": "smoke", "n_seeds": 0, "gamma": 1.0, "placements": PLACEMENTS, "window_frac": 0.25,
       "lr_grid": [0.03, 0.1], "calibration_seeds": 1, "workers": 0}


@pytest.mark.parametrize("claim, kw, name", [
    ("c11", {"depths": [2, 2]}, "depths"),
    ("c11", {"depths": [2]}, "depths"),
    ("c11", {"onset_fracs": [0.0, 0.8]}, "onset_fracs"),
    ("c11", {"placements": {"early": 0.0, "middle": 0.5, "late": 0.75}}, "placements"),
    ("c11", {"protocol_name": "fast"}, "protocol_name"),
    ("c12", {"lr_grid": [0.1, -1]}, "lr_grid"),
    ("c12", {"calibration_seeds": 0}, "calibration_seeds"),
    ("c12", {"sgd_protocol": "mid-fit"}, "sgd_protocol"),
    ("c12", {"placements": {"early": 0.0}}, "placements"),
    ("c12", {"profile": "huge"}, "profile"),
])
def test_bad_parameters_fail_before_any_training(tmp_path, claim, kw, name):
    params = {**(C11 if claim == "c11" else C12), "results_dir": str(tmp_path / "results")}
    with pytest.raises(ConfigError, match=f"^{name}"):
        (depth.c11 if claim == "c11" else optimizer.c12)(**{**params, **kw})
    assert not (tmp_path / "results").exists()


def _c12_runs(fates: dict[tuple[str, str], list[bool]]) -> pd.DataFrame:
    return pd.DataFrame([{"optimizer": o, "name": name, "seed": s, "fate": "reasoning" if ok else "memorizing"}
                         for (o, name), oks in fates.items() for s, ok in enumerate(oks)])


def test_c12_parts_on_fates_reach_holds_rejected_and_undecided():
    n = 8
    yes, no = [True] * n, [False] * n
    holds = optimizer.c12_parts(_c12_runs({("SGD", "middle"): yes, ("SGD", "none"): no, ("SGD", "full"): no,
                                            ("AdamW", "middle"): yes, ("AdamW", "full"): yes}))
    assert [p["state"] for p in holds.values()] == ["holds", "holds", "holds"]
    rejected = optimizer.c12_parts(_c12_runs({("SGD", "middle"): no, ("SGD", "none"): yes, ("SGD", "full"): yes,
                                               ("AdamW", "middle"): yes, ("AdamW", "full"): no}))
    assert [p["state"] for p in rejected.values()] == ["rejected", "rejected", "rejected"]
    few = optimizer.c12_parts(_c12_runs({("SGD", "middle"): yes[:4], ("SGD", "none"): no[:4],
                                          ("SGD", "full"): no[:4], ("AdamW", "middle"): yes[:4],
                                          ("AdamW", "full"): yes[:4]}))
    assert {p["state"] for p in few.values()} == {"undecided"}  # 4 seeds cannot reach p < 0.05


def _depth_runs(ok: dict[int, dict[int, list[bool]]], ood: dict[int, float]) -> pd.DataFrame:
    """Window runs: ok[layers][onset] = per-seed reasoning; final OOD 0.9 when reasoning, else ood[layers]."""
    return pd.DataFrame([{"condition": "window", "layers": d, "onset": o, "seed": s,
                          "fate": "reasoning" if r else "memorizing", "final_ood": 0.9 if r else ood[d] + 0.01 * s}
                         for d, by in ok.items() for o, seeds in by.items() for s, r in enumerate(seeds)])


def test_c11_parts_need_onset_dependence_and_tested_differences():
    n = 8
    every = {o: [True] * n for o in (0, 1600, 3200)}
    edge = {0: [False] * n, 1600: [False] * n, 3200: [True] * n}
    flat = depth.c11_parts(_depth_runs({2: edge, 4: every}, {2: 0.1, 4: 0.1}), 2, 4)
    assert flat["the window persists (onset dependence)"]["state"] == "rejected"  # works at every onset
    assert flat["lower plateau"]["state"] == "rejected"  # 4 layers reason more, seed by seed
    window = depth.c11_parts(_depth_runs({2: every, 4: edge}, {2: 0.1, 4: 0.1}), 2, 4)
    assert window["the window persists (onset dependence)"]["state"] == "holds"
    assert window["lower plateau"]["state"] == "holds"
    assert window["more seed variance"]["state"] == "holds"  # the memorizing seeds spread, the reasoning ones do not
    assert flat["more seed variance"]["state"] == "rejected"


def test_c12_parts_are_one_holm_family():
    """5 of 8 seeds reason with the SGD window and none without: p = 1/32 holds alone, but the three parts are one
    family (one rejecting part decides), and 3 × 1/32 is not below 0.05; the constant, identical to the window,
    is rejected by the paper's size either way."""
    n = 8
    some, no, yes = [True] * 5 + [False] * 3, [False] * n, [True] * n
    parts = optimizer.c12_parts(_c12_runs({("SGD", "middle"): some, ("SGD", "none"): no, ("SGD", "full"): some,
                                           ("AdamW", "middle"): yes, ("AdamW", "full"): yes}))
    works, worse, masked = (parts[k] for k in optimizer.C12_PARTS)
    assert works["p"] == pytest.approx(1 / 32) and works["p_holm"] == pytest.approx(3 / 32)
    assert (works["unadjusted"], works["state"]) == ("holds", "undecided")
    assert worse["state"] == worse["unadjusted"] == "rejected" and worse["no_size"] == "undecided"
    assert masked["state"] == "undecided"


def test_c11_parts_are_one_holm_family_with_each_parts_p():
    n = 8
    every = {o: [True] * n for o in (0, 1600, 3200)}
    edge = {0: [False] * n, 1600: [False] * n, 3200: [True] * n}
    parts = depth.c11_parts(_depth_runs({2: edge, 4: every}, {2: 0.1, 4: 0.1}), 2, 4)
    for v in parts.values():
        assert 0 <= v["p_holm"] <= 1 and v["state"] in ("holds", "rejected", "undecided")
    persists = parts["the window persists (onset dependence)"]
    assert persists["found"] == 0 and persists["state"] == persists["unadjusted"] == "rejected"
