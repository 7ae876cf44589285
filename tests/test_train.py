import pandas as pd
import torch

from critwin_lib import config
from critwin_lib.train import train


def test_same_seed_gives_an_identical_history(tiny_cfg):
    a, b = train(tiny_cfg), train(tiny_cfg)
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    c = train(config.replace(tiny_cfg, **{"train.seed": 1}))
    assert not a["loss/train"].equals(c["loss/train"])


def test_history_rows_and_logged_schedule(tiny_cfg):
    h = train(tiny_cfg)
    assert h["step"].tolist() == [0, 4, 8, 12]
    assert h["wd"].tolist() == [0.0, 0.5, 0.0, 0.0]  # window [4, 8)
    for col in ("acc/train", "acc/test_id", "acc/test_ood", "loss/test_ood", "trained_shift/test_ood", "param_norm"):
        assert h[col].notna().all(), col


def test_training_lowers_the_loss():
    cfg = config.RunConfig(task=config.AnchorTask(n_train_per_pair=64, n_eval=64),
                           model=config.ModelConfig(init_gamma=1.0),
                           train=config.TrainConfig(steps=60, batch_size=64, lr=3e-3, warmup_steps=5, eval_every=30))
    h = train(cfg)
    assert h["loss/train"].iloc[-1] < 0.8 * h["loss/train"].iloc[0]


def test_weight_decay_shrinks_the_weights(tiny_cfg):
    strong = config.replace(tiny_cfg, **{"wd.base": 0.0, "wd.windows": ((0, 12, 20.0),)})
    none = config.replace(tiny_cfg, **{"wd.windows": ()})
    assert train(strong)["param_norm"].iloc[-1] < 0.9 * train(none)["param_norm"].iloc[-1]


def test_compiled_loss_trains_like_the_eager_one(tiny_cfg):
    torch._dynamo.reset()
    eager, compiled = train(tiny_cfg, compile=False), train(tiny_cfg, compile=True)
    pd.testing.assert_frame_equal(eager, compiled, check_exact=False, atol=2e-3, rtol=1e-3)


def test_training_falls_back_to_eager_when_compiling_fails(monkeypatch):
    import pytest

    import critwin_lib.train as train_mod

    def broken(*a, **k):
        raise RuntimeError("no C compiler")

    train_mod.compile_available.cache_clear()
    monkeypatch.setattr(torch, "compile", broken)
    try:
        with pytest.warns(UserWarning, match="training eagerly"):
            assert train_mod.loss_function(True, 10_000) is train_mod.last_position_loss
    finally:
        train_mod.compile_available.cache_clear()
    monkeypatch.setenv("CRITWIN_COMPILE", "0")
    assert train_mod.loss_function(None, 10_000) is train_mod.last_position_loss


def test_process_settings_are_recorded_and_can_be_switched_off(monkeypatch):
    import platform

    from critwin_lib import speed

    assert speed.configure_process()["threads"] == 1 and torch.get_num_threads() == 1
    assert speed.tune_malloc() == (platform.libc_ver()[0] == "glibc")
    monkeypatch.setenv("CRITWIN_MALLOC_TUNE", "0")
    assert speed.tune_malloc() is False


def test_sgd_decay_is_coupled_l2_through_the_momentum(tiny_cfg):
    from critwin_lib.schedules import apply_hyperparams
    from critwin_lib.train import build_model, build_optimizer

    cfg = config.replace(tiny_cfg, **{"train.optimizer": "sgd", "train.momentum": 0.5})
    model = build_model(cfg)
    opt = build_optimizer(model, cfg)
    assert isinstance(opt, torch.optim.SGD)
    w = next(p for p in model.parameters() if p.ndim == 2)
    p0 = w.detach().clone()
    for _ in range(2):  # no loss gradient: only λ·p reaches the momentum buffer
        for p in model.parameters():
            p.grad = torch.zeros_like(p)
        apply_hyperparams(opt, 0.1, 0.5)
        opt.step()
    p1 = p0 * (1 - 0.1 * 0.5)
    torch.testing.assert_close(w.detach(), p1 - 0.1 * (0.5 * 0.5 * p0 + 0.5 * p1))


def test_sgd_trains_and_adamw_keys_do_not_move(tiny_cfg):
    from critwin_lib.experiment import run_key

    h = train(config.replace(tiny_cfg, **{"train.optimizer": "sgd", "train.lr": 0.05}))
    assert h["loss/train"].notna().all()
    assert run_key(config.replace(tiny_cfg, **{"train.momentum": 0.9})) == run_key(tiny_cfg)  # neutral default
    assert run_key(config.replace(tiny_cfg, **{"train.optimizer": "sgd"})) != run_key(tiny_cfg)
