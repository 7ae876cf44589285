"""How big runs are: one `Size` type for every task, per profile (smoke, quick, paper).

Claims are written in fractions of a run, so one notebook serves every profile; a `Size` turns them
into steps and gives the training and model settings of a task at that profile. The anchor task's
sizes are the profiles themselves (`PROFILES`); modular arithmetic (C8) and SCAN (C9) have their own
(`GROK`, `GROK_REFERENCE`, `SCAN`). Nothing here changes a run's key: the configs a size builds are
the ones the shipped runs were trained from.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from critwin_lib import checks
from critwin_lib.config import ConfigError, ModelConfig, RunConfig, TaskConfig, TrainConfig, WDSchedule


@dataclass(frozen=True)
class Size:
    """One task's run size at one profile: optimisation, seeds, and the task's and model's own fields
    (`task`, `model`: keyword arguments of the task config and of `ModelConfig`; `train`: further
    `TrainConfig` fields)."""

    name: str
    steps: int
    eval_every: int
    n_seeds: int
    batch_size: int
    lr: float
    warmup_steps: int
    task: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)
    train: dict[str, Any] = field(default_factory=dict)
    description: str = ""

    def train_config(self, seed: int, **overrides: Any) -> TrainConfig:
        kw = dict(steps=self.steps, batch_size=self.batch_size, lr=self.lr, warmup_steps=self.warmup_steps,
                  eval_every=self.eval_every, seed=seed)
        return TrainConfig(**{**kw, **self.train, **overrides})

    def step_at(self, frac: float, name: str = "fraction") -> int:
        """A fraction of the run as a step (multiples of eval_every keep windows on the eval grid)."""
        return int(round(checks.fraction(frac, name) * self.steps))

    def seeds(self, n_seeds: Any, field: str = "n_seeds", first: Any = 0) -> list[int]:
        """Seeds first..first+n-1; n_seeds = 0 means this size's default count (errors name `field`; `first` is
        a design's first seed, past seeds a calibration already read)."""
        return [checks.seed(first, "first_seed") + s for s in checks.seed_list(n_seeds, self.n_seeds, field)]

    def run(self, task: TaskConfig, seed: int, wd: WDSchedule) -> RunConfig:
        """A run of `task` at this size (weight decay on this size's parameter set; all of them when λ is 0)."""
        model = ModelConfig(**self.model, vocab_size=task.vocab_size, max_pos=task.seq_len)
        wd_params = "all" if wd.is_none else self.train.get("wd_params", "all")
        return RunConfig(task=task, model=model, train=self.train_config(seed, wd_params=wd_params), wd=wd)


# The anchor task: the profiles themselves.
PROFILES: dict[str, Size] = {
    p.name: p
    for p in (
        Size("smoke", steps=48, eval_every=16, n_seeds=2, batch_size=32, lr=1e-3, warmup_steps=4,
             task={"n_train_per_pair": 64, "n_eval": 64},
             description="plumbing only: seconds per notebook, no phenomenon expected"),
        Size("quick", steps=6400, eval_every=200, n_seeds=4, batch_size=256, lr=3e-4, warmup_steps=200,
             task={"n_train_per_pair": 11_250, "n_eval": 2048},
             description="the default: the whole book on a 2-core laptop in about an hour"),
        Size("paper", steps=20_000, eval_every=100, n_seeds=12, batch_size=256, lr=3e-4, warmup_steps=200,
             task={"n_train_per_pair": 11_250, "n_eval": 2048},
             description="the paper's length (20k steps) and seed count (12)"),
    )
}


def length_name(profile: str, steps: int | None = None) -> str:
    """How the book names a profile's run length: 'the quick length (6,400 steps)', or without `steps`
    'the quick length' ('the paper's length' at paper)."""
    name = "the paper's length" if profile == "paper" else f"the {profile} length"
    return name if steps is None else f"{name} ({steps:,} steps)"


def get_profile(name: str) -> Size:
    """The anchor task's size at profile `name`; an unknown name raises ConfigError naming `profile`."""
    if name not in PROFILES:
        raise ConfigError(f"profile: unknown profile {name!r}; known: {tuple(PROFILES)}")
    return PROFILES[name]


def task_size(table: dict[str, Size], profile: str, what: str) -> Size:
    """A task's size at `profile` from its table; ConfigError when the profile is unknown or the task has none."""
    get_profile(profile)  # one error for an unknown profile
    if profile not in table:
        raise ConfigError(f"profile: {what} has no size for {profile!r}; known: {tuple(table)}")
    return table[profile]


_ONE_LAYER_128 = {"n_layer": 1, "d_model": 128, "n_head": 4, "d_mlp": 512}
_TINY = {"n_layer": 1, "d_model": 32, "n_head": 2, "d_mlp": 64}
_FULL_BATCH = {"beta2": 0.98, "grad_clip": 0.0}

# Modular arithmetic. The reference run is Nanda et al.'s setting with the library's transformer (pre-norm,
# GELU): (a + b) mod 113, 30 % of the pairs, 1 layer, full-batch AdamW lr 1e-3, λ 1, β (0.9, 0.98).
GROK_REFERENCE = {
    "smoke": Size("smoke", steps=60, eval_every=20, n_seeds=1, batch_size=100_000, lr=3e-3, warmup_steps=10,
                  task={"p": 23, "train_frac": 0.5}, model=_TINY, train=_FULL_BATCH),
    "quick": Size("quick", steps=5000, eval_every=50, n_seeds=1, batch_size=3830, lr=1e-3, warmup_steps=10,
                  task={"p": 113, "train_frac": 0.3}, model=_ONE_LAYER_128, train=_FULL_BATCH),
}
GROK_REFERENCE["paper"] = dataclasses.replace(GROK_REFERENCE["quick"], name="paper", steps=20_000, eval_every=100)

# The C8 sweep: the spec's companion setting (§6) with the reference's one-layer model, at a size two cores
# train: p 97, 40 % training pairs, minibatches of 512. Profiles change the length and the seeds only.
GROK = {
    "smoke": Size("smoke", steps=48, eval_every=16, n_seeds=2, batch_size=64, lr=3e-3, warmup_steps=4,
                  task={"p": 23, "train_frac": 0.5}, model=_TINY, train=_FULL_BATCH),
    "quick": Size("quick", steps=4000, eval_every=100, n_seeds=4, batch_size=512, lr=1e-3, warmup_steps=10,
                  task={"p": 97, "train_frac": 0.4}, model=_ONE_LAYER_128, train=_FULL_BATCH),
    "paper": Size("paper", steps=20_000, eval_every=100, n_seeds=12, batch_size=512, lr=1e-3, warmup_steps=10,
                  task={"p": 97, "train_frac": 0.4}, model=_ONE_LAYER_128, train=_FULL_BATCH),
}

# SCAN add_prim_jump: the anchor model made a decoder over "command SEP actions EOS" (spec §7).
_SCAN_DECAY = {"wd_params": "matrices"}
SCAN = {
    "smoke": Size("smoke", steps=16, eval_every=8, n_seeds=2, batch_size=16, lr=1e-3, warmup_steps=2,
                  task={"n_val": 50, "n_eval": 20}, model={"n_layer": 1, "d_model": 16, "n_head": 2, "d_mlp": 32}),
    "quick": Size("quick", steps=2000, eval_every=500, n_seeds=4, batch_size=64, lr=1e-3, warmup_steps=100,
                  task={"n_val": 1000, "n_eval": 500}, model={"n_layer": 2, "d_model": 64, "n_head": 4, "d_mlp": 256},
                  train=_SCAN_DECAY),
    "paper": Size("paper", steps=20_000, eval_every=1000, n_seeds=12, batch_size=128, lr=1e-3, warmup_steps=200,
                  task={"n_val": 1000, "n_eval": 2000},
                  model={"n_layer": 2, "d_model": 128, "n_head": 4, "d_mlp": 512}, train=_SCAN_DECAY),
}
