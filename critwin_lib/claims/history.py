"""The rules no longer in force, kept so each page's rule history can say what the old rule gives on today's runs.

Until 2026-12-01 every verdict read mean final OOD accuracy over a few seeds (C1–C7, C11, C12) or a count of
agreeing metrics (C13); then fates were counted per seed and the rules in force (`rules`) replaced these. C4's
and C4b's old rules bisected the onset to the paper's resolution; that bisection trained onsets no design lists,
so here it only reads runs already stored (`old_onset_rule`): an analysis never trains. From 2026-12-01 to
2026-12-04 a "beats" part had no size: a comparison the seeds could not decide said *inconclusive* even where its
interval excluded the paper's effect (`without_size`). Nothing in this module decides a verdict in force.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from critwin_lib import protocol
from critwin_lib.claims import onsets, rules
from critwin_lib.claims.core import CHANCE_BAND
from critwin_lib.claims.fates import Comparison
from critwin_lib.claims.rules import (
    C2_CLEARLY,
    C2_FACTOR,
    C6_GAP,
    C7_RANGE,
    C8_FAST,
    C10_FLAT,
    C13_AGREE,
    EDGE_WIDTH,
    MATCHES,
    WORKS,
)
from critwin_lib.sizes import Size
from critwin_lib.store import MissingResults


def verdict_c01(W: float, F: float, N: float) -> str:
    """C1: window W matches full-run F (W ≥ F − 0.10) and works (W ≥ N + 0.25)."""
    if W >= F - MATCHES and W >= N + WORKS:
        return "reproduced"
    if W >= N + WORKS:
        return "partly reproduced"
    return "not reproduced"


def verdict_c02(M: float, E: float, N: float) -> str:
    """C2: middle M ≥ 5·early E and works; partly when M ≥ E + 0.15."""
    if M >= N + WORKS and M >= C2_FACTOR * E:
        return "reproduced"
    if M >= E + C2_CLEARLY:
        return "partly reproduced"
    return "not reproduced"


def verdict_c03(E: float, L: float, N: float, M: float) -> str:
    """C3: early E and late L within 0.10 of none N while the middle M works (both: reproduced, one: partly)."""
    at_chance = [abs(v - N) <= CHANCE_BAND for v in (E, L)]
    if M < N + WORKS:  # no placement works: "early and late fail" would say nothing
        return "not reproduced"
    return "reproduced" if all(at_chance) else ("partly reproduced" if any(at_chance) else "not reproduced")


def verdict_c04(has_edge: bool, width: float, resolution: int) -> str:
    """C4: an upward crossing exists and chance → 0.61 takes at most 4 resolution steps (partly: wider)."""
    if not has_edge or math.isnan(width):
        return "not reproduced"
    return "reproduced" if width <= EDGE_WIDTH * resolution else "partly reproduced"


def verdict_c04b(edges: list[tuple[float, float]]) -> str:
    """C4b, given (t_mem, edge) of each protocol whose edge was found (edge NaN: none found): with two edges,
    the later-fitting protocol's edge moves by at least half the shift of t_mem; with one, the edge lies
    within t_mem / 2 of its t_mem (partly)."""
    found = sorted((t, e) for t, e in edges if not math.isnan(e))
    if len(found) >= 2:
        (t_a, e_a), (t_b, e_b) = found[:2]
        return "reproduced" if t_b - t_a > 0 and e_b - e_a >= 0.5 * (t_b - t_a) else "partly reproduced"
    if len(found) == 1:
        t, e = found[0]
        return "partly reproduced" if abs(e - t) <= t / 2 else "not reproduced"
    return "not reproduced"


def verdict_c05(found: pd.DataFrame) -> str:
    """C5, from the γ with an edge (columns gamma, edge, edge_pm; sorted by γ): Spearman ρ(γ, edge) ≤ −0.8
    and the largest γ's bracket entirely before the smallest's; partly when ρ < 0."""
    if len(found) < 2:
        return "not reproduced"
    rho = found["gamma"].corr(found["edge"], method="spearman")
    first, last = found.iloc[0], found.iloc[-1]
    apart = last["edge"] + last["edge_pm"] < first["edge"] - first["edge_pm"]
    if rho <= -0.8 and apart:
        return "reproduced"
    return "partly reproduced" if rho < 0 else "not reproduced"


def verdict_c06(small_share: float, ref_share: float) -> str:
    """C6: the share of reasoning seeds at γ 1.1 exceeds γ 0.5's by ≥ 0.25 (partly: by anything)."""
    d = ref_share - small_share
    if d >= C6_GAP:
        return "reproduced"
    return "partly reproduced" if d > 0 else "not reproduced"


def verdict_c07(basin: pd.DataFrame) -> tuple[str, float]:
    """C7, from the basin (gamma, reasoning, final_ood; sorted by γ): the γ with most reasoning seeds (ties:
    higher OOD) lies in [0.7, 1.1] and beats both ends (partly: one end). Returns (verdict, best γ)."""
    best = basin.sort_values(["reasoning", "final_ood"], ascending=False).iloc[0]
    ends = basin.iloc[[0, -1]]
    if not C7_RANGE[0] <= best["gamma"] <= C7_RANGE[1]:
        return "not reproduced", float(best["gamma"])
    above = int((best["reasoning"] > ends["reasoning"]).sum())
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[above], float(best["gamma"])


def verdict_c08(no_window: bool, ratio: float) -> str:
    """C8: every window groks in most seeds (no window) and the best constant's median is
    ≥ 2x sooner than the windows' pooled median; partly: one of them."""
    fast = ratio >= C8_FAST
    return "reproduced" if no_window and fast else ("partly reproduced" if no_window or fast else "not reproduced")


def verdict_c10(mem: dict[str, float], rea: dict[str, float]) -> str:
    """C10 (read on AdamW's rates): the memorization rate's γ-exponent interval
    within ± 0.5 (Θ(1)) and the reasoning rate's covers 2 above 0 (Θ(γ²)); partly: one of them."""
    flat = not math.isnan(mem["lo"]) and -C10_FLAT <= mem["lo"] and mem["hi"] <= C10_FLAT
    quadratic = not math.isnan(rea["lo"]) and rea["lo"] <= 2 <= rea["hi"] and rea["lo"] > 0
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[int(flat) + int(quadratic)]


def verdict_c11(persists: bool, lower_plateau: bool, more_spread: bool) -> str:
    """C11: the window persists at depth, with a lower plateau and more seed variance (partly: one of them)."""
    if not persists:
        return "not reproduced"
    return "reproduced" if lower_plateau and more_spread else (
        "partly reproduced" if lower_plateau or more_spread else "not reproduced")


def verdict_c12(window_works: bool, constant_much_worse: bool) -> str:
    """C12: under SGD the window works and constant weight decay is much worse (partly: one of them)."""
    return "reproduced" if window_works and constant_much_worse else (
        "partly reproduced" if window_works or constant_much_worse else "not reproduced")


def verdict_c13(n_agree: int) -> str:
    """C13: at least 3 of the 4 metrics agree (partly: at least 1)."""
    return "reproduced" if n_agree >= C13_AGREE else ("partly reproduced" if n_agree >= 1 else "not reproduced")



@dataclass
class OldOnsetRule:
    """C4's rule before fates on one protocol's onset sweep, from stored runs: `sweep` is None when a run the
    bisection visits was never stored at this profile (the old rule is then not computed, not trained)."""

    sweep: onsets.OnsetSweep | None
    missing: str = ""  # the run that is not stored, when sweep is None


def old_onset_rule(P: Size, seeds: list[int], gamma: float, proto: str, grid: list[int], window_frac: float,
                   results_dir: str, window_lambda: float = 0.0) -> OldOnsetRule:
    """The old C4/C4b analysis: the first upward crossing of θ = (N + 0.61) / 2 by the mean final OOD of
    `seeds`, bisected to the paper's resolution scaled to the run, read from stored runs only."""
    try:
        return OldOnsetRule(onsets.analyse(P, seeds, gamma, proto, grid, window_frac, results_dir,
                                           train_missing=False, workers=0, window_lambda=window_lambda))
    except MissingResults as e:
        return OldOnsetRule(None, str(e).splitlines()[0])


def c04_old_numbers(old: OldOnsetRule, n_seeds: int) -> dict[str, object]:
    """The numbers C4's page glues for its rule history (NaN and "not computed" when the runs are not stored)."""
    if old.sweep is None:
        return {"old_rule_verdict": "not computed (its bisection runs are not stored at this profile)",
                "old_edge": math.nan, "old_edge_pm": math.nan, "old_width": math.nan, "old_seeds": n_seeds}
    a, e = old.sweep, old.sweep.edge
    return {"old_rule_verdict": verdict_c04(a.bracket is not None, a.width, a.resolution),
            "old_edge": e.edge if e else math.nan, "old_edge_pm": e.uncertainty if e else math.nan,
            "old_width": a.width, "old_seeds": n_seeds}


def c04b_old_numbers(old: list[OldOnsetRule]) -> dict[str, str]:
    """C4b's old verdict and its one-line text, from the old analysis of each protocol."""
    if any(o.sweep is None for o in old):
        return {"old_rule_verdict": "not computed (its bisection runs are not stored at this profile)",
                "old_text": "not computed"}
    sweeps = [o.sweep for o in old]
    return {"old_rule_verdict": verdict_c04b([(s.t_mem_none, s.edge.edge if s.edge else math.nan) for s in sweeps]),
            "old_text": "; ".join(f"{protocol.plain(s.protocol)}: t_mem {s.t_mem_none:.0f}, " + (
                f"edge {s.edge.edge:.0f} ± {s.edge.uncertainty:.0f}" if s.edge else "no edge") for s in sweeps)}


def without_size(parts: dict[str, Comparison]) -> str:
    """The rule of 2026-12-01 to 2026-12-04 on a page's parts: the same parts without the paper's size."""
    return rules.combine({k: c.state for k, c in parts.items() if c.test != "size"})
