"""The weight-decay conditions of the anchor claims on the other tasks (C8: modular-arithmetic grokking, C9: SCAN
add_prim_jump): none, constant λ over the run, and one 25 % window early / in the middle / late with the budget Σλ
of a constant λ. Shared by both pages, which ask whether the critical window is a property of the anchor task.
"""

from __future__ import annotations

from critwin_lib import checks, config
from critwin_lib.config import WDSchedule
from critwin_lib.sizes import Size


def conditions(size: Size, constant_lambdas: list, budget_lambda: float, placements: dict,
               window_frac: float) -> dict[str, WDSchedule]:
    """none, constant λ for each of `constant_lambdas` and for `budget_lambda` (the rule's reference), and a
    window per placement carrying the budget of a constant `budget_lambda` (λ_win = budget_lambda / window_frac).
    Bad values raise ConfigError naming them."""
    lambdas = checks.positive_numbers(constant_lambdas, "constant_lambdas", "positive numbers")
    budget_lambda = checks.positive_number(budget_lambda, "budget_lambda")
    if budget_lambda not in lambdas:
        lambdas = [*lambdas, budget_lambda]
    if not isinstance(window_frac, int | float) or not 0 < window_frac <= 1:
        raise config.ConfigError(f"window_frac: must be in (0, 1], got {window_frac!r}")
    places = checks.placements(placements, window_frac)
    if len(places) < 2:  # the claim is that a window's placement matters (or not): one placement cannot say
        raise config.ConfigError(f"placements: must name at least two windows to compare, got {placements!r}")
    out = {"none": WDSchedule.none()}
    out.update({f"constant λ={v:g}": WDSchedule.constant(v) for v in lambdas})
    for name, start in places.items():
        s, length = size.step_at(start), size.step_at(window_frac)
        out[name] = WDSchedule.budget_matched(budget_lambda * size.steps, s, min(length, size.steps - s))
    return out


def condition_tag(condition: str) -> str:
    """A condition's name as part of a glue key: 'constant λ=0.3' → 'constant_0.3'."""
    return condition.replace("constant λ=", "constant_").replace(" ", "_")
