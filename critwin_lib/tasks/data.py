"""The data every task produces: fixed training arrays and named evaluation splits (shared by the task
modules, the training loop and the metrics)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

IGNORE = -100  # target of a position no loss reads (sequence objective)


@dataclass
class Split:
    """One evaluation split: inputs (N, T) and the answer expected at the last position (N,), or for the
    sequence objective the next token at every position (N, T) with IGNORE where nothing is scored."""

    inputs: np.ndarray  # (N, T) int64
    targets: np.ndarray  # (N,) or (N, T) int64
    keys: np.ndarray | None = None  # (N,) the key item x of each sequence (anchor: answer-shift diagnostics)


@dataclass
class TaskData:
    """A task's fixed data: the training set and evaluation splits, all determined by a data seed."""

    train_inputs: np.ndarray  # (N, T) int64
    train_targets: np.ndarray  # (N,) or (N, T) int64
    splits: dict[str, Split]
    vocab_size: int
    meta: dict = field(default_factory=dict)
    objective: str = "last"  # or "sequence"
    headline: str = "acc/test_ood"  # the metric a progress bar shows
