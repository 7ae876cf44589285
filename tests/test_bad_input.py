"""Careless input never becomes a verdict: values past the documented bounds are refused before training, numbers
read the same in any float syntax, and a run whose loss stops being finite stops, is stored as diverged, and keeps
its page from reading a verdict."""

import math

import pytest

from critwin_lib import checks, config, experiment, train
from critwin_lib.claims import core
from critwin_lib.config import ConfigError, replace


@pytest.mark.parametrize("dotted, value, message", [
    ("model.init_gamma", 1.0e30, "model.init_gamma: the init scale γ must be at most 10"),
    ("model.init_gamma", checks.MAX_GAMMA + 0.5, "model.init_gamma: the init scale γ must be at most 10"),
])
def test_gamma_past_its_bound_is_refused_before_training(tiny_cfg, dotted, value, message):
    with pytest.raises(ConfigError, match=f"^{message}"):
        replace(tiny_cfg, **{dotted: value})
    assert replace(tiny_cfg, **{dotted: checks.MAX_GAMMA}).model.init_gamma == checks.MAX_GAMMA


def test_lambda_past_its_bound_is_refused_wherever_it_is_given():
    for make in (lambda: config.WDSchedule.constant(1e30), lambda: config.WDSchedule.window(0, 10, 101.0),
                 lambda: config.WDSchedule(ramps=((0, 10, 0.0, 1e9),))):
        with pytest.raises(ConfigError, match="must be at most 100"):
            make()
    with pytest.raises(ConfigError, match="^window_lambda: λ must be at most 100"):
        core.window_lambda("mid-fit-matrices", 1e30)
    assert config.WDSchedule.constant(checks.MAX_LAMBDA).base == checks.MAX_LAMBDA


def test_numbers_read_the_same_in_any_float_syntax_and_bad_yaml_is_one_line(capsys):
    from critwin_lib import notebooks

    assert notebooks.parameter_value("gamma", "1e30") == notebooks.parameter_value("gamma", "1.0e+30") == 1e30
    assert notebooks.parameter_value("n_seeds", "12") == 12 and isinstance(notebooks.parameter_value("n", "12"), int)
    assert notebooks.parameter_value("gammas", "[0.5, 1e0]") == [0.5, 1.0]
    assert notebooks.main(["run", "-p", "placements", "{early: [", "notebooks/c01_critical_window.ipynb"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: placements: not a valid value"), err
    assert notebooks.main(["run", "--profile", "smoke", "-p", "gamma", "1e30",
                           "notebooks/c01_critical_window.ipynb"]) == 1  # refused as a number, before training
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "init scale γ must be at most 10" in err[0], err


def test_a_run_whose_loss_stops_being_finite_stops_and_is_stored_as_diverged(tmp_path, tiny_cfg, monkeypatch):
    real = train.training_step

    def breaks_at_step_5(*args, **kwargs):
        step, calls = real(*args, **kwargs), []

        def wrapped(*a):
            calls.append(1)
            loss = step(*a)
            return math.nan if len(calls) >= 6 else loss
        return wrapped

    monkeypatch.setattr(train, "training_step", breaks_at_step_5)
    history = train.train(tiny_cfg)
    assert history.attrs["diverged_at"] == 5 and history["step"].tolist() == [0, 4, 6]  # evaluated, then stopped
    columns, meta = experiment.execute(config.to_dict(tiny_cfg))
    assert meta["diverged_at"] == 5 and columns["step"][-1] == 6
    store = experiment.Store(tmp_path)
    import pandas as pd

    store.save(tiny_cfg, pd.DataFrame(columns), meta)
    spec = [({"condition": "x", "seed": 0}, tiny_cfg)]
    with pytest.raises(core.DivergedRuns, match=r"^1 of 1 runs diverged .* at step 5\): no verdict"):
        core.fetch(spec, str(tmp_path), train_missing=False, workers=0)


def test_a_run_that_trains_normally_records_no_divergence(tiny_cfg):
    history = train.train(tiny_cfg)
    assert "diverged_at" not in history.attrs and history["step"].iloc[-1] == tiny_cfg.train.steps


def test_too_many_workers_is_one_line_before_training(tiny_cfg, tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "execute_many", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(ConfigError, match=r"^workers: at most \d+ worker processes on this machine"):
        experiment.sweep([tiny_cfg], tmp_path, workers=500, progress=False)


def test_a_full_disk_mid_sweep_stops_at_the_first_failed_save(tiny_cfg, tmp_path, monkeypatch):
    import errno

    cfgs = [replace(tiny_cfg, **{"train.seed": s}) for s in range(3)]
    trained = []
    monkeypatch.setattr(experiment.Store, "check_writable", lambda self, n: None)  # the disk fills after the check
    real_execute_many = experiment.execute_many

    def counting(*a, **k):
        trained.append(1)
        return real_execute_many(*a, **k)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(experiment, "execute_many", counting)
    monkeypatch.setattr(experiment.Store, "_place", full)
    with pytest.raises(experiment.ResultsNotWritable, match="the disk is full .* trains only what is missing"):
        experiment.sweep(cfgs, tmp_path, workers=0, progress=False)
    assert len(trained) == 1 and not [p for p in (tmp_path / "runs").iterdir()]  # no temporary folder left


def test_the_scoreboard_without_a_results_folder_is_one_line(tmp_path, capsys):
    from critwin_lib.claims import scoreboard

    assert scoreboard.main(["--profile", "smoke", "--results", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: no results folder")


def test_a_placement_claim_with_one_placement_is_refused():
    from critwin_lib.claims import other_tasks
    from critwin_lib.sizes import GROK

    with pytest.raises(ConfigError, match="^placements: must name at least two windows"):
        other_tasks.conditions(GROK["smoke"], [1.0], 1.0, {"early": 0.0}, 0.25)


def test_a_missing_run_is_named_with_its_folder(tmp_path, capsys):
    """`make book` (no training) names the runs it lacks, and says when a folder is there without its meta.json."""
    import shutil

    from critwin_lib import notebooks
    from critwin_lib.claims import registry

    nb = registry.page("c01_critical_window").notebook
    params = {"profile": "smoke", "results_dir": str(tmp_path), "train_missing": False}
    first = registry.planned_runs(nb.stem, {**registry.profile_defaults(nb, "smoke"), **params})[0]
    folder = tmp_path / "runs" / experiment.run_key(first)
    folder.mkdir(parents=True)
    assert notebooks.main(["run", "--no-train", "--profile", "smoke", "-p", "results_dir", str(tmp_path),
                           str(nb)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and f"{folder} (incomplete: meta.json missing)" in err
    shutil.rmtree(folder)
