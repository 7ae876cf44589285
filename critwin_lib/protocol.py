"""The experimental protocol shared by the anchor-task claims: run configs built from a profile and
the few knobs a claim varies (γ, seed, weight-decay schedule), with windows given as fractions of the
run so one notebook serves every profile. Used by: c01 (and the later anchor claims).

Until the calibration page fixes them, the defaults follow the second CPU pilot (spec pilot.md):
γ = 2 on σ₀ = d_model^-1/2 (std 0.25), lr 3e-4 after 200 warm-up steps, batch 256, in-window λ = 3.
"""

from __future__ import annotations

import math

from critwin_lib.config import (
    AnchorTask,
    ConfigError,
    ModelConfig,
    Profile,
    RunConfig,
    WDSchedule,
    get_profile,
)


def window_steps(profile: Profile, start_frac: float, length_frac: float,
                 names: tuple[str, str] = ("window_start_frac", "window_frac")) -> tuple[int, int]:
    """[start, end) in steps of a window given as fractions of the run; errors name the parameters."""
    for value, name in zip((start_frac, length_frac), names, strict=True):
        if not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
            raise ConfigError(f"{name}: must be a non-negative fraction of the run, got {value!r}")
    if length_frac <= 0:
        raise ConfigError(f"{names[1]}: must be > 0, got {length_frac!r}")
    if start_frac + length_frac > 1 + 1e-9:
        raise ConfigError(f"{names[0]}: a window [{start_frac:g}, {start_frac + length_frac:g}) of the run "
                          f"ends after the run (window_start_frac + window_frac must be <= 1)")
    start = profile.step_at(start_frac, names[0])
    return start, min(profile.steps, start + profile.step_at(length_frac, names[1]))


def window(profile: Profile, start_frac: float, length_frac: float, lam: float) -> WDSchedule:
    """λ = `lam` inside one window, 0 elsewhere."""
    start, end = window_steps(profile, start_frac, length_frac)
    return WDSchedule(windows=((start, end, lam),))


def full_run(lam: float) -> WDSchedule:
    return WDSchedule.constant(lam)


def anchor_run(profile: Profile | str, seed: int, wd: WDSchedule, gamma: float = 2.0,
               task: AnchorTask | None = None, model: ModelConfig | None = None, **train: object) -> RunConfig:
    """One anchor-task run at a profile's size."""
    p = get_profile(profile) if isinstance(profile, str) else profile
    model = model if model is not None else ModelConfig(init_gamma=gamma)
    return RunConfig(task=task if task is not None else p.task(), model=model, train=p.train(seed, **train), wd=wd)


def seeds(profile: Profile, n_seeds: int) -> list[int]:
    """Seeds 0..n-1; n_seeds = 0 means the profile's default count."""
    if not isinstance(n_seeds, int) or n_seeds < 0:
        raise ConfigError(f"n_seeds: must be a non-negative integer, got {n_seeds!r}")
    return list(range(n_seeds or profile.n_seeds))
