"""The one training loop: AdamW or SGD with λ(t) written into the optimizer every step, evals into a history.

Seeding: the model init draws from a torch generator seeded with `train.seed`, the batch order from
a numpy generator seeded with (`train.seed`, 1); the data come from the task's own seed. On the CPU
the same config gives the same history, bit for bit. On a GPU (`device="cuda"`, or "auto" where one is
present) the init and the batch order are the same (both are drawn on the CPU), and the history agrees
with the CPU's within floating-point tolerance, not bit for bit: the device is an execution detail,
not part of the config or its key.
"""

from __future__ import annotations

import functools
import math
import os
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm import tqdm

from critwin_lib.config import RunConfig
from critwin_lib.metrics import evaluate, instrument
from critwin_lib.model import TinyTransformer, decay_groups
from critwin_lib.schedules import apply_hyperparams, lr_at, wd_at
from critwin_lib.tasks import IGNORE, TaskData, make_task

DEVICES = ("auto", "cpu", "cuda")


def resolve_device(name: str | torch.device | None = None) -> torch.device:
    """The device to train on: "auto" (or None: $CRITWIN_DEVICE, else "auto") is CUDA where torch sees a GPU,
    else the CPU. Asking for "cuda" where there is none is one clear error."""
    if isinstance(name, torch.device):
        return name
    name = name or os.environ.get("CRITWIN_DEVICE") or "auto"
    kind = name.split(":")[0]
    if kind not in DEVICES:
        raise ValueError(f"device: unknown device {name!r}; known: {', '.join(DEVICES)}")
    if kind == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: 'cuda' was asked for, but torch sees no GPU here (use 'auto' or 'cpu')")
    return torch.device(name)


def build_model(cfg: RunConfig, dtype: torch.dtype = torch.float32) -> TinyTransformer:
    gen = torch.Generator().manual_seed(cfg.train.seed)
    return TinyTransformer(cfg.model, generator=gen).to(dtype)


def build_optimizer(model: torch.nn.Module, cfg: RunConfig) -> torch.optim.Optimizer:
    decayed, plain = decay_groups(model, cfg.train.wd_params)
    groups = [{"params": decayed, "decay": True}] + ([{"params": plain, "decay": False}] if plain else [])
    t = cfg.train
    if t.optimizer == "sgd":  # λ(t) goes into each group's weight_decay: coupled L2
        return torch.optim.SGD(groups, lr=t.lr, momentum=t.momentum, weight_decay=0.0)
    return torch.optim.AdamW(groups, lr=t.lr, betas=(t.beta1, t.beta2), eps=t.eps, weight_decay=0.0, fused=True)


def batches(n: int, batch_size: int, seed: int):
    """Indices of successive minibatches: a fresh random permutation every epoch."""
    rng = np.random.default_rng([seed, 1])
    while True:
        perm = rng.permutation(n)
        for i in range(0, n - batch_size + 1, batch_size):
            yield torch.from_numpy(perm[i:i + batch_size])


def last_position_loss(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the answer at the last position (the only position the task scores)."""
    return F.cross_entropy(model(x, last_only=True)[:, -1], y)


def sequence_loss(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the scored next tokens (targets != IGNORE): SCAN's action tokens and EOS."""
    return F.cross_entropy(model(x).flatten(0, 1), y.flatten(), ignore_index=IGNORE)


LOSSES = {"last": last_position_loss, "sequence": sequence_loss}


COMPILE_MIN_STEPS = 1000  # compiling costs seconds to a minute; it pays only for longer runs


@functools.cache
def compile_available() -> bool:
    """Whether torch.compile works here (forward and backward of a tiny function); checked once per process."""
    try:
        w = torch.ones(3, requires_grad=True)
        torch.compile(lambda v: (v * v).sum())(w).backward()
        return bool(w.grad is not None and torch.equal(w.grad, 2 * torch.ones(3)))
    except Exception as e:  # noqa: BLE001 - any failure means: train eagerly
        warnings.warn(f"torch.compile is unavailable ({type(e).__name__}: {e}); training eagerly", stacklevel=2)
        return False


def loss_function(compile: bool | None, steps: int, objective: str = "last") -> Callable[..., torch.Tensor]:
    """The per-step loss of the task's objective, compiled with inductor when asked (None: when the run is
    long enough, unless $CRITWIN_COMPILE=0) and when compiling works here. Same mathematics either way;
    compiling fuses the small attention and GELU ops."""
    if compile is None:
        compile = steps >= COMPILE_MIN_STEPS and os.environ.get("CRITWIN_COMPILE", "1") != "0"
    loss = LOSSES[objective]
    if not compile or not compile_available():
        return loss
    torch._dynamo.reset()  # a fresh model per run: start from clean guards, not the recompile limit
    return torch.compile(loss)


def training_step(model: torch.nn.Module, opt: torch.optim.Optimizer, cfg: RunConfig,
                  compile: bool | None = False, objective: str = "last"
                  ) -> Callable[[float, float, torch.Tensor, torch.Tensor], float]:
    """One optimisation step at a given lr and λ on a batch; returns the batch loss. `train` runs it,
    and `make bench` times exactly it."""
    loss_fn = loss_function(compile, cfg.train.steps, objective)
    clip = cfg.train.grad_clip

    def step(lr: float, wd: float, x: torch.Tensor, y: torch.Tensor) -> float:
        apply_hyperparams(opt, lr, wd)
        loss = loss_fn(model, x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        return loss.item()

    return step


def train(cfg: RunConfig, task: TaskData | None = None, progress: bool = False,
          dtype: torch.dtype = torch.float32, compile: bool | None = False,
          device: str | torch.device | None = "cpu") -> pd.DataFrame:
    """Train one run; return its history, one row per evaluated step (0, eval_every, ..., steps). A run whose
    batch loss stops being finite is evaluated once more and stops there: its history ends early and
    `history.attrs["diverged_at"]` holds the step (nothing after a NaN is worth training or storing as a result).

    `compile` (execution detail, not part of the config): compile the loss with torch.compile;
    None decides by run length. `device`: where to train (`resolve_device`; the default stays on the CPU).
    """
    t = cfg.train
    dev = resolve_device(device)
    task = task if task is not None else make_task(cfg.task)
    model = build_model(cfg, dtype).to(dev)  # initialised on the CPU: the same init on every device
    opt = build_optimizer(model, cfg)
    step_fn = training_step(model, opt, cfg, compile, task.objective)
    x_train = torch.from_numpy(task.train_inputs).to(dev)
    y_train = torch.from_numpy(task.train_targets).to(dev)
    evals = {name: (torch.from_numpy(s.inputs).to(dev), torch.from_numpy(s.targets).to(dev))
             for name, s in task.splits.items()}
    order = batches(len(x_train), min(t.batch_size, len(x_train)), t.seed)

    rows: list[dict[str, float]] = []
    loss_sum, loss_n = 0.0, 0
    diverged: int | None = None
    bar = tqdm(total=t.steps, desc="train", disable=not progress)  # the finished bar stays (explorer)
    for step in range(t.steps + 1):
        if step % t.eval_every == 0 or step == t.steps or diverged is not None:
            row = {"step": step, "lr": lr_at(t, min(step, t.steps - 1)), "wd": wd_at(cfg.wd, min(step, t.steps - 1)),
                   "loss/batch": loss_sum / loss_n if loss_n else float("nan")}
            logits: dict[str, torch.Tensor] = {}
            row.update(evaluate(model, task, evals, logits if t.instrument else None))
            if t.instrument:
                row.update(instrument(model, evals, logits))
            rows.append(row)
            loss_sum, loss_n = 0.0, 0
            bar.set_postfix({task.headline.split("/")[-1]: f"{row[task.headline]:.2f}",
                             "train": f"{row['acc/train']:.2f}"})
        if step == t.steps or diverged is not None:
            break
        idx = next(order).to(dev)
        loss = step_fn(lr_at(t, step), wd_at(cfg.wd, step), x_train[idx], y_train[idx])
        loss_sum += loss
        loss_n += 1
        bar.update(1)
        if not math.isfinite(loss):
            diverged = step
    bar.close()
    history = pd.DataFrame(rows)
    if diverged is not None:
        history.attrs["diverged_at"] = diverged
    return history
