"""The project's training path computes the same thing as the plain model, only faster."""

import pytest
import torch

from critwin_lib import config
from critwin_lib.bench import plain_step_fn, project_step_fn
from critwin_lib.schedules import lr_at, wd_at
from critwin_lib.tasks import make_task


@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
def test_fast_path_matches_the_plain_model_in_float64(compile):
    torch._dynamo.reset()
    cfg = config.RunConfig(task=config.AnchorTask(n_train_per_pair=64, n_eval=16),
                           model=config.ModelConfig(init_gamma=2.0),
                           train=config.TrainConfig(steps=24, batch_size=32, lr=1e-3, warmup_steps=4, eval_every=24),
                           wd=config.WDSchedule(windows=((8, 16, 2.0),)))
    task = make_task(cfg.task)
    x_all, y_all = torch.from_numpy(task.train_inputs), torch.from_numpy(task.train_targets)
    fast, _, fast_step = project_step_fn(cfg, x_all[:32], y_all[:32], torch.float64, compile=compile)
    plain, _, plain_step = plain_step_fn(cfg, x_all[:32], y_all[:32], torch.float64)
    gen = torch.Generator().manual_seed(0)
    for t in range(cfg.train.steps):
        idx = torch.randint(0, len(x_all), (32,), generator=gen)
        lr, wd = lr_at(cfg.train, t), wd_at(cfg.wd, t)
        fast_step(lr, wd, x_all[idx], y_all[idx])
        plain_step(lr, wd, x_all[idx], y_all[idx])
    plain_params = dict(plain.named_parameters())
    worst = max((p - plain_params[n]).abs().max().item() for n, p in fast.named_parameters())
    moved = max((p - q).abs().max().item() for (n, p), q in
                zip(fast.named_parameters(), project_step_fn(cfg, x_all[:1], y_all[:1], torch.float64,
                                                             compile=False)[0].parameters(), strict=True))
    assert moved > 1e-3  # training really changed the weights
    assert worst < 1e-10
