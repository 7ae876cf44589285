"""The grokking task's data: the reference split's sizes, exact answers, and refusals of bad input."""

import numpy as np
import pytest

from critwin_lib.config import ConfigError
from critwin_lib.tasks.modarith import make_modarith, table


def test_reference_split_of_nanda_et_al():
    d = make_modarith(113, "add", 0.3, data_seed=0)
    assert d.meta["n_pairs"] == 12_769 and len(d.train_targets) == 3_830 and len(d.splits["test"].targets) == 8_939
    assert d.vocab_size == 114 and (d.train_inputs[:, 2] == 113).all()
    x = d.splits["test"].inputs
    assert ((x[:, 0] + x[:, 1]) % 113 == d.splits["test"].targets).all()
    train = {tuple(r) for r in d.train_inputs[:, :2]}
    assert not train & {tuple(r) for r in x[:, :2]}  # disjoint
    assert (make_modarith(113, "add", 0.3, 0).train_inputs == d.train_inputs).all()  # seeded
    assert not (make_modarith(113, "add", 0.3, 1).train_inputs == d.train_inputs).all()


@pytest.mark.parametrize("op, check", [("sub", lambda a, b, c: (a - b - c) % 7 == 0),
                                       ("mul", lambda a, b, c: (a * b - c) % 7 == 0),
                                       ("div", lambda a, b, c: (c * b - a) % 7 == 0)])
def test_operations_are_exact(op, check):
    a, b, c = table(7, op)
    assert len(a) == (42 if op == "div" else 49) and check(a, b, c).all() and ((0 <= c) & (c < 7)).all()
    if op == "div":
        assert not np.any(b == 0)


@pytest.mark.parametrize("kw, match", [({"p": 12}, "task.p"), ({"op": "pow"}, "task.op"),
                                       ({"train_frac": 1.0}, "task.train_frac"),
                                       ({"p": 2, "train_frac": 0.1}, "task.train_frac")])
def test_bad_input_is_refused(kw, match):
    with pytest.raises(ConfigError, match=match):
        make_modarith(**kw)


def _modarith_run(**train):
    from critwin_lib import config

    t = config.ModArithTask(p=13, train_frac=0.5)
    return config.RunConfig(task=t, model=config.ModelConfig(n_layer=1, d_model=32, n_head=2, d_mlp=64,
                                                             vocab_size=t.vocab_size, max_pos=3),
                            train=config.TrainConfig(**{"steps": 30, "batch_size": 10_000, "lr": 3e-3,
                                                        "warmup_steps": 0, "eval_every": 10, **train}))


def test_the_run_config_checks_the_model_against_the_task():
    from critwin_lib import config

    cfg = _modarith_run()
    with pytest.raises(ConfigError, match="model.vocab_size: must be 14 for the modarith task"):
        config.replace(cfg, **{"model.vocab_size": 201})
    with pytest.raises(ConfigError, match="task.p"):
        config.ModArithTask(p=91)  # 7 · 13, refused on construction, before any data is made
    with pytest.raises(ConfigError, match="train.instrument"):
        config.replace(cfg, **{"train.instrument": True})
    assert config.from_dict(config.to_dict(cfg)) == cfg


def test_full_batch_training_fits_the_training_pairs():
    from critwin_lib.train import train

    h = train(_modarith_run(steps=150, eval_every=50))
    assert list(h["step"]) == [0, 50, 100, 150]
    assert {"acc/train", "acc/test", "loss/test", "param_norm"} <= set(h.columns)
    assert "trained_shift/test" not in h.columns
    assert h["acc/train"].iloc[-1] == 1.0 and h["loss/train"].iloc[-1] < h["loss/train"].iloc[0]
