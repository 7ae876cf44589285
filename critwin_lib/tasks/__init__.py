"""Tasks: each turns a task config into fixed tensors (training set and named eval splits).

Two objectives: "last" (anchor, modular arithmetic) scores one answer token at the last position;
"sequence" (SCAN) scores every output token (targets hold -100 where nothing is scored) and is
evaluated by greedy generation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from critwin_lib.config import ConfigError, TaskConfig

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


def make_task(cfg: TaskConfig) -> TaskData:
    """Build the data of a task config (pure function of the config)."""
    if cfg.name == "anchor":
        from critwin_lib.tasks.anchor import make_anchor_task

        return make_anchor_task(cfg)
    if cfg.name == "modarith":
        from critwin_lib.tasks.modarith import make_modarith

        return make_modarith(cfg.p, cfg.op, cfg.train_frac, cfg.data_seed)
    if cfg.name == "scan":
        from critwin_lib.tasks.scan import make_scan_task

        return make_scan_task(cfg)
    raise ConfigError(f"task.name: unknown task {cfg.name!r}")
