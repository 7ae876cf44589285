"""Tasks: each turns a task config into fixed tensors (training set and named eval splits)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from critwin_lib.config import AnchorTask, ConfigError


@dataclass
class Split:
    """One evaluation split: inputs (N, T) and the answer expected at the last position."""

    inputs: np.ndarray  # (N, T) int64
    targets: np.ndarray  # (N,) int64
    keys: np.ndarray  # (N,) the key item x of each sequence, for answer-shift diagnostics


@dataclass
class TaskData:
    """A task's fixed data: the training set and evaluation splits, all determined by a data seed."""

    train_inputs: np.ndarray  # (N, T) int64
    train_targets: np.ndarray  # (N,) int64
    splits: dict[str, Split]
    vocab_size: int
    meta: dict = field(default_factory=dict)


def make_task(cfg: AnchorTask) -> TaskData:
    """Build the data of a task config (pure function of the config)."""
    if cfg.name == "anchor":
        from critwin_lib.tasks.anchor import make_anchor_task

        return make_anchor_task(cfg)
    raise ConfigError(f"task.name: unknown task {cfg.name!r}")
