"""The anchor comparisons repeated under another model or optimizer (C11's depth, C12's SGD): no weight decay,
constant λ over the run with the window's budget, one 25 % window at several onsets, through
`protocol.anchor_run`; the 2-layer AdamW runs are the ones the C1-C4 pages use (same keys). `depth.py` and
`optimizer.py` build their designs from these.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from critwin_lib import checks, protocol, schedules
from critwin_lib.claims import rules
from critwin_lib.claims.core import Spec
from critwin_lib.config import ConfigError, ModelConfig, WDSchedule
from critwin_lib.sizes import Size

PERSISTS = rules.WORKS  # the window "works" when a window's mean final OOD is at least this above no weight decay
PLACEMENTS = ("early", "middle", "late")


def checked_placements(placements: Any, onsets: list[float], window_frac: float) -> dict[str, float]:
    """{name: onset fraction} for early / middle / late; each must be one of the swept onsets."""
    placements = checks.placements(placements, window_frac, PLACEMENTS)
    missing = [f"{k} {v!r}" for k, v in placements.items() if v not in onsets]
    if missing:
        raise ConfigError(f"placements: {', '.join(missing)} is not among onset_fracs {onsets}")
    return {k: float(v) for k, v in placements.items()}


def anchor_conditions(P: Size, onset_fracs: list[float], window_frac: float, window_lambda: float
                      ) -> list[tuple[str, float, WDSchedule]]:
    """(condition, onset step or NaN, schedule): no weight decay, constant λ with the windows' budget, and one
    window at λ `window_lambda` per onset."""
    windows = [(o, protocol.window(P, o, window_frac, window_lambda)) for o in onset_fracs]
    budget = schedules.budget(windows[0][1], P.steps)
    out = [("none", math.nan, WDSchedule.none()), ("full", math.nan, protocol.full_run(budget / P.steps))]
    return out + [("window", float(wd.windows[0][0]), wd) for _, wd in windows]


def anchor_specs(P: Size, seeds: list[int], gamma: float, proto: str, onset_fracs: list[float],
                 window_frac: float, label: dict[str, Any], model: ModelConfig | None = None) -> list[Spec]:
    """Every seed under every anchor condition (`anchor_conditions` at the protocol's window λ), labelled."""
    pr = protocol.get_protocol(proto)
    return [({**label, "condition": c, "onset": o, "seed": s},
             protocol.anchor_run(P, s, wd, gamma=gamma, model=model, protocol=proto))
            for c, o, wd in anchor_conditions(P, onset_fracs, window_frac, pr.window_lambda) for s in seeds]


def name_placements(frame: pd.DataFrame, P: Size, placements: dict[str, float]) -> pd.Series:
    """'none', 'full', 'early' / 'middle' / 'late' or 'onset <step>' per row (runs or history rows)."""
    names = {P.step_at(f): k for k, f in placements.items()}
    out = frame["condition"].astype(object).copy()
    win = frame["condition"] == "window"
    out[win] = frame.loc[win, "onset"].map(lambda o: names.get(int(o), f"onset {int(o)}"))
    return out
