"""Learning rate and weight decay as pure functions of the step, and how they reach the optimizer.

The budget of a weight-decay schedule is B = Σ_t λ_t over the run's steps. AdamW shrinks weights by
lr_t·λ_t per step, so with a constant learning rate (after warm-up) equal B means equal shrink;
`effective_budget` gives Σ_t lr_t·λ_t for the record.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from critwin_lib.config import TrainConfig, WDSchedule


def wd_at(schedule: WDSchedule, step: int) -> float:
    """λ(step): the in-window value inside a window [start, end), the ramp's value inside a ramp, the base
    value elsewhere."""
    for start, end, lam in schedule.windows:
        if start <= step < end:
            return lam
    for start, end, a, b in schedule.ramps:
        if start <= step < end:
            return a + (b - a) * (step - start) / (end - start)
    return schedule.base


def wd_values(schedule: WDSchedule, steps: int) -> np.ndarray:
    """λ_t for t = 0 .. steps-1."""
    lam = np.full(steps, schedule.base, dtype=np.float64)
    for start, end, value in schedule.windows:
        lam[start:end] = value
    for start, end, a, b in schedule.ramps:
        t = np.arange(start, min(end, steps))
        lam[t] = a + (b - a) * (t - start) / (end - start)
    return lam


def budget(schedule: WDSchedule, steps: int) -> float:
    """Realised budget B = Σ_{t < steps} λ_t."""
    return float(sum(wd_at(schedule, t) for t in range(steps)))


def schedule_frame(schedules: dict[str, WDSchedule], steps: int, extra: dict[str, dict] | None = None
                   ) -> pd.DataFrame:
    """λ(t) of each named schedule as step-function points (one at every change, plus the ends)."""
    rows = []
    for name, sched in schedules.items():
        lam = wd_values(sched, steps)
        change = np.flatnonzero(np.diff(lam)) + 1
        for t in [0, *change.tolist(), steps]:
            rows.append({"condition": name, "step": int(t), "lambda": float(lam[min(t, steps - 1)]),
                         **(extra or {}).get(name, {})})
    return pd.DataFrame(rows)


def lr_at(train: TrainConfig, step: int) -> float:
    """Linear warm-up over `warmup_steps` (from lr/warmup to lr), then constant."""
    if step < train.warmup_steps:
        return train.lr * (step + 1) / train.warmup_steps
    return train.lr


def lr_values(train: TrainConfig) -> np.ndarray:
    return np.array([lr_at(train, t) for t in range(train.steps)])


def effective_budget(schedule: WDSchedule, train: TrainConfig) -> float:
    """Σ_t lr_t·λ_t: the total multiplicative shrink AdamW's decoupled decay applies."""
    return float(np.dot(lr_values(train), wd_values(schedule, train.steps)))


def apply_hyperparams(optimizer: torch.optim.Optimizer, lr: float, wd: float) -> None:
    """Write this step's lr and λ into every param group (λ only where the group decays)."""
    for group in optimizer.param_groups:
        group["lr"] = lr
        group["weight_decay"] = wd if group.get("decay", True) else 0.0
