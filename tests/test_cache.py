import dataclasses
import json
import multiprocessing
from pathlib import Path

import pandas as pd
import pytest

from critwin_lib import checksums, config, experiment
from critwin_lib.experiment import MissingResults, Store, run_key


def test_key_is_stable_for_a_fixed_config():
    # Changes only when the canonical config format or RESULTS_VERSION changes (then bump results).
    assert run_key(config.RunConfig()) == "4b4aaea02fb1"


def every_field_changed(cfg: config.RunConfig):
    changes = {
        "task": {"variant": "A", "n_train_per_pair": 7, "n_eval": 9, "data_seed": 5},
        "model": {"n_layer": 4, "d_model": 32, "n_head": 4, "d_mlp": 128, "max_pos": 12, "init_gamma": 1.5,
                  "init_sigma0": 0.2, "init_mode": "exponent"},
        "train": {"steps": 999, "batch_size": 7, "lr": 1e-2, "warmup_steps": 3, "beta1": 0.8, "beta2": 0.99,
                  "eps": 1e-6, "grad_clip": 0.5, "eval_every": 3, "wd_params": "matrices", "seed": 4,
                  "instrument": True, "optimizer": "sgd", "momentum": 0.5},
        "wd": {"base": 0.1, "windows": ((0, 5, 1.0),), "ramps": ((5, 9, 1.0, 0.0),)},
    }
    for section, fields in changes.items():
        names = {f.name for f in dataclasses.fields(getattr(cfg, section))} - {"name", "vocab_size"}
        assert names == set(fields), f"update this test for new fields of {section}"
        for name, value in fields.items():
            yield f"{section}.{name}", config.replace(cfg, **{f"{section}.{name}": value})


def test_key_changes_with_every_field():
    base = config.RunConfig()
    keys = {run_key(base)}
    for field, cfg in every_field_changed(base):
        k = run_key(cfg)
        assert k not in keys, field
        keys.add(k)


def test_run_trains_once_then_loads(tmp_path, tiny_cfg, monkeypatch):
    first = experiment.run(tiny_cfg, tmp_path)
    assert Store(tmp_path).has(first.key)
    assert set(p.name for p in (tmp_path / "runs" / first.key).iterdir()) == {"config.json", "history.parquet",
                                                                               "meta.json", "sha256.json"}
    monkeypatch.setattr(experiment, "execute", lambda *a, **k: pytest.fail("trained again"))
    again = experiment.run(tiny_cfg, tmp_path)
    pd.testing.assert_frame_equal(first.history, again.history)
    assert again.config == tiny_cfg
    meta = json.loads((tmp_path / "runs" / first.key / "meta.json").read_text())
    assert {"wall_s", "torch", "git", "results_version", "key"} <= set(meta)


def test_an_interrupted_run_leaves_no_entry(tmp_path, tiny_cfg, monkeypatch):
    import critwin_lib.train as train_mod

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(train_mod, "train", interrupted)
    with pytest.raises(KeyboardInterrupt):
        experiment.run(tiny_cfg, tmp_path)
    assert Store(tmp_path).keys() == []


def test_a_crash_while_writing_leaves_no_entry(tmp_path, tiny_cfg, monkeypatch):
    columns, meta = experiment.execute(config.to_dict(tiny_cfg))

    def broken(self, *a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", broken)
    with pytest.raises(OSError):
        Store(tmp_path).save(tiny_cfg, pd.DataFrame(columns), meta)
    assert Store(tmp_path).keys() == [] and list((tmp_path / "runs").iterdir()) == []


def test_sweep_serial_and_no_training_mode(tmp_path, tiny_cfg):
    cfgs = [config.replace(tiny_cfg, **{"train.seed": s}) for s in range(2)]
    with pytest.raises(MissingResults, match="2 of 2 runs"):
        experiment.sweep(cfgs, tmp_path, train_missing=False)
    out = experiment.sweep(cfgs + cfgs[:1], tmp_path, workers=0, progress=False)
    assert [r.config for r in out.results] == cfgs + cfgs[:1] and out.failures == []
    again = experiment.sweep(cfgs, tmp_path, train_missing=False)
    assert [r.key for r in again.results] == [run_key(c) for c in cfgs]
    labels = [{"seed": s} for s in range(2)]
    assert len(experiment.frame(again.results, labels)) == 2 * 4
    assert list(experiment.summaries(again.results, labels)["seed"]) == [0, 1]


def test_sweep_reports_a_failed_run_and_keeps_the_others(tmp_path, tiny_cfg, monkeypatch):
    real = experiment.execute

    def flaky(cfg_dict, compile=None, **kw):
        if cfg_dict["train"]["seed"] == 1:
            raise RuntimeError("boom")
        return real(cfg_dict, compile, **kw)

    monkeypatch.setattr(experiment, "execute", flaky)
    cfgs = [config.replace(tiny_cfg, **{"train.seed": s}) for s in range(3)]
    with pytest.raises(experiment.SweepFailed, match="1 of 3 runs failed"):
        experiment.sweep(cfgs, tmp_path, workers=0, progress=False)
    out = experiment.sweep(cfgs, tmp_path, workers=0, progress=False, allow_failures=True)
    assert out.results[1] is None and out.results[0] is not None and "boom" in out.failures[0][1]
    assert len(Store(tmp_path).keys()) == 2


def test_a_field_added_later_does_not_rekey_old_runs_while_it_holds_its_neutral_value(monkeypatch):
    cfg = config.RunConfig()
    before = json.loads(config.canonical_json(cfg))
    del before["train"]["wd_params"]  # as if wd_params had been added after the results were stored
    monkeypatch.setitem(config.HASH_NEUTRAL_DEFAULTS, ("train", "wd_params"), "all")
    assert json.loads(config.canonical_json(cfg)) == before
    assert "wd_params" in config.canonical_json(config.replace(cfg, **{"train.wd_params": "matrices"}))


def test_the_key_hashes_the_init_std_not_its_factoring_into_gamma_and_sigma0():
    cfg = config.RunConfig(model=config.ModelConfig(init_gamma=2.0))  # σ₀ = d^-1/2 = 0.125
    same = config.replace(cfg, **{"model.init_gamma": 1.0, "model.init_sigma0": 0.25})
    assert same.model.init_std == cfg.model.init_std
    assert experiment.run_key(same) == experiment.run_key(cfg)
    assert experiment.run_key(config.replace(cfg, **{"model.init_sigma0": 0.25})) != experiment.run_key(cfg)


def test_instrumenting_a_run_gives_it_its_own_key_and_leaves_old_keys_alone():
    cfg = config.RunConfig()
    assert "instrument" not in config.canonical_json(cfg)
    assert experiment.run_key(config.replace(cfg, **{"train.instrument": True})) != experiment.run_key(cfg)


# ------------------------------------------------------------------ results nobody can silently corrupt
@pytest.fixture
def stored(tmp_path, tiny_cfg):
    return Store(tmp_path), experiment.run(tiny_cfg, tmp_path)


def test_an_edited_number_in_a_stored_history_stops_loading_with_one_line(stored):
    store, run = stored
    path = store.path(run.key) / "history.parquet"
    h = pd.read_parquet(path)
    h.loc[h.index[-1], "acc/test_ood"] = 0.69
    h.to_parquet(path, index=False)
    with pytest.raises(experiment.DamagedRun) as e:
        experiment.sweep([run.config], store.root, train_missing=False)
    msg = str(e.value)
    assert "\n" not in msg and run.key in msg and "history.parquet changed" in msg and "delete" in msg


def test_a_config_edited_to_another_seed_no_longer_matches_its_folder(stored):
    store, run = stored
    path = store.path(run.key) / "config.json"
    d = json.loads(path.read_text())
    d["train"]["seed"] = 7
    path.write_text(json.dumps(d))
    checksums.seal(store.path(run.key), resealed="test")  # even with sums that match the edit, the key gives it away
    with pytest.raises(experiment.DamagedRun, match="hashes to .*, not to its folder's name"):
        store.load(run.key)


def test_an_incomplete_run_folder_is_trained_again_and_replaced(stored):
    store, run = stored
    (store.path(run.key) / "meta.json").unlink()
    assert not store.has(run.key)
    again = experiment.sweep([run.config], store.root, workers=0, progress=False)
    assert again.results[0] is not None and store.has(run.key) and store.problem(run.key) is None


def test_a_second_save_of_the_same_run_is_a_no_op(stored):
    store, run = stored
    before = (store.path(run.key) / "sha256.json").read_text()
    store.save(run.config, run.history, {**run.meta, "wall_s": -1})
    assert (store.path(run.key) / "sha256.json").read_text() == before
    assert [p.name for p in store.runs.iterdir()] == [run.key]


def test_stale_temporary_folders_are_cleared_but_a_live_one_is_kept(tmp_path):
    import os
    import platform

    store = Store(tmp_path)
    store.runs.mkdir(parents=True)
    dead = store.runs / f".tmp-abc-{platform.node()}-{2**22 + 12345}-0000"  # no such pid
    live = store.runs / f".tmp-abd-{platform.node()}-{os.getpid()}-0000"
    dead.mkdir(), live.mkdir()
    assert store.clear_stale() == 1
    assert live.exists() and not dead.exists()


def test_clearing_stale_folders_skips_one_another_process_places_while_it_looks(tmp_path, monkeypatch):
    """Two pages training at once: one clears stale folders while the other renames its finished save into place,
    so a folder listed a moment ago is gone when it is looked at. That is not an error."""
    import os
    import platform

    store = Store(tmp_path)
    store.runs.mkdir(parents=True)
    live = store.runs / f".tmp-abd-{platform.node()}-{os.getpid()}-0000"
    live.mkdir()
    real_glob = Path.glob
    monkeypatch.setattr(Path, "glob", lambda self, pattern: [*real_glob(self, pattern),
                                                             self / f".tmp-gone-{platform.node()}-1-0000"])
    assert store.clear_stale() == 0
    assert live.exists()


def test_a_host_name_with_dashes_still_names_its_own_dead_saves(tmp_path, monkeypatch):
    import platform

    monkeypatch.setattr(platform, "node", lambda: "ip-10-0-0-1")
    store = Store(tmp_path)
    store.runs.mkdir(parents=True)
    dead = store.runs / f".tmp-abc-ip-10-0-0-1-{2**22 + 12345}-0000"
    other_host = store.runs / f".tmp-abc-other-host-{2**22 + 12345}-0000"
    dead.mkdir(), other_host.mkdir()
    assert store.clear_stale() == 1
    assert other_host.exists() and not dead.exists()


def test_a_read_only_results_folder_is_refused_before_any_training(tmp_path, tiny_cfg, monkeypatch):
    import os

    if os.geteuid() == 0:  # root writes anywhere: make the probe fail as a read-only folder would
        monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: (_ for _ in ()).throw(PermissionError(
            13, "Permission denied")))
    else:
        (tmp_path / "runs").mkdir()
        (tmp_path / "runs").chmod(0o500)
    monkeypatch.setattr(experiment, "execute", lambda *a, **k: pytest.fail("trained"))
    with pytest.raises(experiment.ResultsNotWritable, match="nothing was trained"):
        experiment.sweep([tiny_cfg], tmp_path, workers=0, progress=False)


def test_every_shipped_run_is_sealed_and_intact():
    from .conftest import REPO

    store = Store(REPO / "results")
    unsealed = [k for k in store.keys() if not (store.path(k) / "sha256.json").is_file()]
    assert not unsealed, f"{len(unsealed)} shipped runs without checksums: train them again"
    damaged = {k: why for k in store.keys() if (why := store.problem(k))}
    assert not damaged


def _save_all(root: str, runs: list, barrier) -> None:
    store = Store(root)
    for cfg, history, meta in runs:
        barrier.wait(timeout=600)  # both processes save each run at the same moment
        store.save(cfg, history, meta)


def test_two_processes_saving_the_same_runs_at_once_leave_one_sealed_copy_of_each(tmp_path, tiny_cfg):
    trained = [experiment.run(config.replace(tiny_cfg, **{"train.seed": s}), tmp_path / "a") for s in range(20)]
    runs = [(r.config, r.history, r.meta) for r in trained]
    root = Store(tmp_path / "b")
    root.runs.mkdir(parents=True)
    (root.path(trained[0].key)).mkdir()  # an incomplete folder both processes want to replace
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_save_all, args=(str(root.root), runs, barrier)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=900)  # generous: spawned processes import torch, slow on a loaded machine
    assert [p.exitcode for p in procs] == [0, 0]
    assert sorted(p.name for p in root.runs.iterdir()) == sorted(r.key for r in trained)  # no temporary folders
    for r in trained:
        assert root.problem(r.key) is None
        pd.testing.assert_frame_equal(root.load(r.key).history, r.history)
