"""The checks a claim's or the explorer's parameters pass before anything is trained, each written once.

Every failure is a `ConfigError` whose message starts with the parameter's name, so a notebook or the
command line can say in one line which value is wrong.
"""

from __future__ import annotations

import math
from typing import Any


class ConfigError(ValueError):
    """A parameter or configuration value is out of range; the message starts with its name."""


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def positive_numbers(values: Any, field: str, what: str) -> list[float]:
    """A non-empty list of finite positive numbers, as floats in the given order; anything else is a
    ConfigError naming `field` ("must be a non-empty list of <what>")."""
    if not isinstance(values, list | tuple) or not values or not all(_is_number(v) and v > 0 for v in values):
        raise ConfigError(f"{field}: must be a non-empty list of {what}, got {values!r}")
    return [float(v) for v in values]


def distinct_positive(values: Any, field: str, what: str, reverse: bool = False) -> list[float]:
    """`positive_numbers` without repeats, sorted (largest first with `reverse`)."""
    out = positive_numbers(values, field, what)
    if len(set(out)) != len(out):
        raise ConfigError(f"{field}: values must be distinct, got {values!r}")
    return sorted(out, reverse=reverse)


def positive_number(value: Any, field: str) -> float:
    if not _is_number(value) or value <= 0:
        raise ConfigError(f"{field}: must be a positive number, got {value!r}")
    return float(value)


def count(value: Any, field: str) -> int:
    """A positive integer (a number of seeds of the rate model, of calibration runs, ...)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"{field}: must be a positive integer, got {value!r}")
    return value


# Upper bounds, documented on the setup page: beyond them a run diverges or the value is a typo.
MAX_GAMMA = 10.0  # init scale γ: the paper's range is about 0.5-2; γ 10 already starts with weights ten times σ₀
MAX_LAMBDA = 100.0  # weight-decay strength λ: the pages use at most 36; AdamW's shrink lr·λ must stay well below 1


def at_most(value: float, hi: float, field: str, what: str) -> float:
    """`value` (already checked to be a number) if it is at most `hi`; else a ConfigError naming `field`."""
    if value > hi:
        raise ConfigError(f"{field}: {what} must be at most {hi:g}, got {value!r}")
    return value


MAX_SEEDS = 64  # seeds per cell: more is almost surely a typo (64 seeds of a 14-cell page is ~900 runs)


def seed_list(n_seeds: Any, default: int, field: str = "n_seeds") -> list[int]:
    """Seeds 0..n-1; n_seeds = 0 means the default count; more than MAX_SEEDS is refused."""
    if not isinstance(n_seeds, int) or isinstance(n_seeds, bool) or n_seeds < 0:
        raise ConfigError(f"{field}: must be a non-negative integer, got {n_seeds!r}")
    if n_seeds > MAX_SEEDS:
        raise ConfigError(f"{field}: at most {MAX_SEEDS} seeds per cell, got {n_seeds}")
    return list(range(n_seeds or default))


def seed(value: Any, field: str = "seed") -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ConfigError(f"{field}: must be a non-negative integer, got {value!r}")
    return value


def fraction(value: Any, field: str) -> float:
    """A fraction of the run, in [0, 1]."""
    if not (_is_number(value) and 0 <= value <= 1):
        raise ConfigError(f"{field}: must be in [0, 1], got {value!r}")
    return value


def non_negative(value: Any, field: str, what: str = "a finite number >= 0") -> float:
    if not _is_number(value) or value < 0:
        raise ConfigError(f"{field}: must be {what}, got {value!r}")
    return float(value)


def flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{field}: must be true or false, got {value!r}")
    return value


def window_fracs(start: Any, length: Any, names: tuple[str, str] = ("window_start_frac", "window_frac")) -> None:
    """A window [start, start + length) given as fractions of the run must lie inside the run."""
    for value, name in zip((start, length), names, strict=True):
        if not _is_number(value) or value < 0:
            raise ConfigError(f"{name}: must be a non-negative fraction of the run, got {value!r}")
    if length <= 0:
        raise ConfigError(f"{names[1]}: must be > 0, got {length!r}")
    if start + length > 1 + 1e-9:
        raise ConfigError(f"{names[0]}: a window [{start:g}, {start + length:g}) of the run "
                          f"ends after the run (window_start_frac + window_frac must be <= 1)")


def onset_fracs(values: Any, window_frac: float, field: str = "onset_fracs") -> list[float]:
    """Distinct window onsets as fractions of the run, sorted; each window must end inside the run."""
    if not isinstance(values, list | tuple) or not values or not all(_is_number(f) and f >= 0 for f in values):
        raise ConfigError(f"{field}: must be a non-empty list of fractions of the run, got {values!r}")
    late = [f for f in values if f + window_frac > 1 + 1e-9]
    if late:
        raise ConfigError(f"{field}: a window starting at {late[0]:g} of the run ends after it "
                          f"(onset + window_frac must be <= 1)")
    return sorted({float(f) for f in values})


def placements(values: Any, window_frac: float, names: tuple[str, ...] | None = None,
               field: str = "placements") -> dict[str, float]:
    """{name: start fraction} of windows that lie inside the run (exactly `names` when given)."""
    if not isinstance(values, dict) or not values or (names is not None and set(values) != set(names)):
        need = f"map {', '.join(names)} to onset fractions" if names else "be a non-empty {name: start_frac} dict"
        raise ConfigError(f"{field}: must {need}, got {values!r}")
    for name, start in values.items():
        if not _is_number(start) or start < 0 or start + window_frac > 1 + 1e-9:
            raise ConfigError(f"{field}: window {name!r} at {start!r} must start in [0, 1 - window_frac]")
    return {k: float(v) for k, v in values.items()}
