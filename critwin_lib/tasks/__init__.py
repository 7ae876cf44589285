"""Tasks: each turns a task config into fixed tensors (training set and named eval splits).

Two objectives: "last" (anchor, modular arithmetic) scores one answer token at the last position;
"sequence" (SCAN) scores every output token (targets hold -100 where nothing is scored) and is
evaluated by greedy generation."""

from __future__ import annotations

from critwin_lib.config import ConfigError, TaskConfig
from critwin_lib.tasks.data import IGNORE, Split, TaskData

__all__ = ["IGNORE", "Split", "TaskData", "make_task"]


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
