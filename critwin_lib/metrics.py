"""Measurements of a model on a task, and summaries of a run's history.

Metric keys are `quantity/split` (`acc/test_ood`, `loss/train`), plus `param_norm`. Everything is
read at the last position, where the task's answer is. Used by: train.py, every claim notebook.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from critwin_lib.tasks import TaskData

MEMORIZED_TRAIN_ACC = 0.99  # t_mem: first evaluated step with training accuracy above this


@torch.no_grad()
def last_logits(model: torch.nn.Module, inputs: torch.Tensor, batch_size: int = 4096) -> torch.Tensor:
    """Logits at the last position, (N, V), in chunks."""
    return torch.cat([model(inputs[i:i + batch_size], last_only=True)[:, -1]
                      for i in range(0, len(inputs), batch_size)])


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    return (logits.argmax(-1) == targets).double().mean().item()


def param_norm(model: torch.nn.Module) -> float:
    """Global L2 norm of all parameters."""
    return torch.sqrt(sum((p.detach().double() ** 2).sum() for p in model.parameters())).item()


def trained_shift_fraction(pred: np.ndarray, keys: np.ndarray, trained_shifts: list[int]) -> float:
    """Fraction of answers equal to x + s for a shift s of some trained pair: how much of the OOD
    output a pair-memorizing model explains."""
    return float(np.isin(pred - keys, trained_shifts).mean())


@torch.no_grad()
def evaluate(model: torch.nn.Module, task: TaskData, tensors: dict[str, tuple[torch.Tensor, torch.Tensor]]
             ) -> dict[str, float]:
    """Accuracy and loss on every split; on the OOD split(s) also the share of trained shifts."""
    was_training = model.training
    model.eval()
    out: dict[str, float] = {}
    for name, (x, y) in tensors.items():
        logits = last_logits(model, x)
        out[f"acc/{name}"] = accuracy(logits, y)
        out[f"loss/{name}"] = F.cross_entropy(logits, y).item()
        if name.startswith("test_ood"):
            pred = logits.argmax(-1).cpu().numpy()
            out[f"trained_shift/{name}"] = trained_shift_fraction(
                pred, task.splits[name].keys, task.meta["trained_shifts"])
    out["param_norm"] = param_norm(model)
    model.train(was_training)
    return out


def t_mem(history: pd.DataFrame, threshold: float = MEMORIZED_TRAIN_ACC) -> float:
    """First evaluated step whose training accuracy exceeds `threshold` (NaN if never)."""
    hit = history.loc[history["acc/train"] > threshold, "step"]
    return float(hit.iloc[0]) if len(hit) else float("nan")


def summarize(history: pd.DataFrame) -> dict[str, float]:
    """The per-run numbers the claims use: final and max-over-training OOD accuracy, t_mem, fit."""
    last = history.iloc[-1]
    return {
        "final_ood": float(last["acc/test_ood"]),
        "max_ood": float(history["acc/test_ood"].max()),
        "final_id": float(last["acc/test_id"]),
        "final_train": float(last["acc/train"]),
        "final_trained_shift": float(last["trained_shift/test_ood"]),
        "t_mem": t_mem(history),
        "final_param_norm": float(last["param_norm"]),
    }
