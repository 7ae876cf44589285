"""C8 and C9: the weight-decay conditions, the reference run's setting, the verdict rules, and bad input."""

import math

import numpy as np
import pandas as pd
import pytest

from critwin_lib import schedules, sizes
from critwin_lib.claims import grokking, other_tasks, scan_split
from critwin_lib.config import ConfigError

PLACEMENTS = {"early": 0.0, "middle": 0.375, "late": 0.75}


def test_every_window_carries_the_budget_of_the_constant():
    size = sizes.GROK["quick"]
    conds = other_tasks.conditions(size, [0.3, 1.0], 1.0, PLACEMENTS, 0.25)
    assert list(conds) == ["none", "constant λ=0.3", "constant λ=1", "early", "middle", "late"]
    for name in PLACEMENTS:
        assert schedules.budget(conds[name], size.steps) == pytest.approx(schedules.budget(conds["constant λ=1"],
                                                                                           size.steps))
        (start, end, lam), = conds[name].windows
        assert end - start == size.steps // 4 and lam == pytest.approx(4.0)
    assert conds["late"].windows[0][1] == size.steps


def test_the_reference_run_is_the_known_grokking_setting():
    cfg = grokking.grok_reference("quick")
    assert (cfg.task.p, cfg.task.op, cfg.task.train_frac) == (113, "add", 0.3)
    assert cfg.model.n_layer == 1 and cfg.model.d_model == 128 and cfg.model.n_head == 4
    t = cfg.train
    assert t.batch_size >= int(0.3 * 113 ** 2) and (t.lr, t.beta1, t.beta2) == (1e-3, 0.9, 0.98)  # full batch
    assert cfg.wd.base == 1.0 and not cfg.wd.windows and t.optimizer == "adamw"


def test_steps_to_grok_count_never_as_later_than_anything():
    h = pd.DataFrame({"step": [0, 100, 200, 300], "acc/test": [0.0, 0.5, 0.995, 1.0]})
    assert grokking.t_grok(h) == 200 and math.isnan(grokking.t_grok(h.assign(**{"acc/test": 0.5})))
    assert grokking.censored_median(pd.Series([100.0, 300.0, np.nan]), 1000) == 300
    assert grokking.censored_median(pd.Series([100.0, np.nan, np.nan]), 1000) == math.inf


def _grok_runs(window_times: dict[str, list[float]], constant: list[float]) -> pd.DataFrame:
    rows = [{"condition": "constant λ=1", "seed": s, "t_grok": t} for s, t in enumerate(constant)]
    rows += [{"condition": w, "seed": s, "t_grok": t} for w, ts in window_times.items() for s, t in enumerate(ts)]
    return pd.DataFrame(rows)


def test_grok_ratios_are_paired_by_seed_and_never_counts_as_latest():
    runs = _grok_runs({"late": [3000, np.nan, np.nan, 900]}, [1000, 1000, np.nan, np.nan])
    r = grokking.grok_ratios(runs, "late", "constant λ=1")
    assert r[0] == 3 and r[1] == math.inf and math.isnan(r[2]) and r[3] == 0
    assert grokking.grok_ratios(runs, "late", "constant λ=1", offset=2000)[0] == 1


@pytest.mark.parametrize("ratios, state", [
    ({"early": [5] * 8, "late": [6] * 8}, "holds"),  # every placement ≥ 2x slower in every seed
    ({"early": [5] * 8, "late": [0.5] * 8}, "rejected"),  # one placement groks sooner than the constant
    ({"early": [5] * 4, "late": [6] * 4}, "undecided"),  # 4 seeds cannot decide a sign test at 5 %
    ({"early": [5, 5, 5, 5, 1, 1, 1, 1], "late": [6] * 8}, "undecided"),
])
def test_c08_speed_part_reaches_each_state(ratios, state):
    n = len(next(iter(ratios.values())))
    runs = _grok_runs({w: [1000 * x for x in r] for w, r in ratios.items()}, [1000] * n)
    got, cis = grokking.c08_speed(runs, {w: 0 for w in ratios}, "constant λ=1", from_onset=False)
    assert got == state and set(cis) == set(ratios)


def test_c08_power_needs_enough_seeds_to_decide():
    assert grokking.c08_power(4, 3) == 0.0
    assert 0 < grokking.c08_power(8, 3) < grokking.c08_power(16, 3) < 1


def test_c09_reads_the_largest_budget_that_keeps_the_training_distribution_learned():
    assert scan_split.choose_budget({0.5: 0.77, 0.25: 0.91, 0.1: 0.95}) == 0.25
    assert scan_split.choose_budget({0.5: 0.92, 0.25: 0.91}) == 0.5
    assert scan_split.choose_budget({0.5: 0.60, 0.25: 0.85}) == 0.25  # none met: the closest, verdict inconclusive
    assert scan_split.budget_list([0.25, 1, 0.5]) == [1.0, 0.5, 0.25]


@pytest.mark.parametrize("claim, kw, name", [
    ("c08", {"constant_lambdas": [0.3, -1]}, "constant_lambdas"),
    ("c08", {"budget_lambda": 0}, "budget_lambda"),
    ("c09", {"placements": {"late": 0.8}}, "placements"),
    ("c09", {"window_frac": 1.5}, "window_frac"),
    ("c09", {"budget_lambdas": []}, "budget_lambdas"),
    ("c09", {"budget_lambdas": [0.5, 0.5]}, "budget_lambdas"),
    ("c09", {"budget_lambdas": 0.5}, "budget_lambdas"),
    ("c08", {"n_seeds": -2}, "n_seeds"),
    ("c09", {"profile": "huge"}, "profile"),
])
def test_bad_parameters_fail_before_any_training(tmp_path, claim, kw, name):
    params = {"profile": "smoke", "n_seeds": 0, "placements": PLACEMENTS, "window_frac": 0.25,
              "results_dir": str(tmp_path / "results"), "workers": 0}
    params.update({"constant_lambdas": [1.0], "budget_lambda": 1.0} if claim == "c08" else {"budget_lambdas": [1.0]})
    with pytest.raises(ConfigError, match=f"^{name}"):
        getattr(grokking if claim == "c08" else scan_split, claim)(**{**params, **kw})
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("ratios, sooner, size", [
    ({"early": [6] * 8, "late": [7] * 8}, "holds", "holds"),  # ≈ the paper's 5×
    ({"early": [1.5] * 8, "late": [1.6] * 8}, "holds", "rejected"),  # sooner, but the data exclude 5×
    ({"early": [1.5] * 8, "late": [0.3] * 8}, "rejected", "rejected"),  # one window groks before the constant
])
def test_c08_reads_direction_and_the_papers_size_in_its_own_metric(ratios, sooner, size):
    n = len(next(iter(ratios.values())))
    runs = _grok_runs({w: [1000 * x for x in r] for w, r in ratios.items()}, [1000] * n)
    got, cis = grokking.c08_speed(runs, {w: 0 for w in ratios}, "constant λ=1", from_onset=False)
    assert (got, grokking.c08_size(cis)) == (sooner, size)
    twice, _ = grokking.c08_speed(runs, {w: 0 for w in ratios}, "constant λ=1", False, threshold=2)
    assert twice == ("holds" if min(min(r) for r in ratios.values()) > 2 else "rejected")
