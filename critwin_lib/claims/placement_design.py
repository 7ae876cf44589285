"""What the window-placement pages (C1, C2/C3) share: their design type, its checks and its construction (the
page's protocol and the sensitivity table's, the seeds, the sequential design's looks), the fate rule a design
reads, and a size part in the paper's own metric, mean OOD over seeds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, sequential
from critwin_lib.claims import core, fates
from critwin_lib.claims.core import Design
from critwin_lib.sizes import Size


def ood_for(r: dict[str, pd.Series], name: str) -> tuple[Any, int]:
    """Condition `name`'s final OOD accuracy per seed (`<name>_ood`) and the bootstrap resamples to read a size with;
    inside a power simulation, which draws fates only, the OOD a bimodal seed has and fewer resamples."""
    key = f"{name}_ood"
    return (r[key], fates.SIZE_BOOT) if key in r else (fates.ood_of(r[name]), fates.SIM_BOOT)


def size_part(part: str, r: dict[str, pd.Series], a: str, b: str, least: float, kind: str, levels: fates.Levels
          ) -> fates.Comparison:
    """A size part in the paper's metric, mean OOD (`fates.mean_size`), at the look's interval level."""
    (x, boots), (y, _) = ood_for(r, a), ood_for(r, b)
    return fates.mean_size(part, x, y, least, kind, levels.interval, boots)


@dataclass
class PlacementDesign(Design):
    """The runs of a placement page under its protocol and under the alternative one of the sensitivity table."""

    conditions: dict[str, dict[tuple[str, float], config.WDSchedule]]  # protocol → (condition, start) → λ(t)
    close: dict[str, int | None]  # condition → the step its window closes (None: its own window's end)
    steps: int
    budget: float
    window_lambda: float
    protocols: list[str]
    looks: list[int] = dataclasses.field(default_factory=list, kw_only=True)  # the sequential design's (C1, C2)
    fitted_reasoning: bool = dataclasses.field(default=True, kw_only=True)  # False: the rule before 2026-12-06
    sequential_c3: bool = dataclasses.field(default=False, kw_only=True)  # C3 looked at by the same design as C2


def check_fitted(flag: Any) -> bool:
    """The `fitted_reasoning` parameter: True (a seed reasons only if its training set is fitted at the end, the
    rule on every page since 2026-12-06) or False (OOD accuracy alone, the rule before)."""
    return checks.flag(flag, "fitted_reasoning")


def with_rule_fates(per_run: pd.DataFrame, d: PlacementDesign) -> pd.DataFrame:
    """The runs with the fates the design's rule reads (reasoning needs a fitted training set unless it says not)."""
    return per_run if d.fitted_reasoning else fates.with_fates(per_run, require_fit=False)


def planned_looks(looks: list | None, n_seeds: int, P: Size) -> list[int]:
    """The sequential design's looks (seed counts; default: this run's seeds alone), with n_seeds one of them."""
    n = len(P.seeds(n_seeds))
    planned = sequential.check_looks(looks) if looks else [n]
    if n not in planned:
        raise config.ConfigError(f"n_seeds: must be one of the sequential design's looks {planned}, got {n}")
    return planned


def build_design(P: Size, seeds: dict[str, list[int]], gamma: float, conditions: dict[str, dict], summary: str,
            close: dict[str, int | None], budget: float, lam: float, onset_seeds: list[int],
            planned: list[int], fitted_reasoning: bool) -> PlacementDesign:
    specs = []
    for proto, conds in conditions.items():
        for (name, start), wd in conds.items():
            cell_seeds = onset_seeds if name == "onset" else seeds[proto]
            specs += [({"protocol": proto, "condition": name, "window_start": start, "seed": s},
                       protocol.anchor_run(P, s, wd, gamma=gamma, protocol=proto)) for s in cell_seeds]
    main = next(iter(conditions))  # the page's protocol comes first, the sensitivity table's after it
    return PlacementDesign(specs, summary, seeds[main], conditions, close, P.steps, budget, lam, list(conditions),
                           protocol=main, looks=planned, fitted_reasoning=fitted_reasoning)


def window_lambdas(protocol_name: str, alt_protocol: str, alt_window_lambda: float, window_lambda: float
               ) -> dict[str, float]:
    """{protocol: its in-window λ} for the page's protocol and the sensitivity table's alternative (if any)."""
    out = {protocol_name: core.window_lambda(protocol_name, window_lambda)}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        out[alt_protocol] = core.window_lambda(alt_protocol, alt_window_lambda)
    return out


def close_steps(per_run: pd.DataFrame, close: dict[str, int | None], default: int, length: int) -> list[int]:
    """The step each run's window closes: `close[condition]` (None: the run's own window, `window_start +
    length`); conditions not in `close` (no window) at `default`."""
    out = []
    for cond, start in zip(per_run["condition"], per_run["window_start"], strict=True):
        c = close.get(cond, default)
        out.append(int(start) + length if c is None else int(c))
    return out
