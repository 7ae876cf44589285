"""The window-edge finder: where, as the window's onset moves, does the fate switch?

Given a function that trains the runs for a batch of onsets and returns the mean OOD accuracy over
seeds at each, `find_edge` narrows a bracket [lo, hi] whose two ends lie on opposite sides of a
threshold, evaluating `per_round` interior onsets per round (they train in parallel), until the
bracket is no wider than `resolution` steps. Onsets stay on a grid of `resolution` steps so that
results are shared with other sweeps. Used by: the onset-sweep claims (C4, C5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class Edge:
    """The bracket [lo, hi] around the crossing, and every onset evaluated on the way."""

    lo: int
    hi: int
    threshold: float
    values: dict[int, float] = field(default_factory=dict)

    @property
    def edge(self) -> float:
        """The crossing's estimate: the middle of the final bracket."""
        return (self.lo + self.hi) / 2

    @property
    def uncertainty(self) -> float:
        """Half the bracket's width: the crossing lies within edge ± uncertainty (for a monotone mean)."""
        return (self.hi - self.lo) / 2

    @property
    def rising(self) -> bool:
        return self.values[self.hi] >= self.threshold


def on_grid(x: float, resolution: int) -> int:
    return int(round(x / resolution)) * resolution


def find_edge(evaluate: Callable[[Sequence[int]], dict[int, float]], lo: int, hi: int, threshold: float,
              resolution: int, per_round: int = 2) -> Edge:
    """Narrow [lo, hi] (on opposite sides of `threshold`) to at most one grid step.

    The ends may come from a coarser sweep off the grid; every onset evaluated inside lies on the
    `resolution`-step grid. `evaluate(onsets)` returns {onset: mean OOD over seeds}. Raises ValueError
    when the two ends are on the same side: there is no crossing to find in the bracket.
    """
    if not lo < hi or resolution <= 0:
        raise ValueError(f"need lo < hi and a positive resolution, got [{lo}, {hi}] and {resolution}")
    values = dict(evaluate([lo, hi]))
    if (values[lo] >= threshold) == (values[hi] >= threshold):
        raise ValueError(f"no crossing of {threshold} in [{lo}, {hi}]: mean OOD {values[lo]:.3f} and {values[hi]:.3f}")
    while hi - lo > resolution:
        n = max(1, min(per_round, (hi - lo) // resolution - 1))
        inner = sorted({min(max(on_grid(lo + (hi - lo) * (i + 1) / (n + 1), resolution), lo + 1), hi - 1)
                        for i in range(n)} - {lo, hi})
        if not inner:  # no grid point strictly inside: the bracket is as narrow as the grid allows
            break
        values.update(evaluate([o for o in inner if o not in values]))
        points = [lo, *inner, hi]
        for a, b in zip(points, points[1:], strict=False):  # the first sub-bracket that still crosses
            if (values[a] >= threshold) != (values[b] >= threshold):
                lo, hi = a, b
                break
    return Edge(lo, hi, threshold, values)


def transition_width(onsets: Sequence[int], means: Sequence[float], low: float, high: float) -> float:
    """The fewest steps between an onset whose mean OOD is at or below `low` (chance) and one at or
    above `high` (reasoning): how sharp the switch is. NaN when the sweep does not reach both."""
    lows = [o for o, m in zip(onsets, means, strict=True) if m <= low]
    highs = [o for o, m in zip(onsets, means, strict=True) if m >= high]
    return float(min((abs(a - b) for a in lows for b in highs), default=float("nan")))
