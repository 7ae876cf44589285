"""An ensemble of K runs trained as one batched model gives each run its solo history (float64, CPU; on a GPU
with CRITWIN_DEVICE=cuda the same tests run there, within float32-free tolerance as well)."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from critwin_lib import config, ensemble
from critwin_lib.train import resolve_device, train

DEVICE = resolve_device()  # $CRITWIN_DEVICE, else CUDA where present, else the CPU


def members(tiny_cfg, optimizer="adamw"):
    """Four runs that differ in all that an ensemble lets differ: seed, lr, init scale, λ schedule."""
    base = config.replace(tiny_cfg, **{"train.optimizer": optimizer, "train.steps": 24, "train.eval_every": 8})
    return [
        base,
        config.replace(base, **{"train.seed": 1, "train.lr": 3e-3}),
        dataclasses.replace(config.replace(base, **{"train.seed": 2, "model.init_gamma": 1.0}),
                            wd=config.WDSchedule.constant(0.2)),
        dataclasses.replace(config.replace(base, **{"train.seed": 3}), wd=config.WDSchedule.window(0, 12, 1.0)),
    ]


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_each_member_gets_its_solo_history(tiny_cfg, optimizer):
    cfgs = members(tiny_cfg, optimizer)
    together = ensemble.train_ensemble(cfgs, dtype=torch.float64, device=DEVICE)
    for cfg, hist in zip(cfgs, together, strict=True):
        solo = train(cfg, dtype=torch.float64, device=DEVICE)
        assert list(hist.columns) == list(solo.columns)
        pd.testing.assert_frame_equal(hist, solo, check_exact=False, rtol=1e-7, atol=1e-9)
    assert not together[0]["acc/train"].equals(together[1]["acc/train"]) or \
        not np.allclose(together[0]["param_norm"], together[1]["param_norm"])  # members really differ


def test_clipping_acts_per_member(tiny_cfg):
    cfgs = [config.replace(c, **{"train.grad_clip": 0.05}) for c in members(tiny_cfg)[:2]]
    together = ensemble.train_ensemble(cfgs, dtype=torch.float64, device=DEVICE)
    for cfg, hist in zip(cfgs, together, strict=True):
        pd.testing.assert_frame_equal(hist, train(cfg, dtype=torch.float64, device=DEVICE), check_exact=False,
                                      rtol=1e-7, atol=1e-9)


def test_runs_that_differ_in_shape_or_task_are_not_batched(tiny_cfg):
    wider = config.replace(tiny_cfg, **{"model.d_mlp": 128})
    longer = config.replace(tiny_cfg, **{"train.steps": 16})
    instrumented = config.replace(tiny_cfg, **{"train.instrument": True})
    assert ensemble.compatible([tiny_cfg, config.replace(tiny_cfg, **{"train.seed": 5, "train.lr": 1e-2})])
    for other in (wider, longer, instrumented):
        assert not ensemble.compatible([tiny_cfg, other])
    with pytest.raises(ValueError, match="split them with ensemble.chunks"):
        ensemble.train_ensemble([tiny_cfg, wider])
    seeds = [config.replace(tiny_cfg, **{"train.seed": s}) for s in range(5)]
    parts = ensemble.chunks([*seeds, wider, instrumented], size=2)
    assert [len(p) for p in parts] == [2, 2, 1, 1, 1]
    assert all(ensemble.compatible(p) or len(p) == 1 for p in parts)


def test_asking_for_a_missing_gpu_is_one_clear_error():
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="torch sees no GPU here"):
        resolve_device("cuda")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        resolve_device("tpu")
    assert resolve_device("auto").type == "cpu"


def test_a_sweep_of_ensembles_stores_ordinary_runs_keyed_as_solo_runs(tmp_path, tiny_cfg):
    from critwin_lib import experiment

    cfgs = [config.replace(tiny_cfg, **{"train.seed": s}) for s in range(4)]
    cfgs.append(config.replace(tiny_cfg, **{"train.instrument": True}))  # not batchable: trained alone
    together = experiment.sweep(cfgs, tmp_path / "e", workers=0, ensemble=4, device="cpu", progress=False)
    alone = experiment.sweep(cfgs, tmp_path / "s", workers=0, ensemble=1, device="cpu", progress=False)
    for a, b in zip(together.results, alone.results, strict=True):
        assert a.key == b.key
        pd.testing.assert_frame_equal(a.history, b.history, check_exact=False, rtol=1e-4, atol=1e-5)
    assert [r.meta.get("ensemble") for r in together.results] == [4, 4, 4, 4, None]
    assert {r.meta["device"] for r in together.results} == {"cpu"}
    with pytest.raises(ValueError, match="at least 1 run"):
        experiment.where_to_train("cpu", 0)
