"""The paper's headline cliff (C4′): moving the window's onset by 100 steps of 20,000 takes OOD from chance to
reasoning (+100: 0.15 → 0.61, +400: 0.93). The coarse onset sweep (C4) can only bracket an edge; this design
tiles the bracket it found with onsets at the paper's resolution scaled to the run (100 steps at 20,000, 32 at
6,400), so a jump that sharp would fall between two neighbouring onsets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from critwin_lib import config, protocol, stats
from critwin_lib.claims import onsets
from critwin_lib.claims.core import PAPER_RESOLUTION, Design
from critwin_lib.sizes import Size, get_profile


def resolution(P: Size) -> int:
    """The paper's 100 steps of 20,000, scaled to the profile's run (at least one step)."""
    return max(1, round(PAPER_RESOLUTION * P.steps / 20_000))


def fine_grid(P: Size, lo_frac: float, hi_frac: float) -> list[int]:
    """Onsets every `resolution(P)` steps from lo to hi (both included, as fractions of the run), ordered coarse
    to fine: every other onset first, so that a sweep cut off half-way has already tiled the bracket at twice
    the spacing."""
    lo, hi = P.step_at(lo_frac, "lo_frac"), P.step_at(hi_frac, "hi_frac")
    if hi <= lo:
        raise config.ConfigError(f"hi_frac: must be above lo_frac ({hi_frac} <= {lo_frac})")
    res = resolution(P)
    grid = list(range(lo, hi + 1, res))
    return grid[::2] + grid[1::2]


@dataclass
class CliffDesign(Design):
    grid: list[int]  # in training order (coarse to fine)
    resolution: int


def cliff_design(*, profile: str, n_seeds: int, gamma: float, lo_frac: float, hi_frac: float,
                 window_frac: float, protocol_name: str = "") -> CliffDesign:
    """The cliff's runs: the 25 % window at every onset of the fine grid over [lo, hi], and no weight decay,
    n_seeds each (the first seeds of the coarse sweep, so its runs at the bracket's ends are reused)."""
    P = get_profile(profile)
    name = protocol.resolve(protocol_name, P)
    protocol.get_protocol(name, "protocol_name")
    seeds = P.seeds(n_seeds)
    grid = fine_grid(P, lo_frac, hi_frac)
    specs = onsets.sweep_specs(P, seeds, gamma, name, grid, window_frac)
    summary = (f"profile {P.name}, protocol {name}: {P.steps} steps, {len(seeds)} seeds, onsets every "
               f"{resolution(P)} steps from {min(grid)} to {max(grid)} ({len(grid)} onsets)")
    return CliffDesign(specs, summary, seeds, grid, resolution(P), protocol=name)


# ------------------------------------------------------------------------------ what the fine grid shows
CLIFF_JUMP = 0.4  # the paper's jump in reasoning share, at least: chance (0.15) to 0.61 OOD within 100 steps
SPAN = 4  # resolutions: the jump must happen within 4 × 100 steps of 20,000 (128 of 6,400): the paper's +400


def adjacent_jumps(per_run: pd.DataFrame, span: float, falling: bool = False) -> pd.DataFrame:
    """Every pair of onsets at most `span` apart: the change in reasoning share from the earlier to the later
    (signed as the design's direction) and the exact one-sided McNemar p on the seeds they share; uncorrected
    for the many pairs, so a description beside the rule, not the rule."""
    runs = per_run[per_run["onset"] >= 0]
    wide = runs.assign(r=runs["fate"] == "reasoning").pivot_table(index="seed", columns="onset", values="r",
                                                                  aggfunc="first")
    rows = []
    on = sorted(wide.columns)
    for i, a in enumerate(on):
        for b in on[i + 1:]:
            if b - a > span:
                break
            both = wide[[a, b]].dropna().astype(bool)
            first, later = both[a], both[b]
            if falling:
                first, later = later, first
            gained, lost = int((later & ~first).sum()), int((first & ~later).sum())
            rows.append({"from": int(a), "to": int(b), "seeds": len(both),
                         "change": (int(later.sum()) - int(first.sum())) / len(both) if len(both) else math.nan,
                         "p": stats.mcnemar_exact(gained, lost, alternative="greater")})
    return pd.DataFrame(rows, columns=["from", "to", "seeds", "change", "p"])
