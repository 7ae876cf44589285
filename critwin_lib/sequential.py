"""Group-sequential designs over seeds: a page looks at its seeds block by block and stops as soon as its rule
decides, with an O'Brien–Fleming-type α-spending function (Lan & DeMets 1983) keeping each test's chance of a false
decision at its α however many looks are taken.

At look k (information fraction t_k = seeds so far / the maximum) a one-sided test at overall level α may spend
α(t_k) = 2 − 2Φ(z_{1−α/2} / √t_k) in all; `nominal_levels` turns the spending into the level each look's test is
held to (so little at the first look that only an overwhelming effect stops there). Intervals at a look are
repeated confidence intervals (Jennison & Turnbull 1989): two-sided level 1 − 2·(that look's nominal level), so
a part may be decided at any look without inflating its error. The boundaries come from a fixed-grid recursive
integration of the Brownian-motion form of the test statistic: the same numbers on every CPU to far below what a
page prints.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

from critwin_lib.config import ConfigError

GRID = 4001  # points of the integration grid
LOW = -10.0  # the grid's lower end, in standard deviations of the statistic


def spent(t: float, alpha: float) -> float:
    """α spent by information fraction t (0 < t ≤ 1) under the O'Brien–Fleming-type function."""
    return float(2 - 2 * norm.cdf(norm.ppf(1 - alpha / 2) / math.sqrt(t)))


def _crossing(c: float, t: float, step: float, grid: np.ndarray | None, dens: np.ndarray | None) -> float:
    """P(no crossing before this look, Z ≥ c at it): `dens` is the sub-density of B = Z·√t on the previous look's
    continuation region `grid` (None at the first look)."""
    if grid is None:
        return float(1 - norm.cdf(c))
    tail = 1 - norm.cdf((c * math.sqrt(t) - grid) / math.sqrt(step))
    return float(np.trapezoid(dens * tail, grid))


def _excess(c: float, t: float, step: float, grid: np.ndarray | None, dens: np.ndarray | None, target: float
            ) -> float:
    return _crossing(c, t, step, grid, dens) - target


@functools.lru_cache(maxsize=256)
def _boundaries(fractions: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    """One-sided z boundaries c_k: P(no crossing before k, Z_k ≥ c_k) = α(t_k) − α(t_{k−1}) under the null."""
    out: list[float] = []
    grid, dens, t_prev = None, None, 0.0
    for t in fractions:
        target = spent(t, alpha) - (spent(t_prev, alpha) if t_prev else 0.0)
        step = t - t_prev
        c = float(brentq(_excess, -5.0, 12.0, args=(t, step, grid, dens, target), xtol=1e-12))
        out.append(c)
        new = np.linspace(LOW * math.sqrt(t), c * math.sqrt(t), GRID)
        if grid is None:
            dens = norm.pdf(new / math.sqrt(t)) / math.sqrt(t)
        else:
            kern = norm.pdf((new[:, None] - grid[None, :]) / math.sqrt(step)) / math.sqrt(step)
            dens = np.trapezoid(kern * dens[None, :], grid, axis=1)
        grid, t_prev = new, t
    return tuple(out)


def nominal_levels(looks: Sequence[int], alpha: float) -> list[float]:
    """The one-sided level each look's test is held to, for looks at these seed counts (the last is the maximum)
    and overall one-sided level α."""
    n_max = looks[-1]
    fractions = tuple(round(n / n_max, 12) for n in looks)
    return [float(1 - norm.cdf(c)) for c in _boundaries(fractions, float(alpha))]


def check_looks(looks: Sequence[int], field: str = "looks") -> list[int]:
    """Looks as strictly increasing positive seed counts."""
    if (not isinstance(looks, list | tuple) or not looks or any(not isinstance(n, int) or isinstance(n, bool)
                                                                 or n < 1 for n in looks)
            or list(looks) != sorted(set(looks))):
        raise ConfigError(f"{field}: must be increasing positive seed counts like [16, 32, 48], got {looks!r}")
    return list(looks)
