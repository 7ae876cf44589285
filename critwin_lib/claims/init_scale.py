"""The init-scale claims: does the window's onset edge move earlier as γ grows (C5), does the basin of the
reasoning solution shrink at small γ (C6), is a moderate γ best (C7)? And the explorer page's grid, which
is C5's runs drawn cell by cell beside the rate model's prediction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats, theory
from critwin_lib.claims import onsets, rules
from critwin_lib.claims.core import ClaimResult, Design, condition_table, fetch, gamma_list, onset_grid, tag
from critwin_lib.schedules import schedule_frame
from critwin_lib.sizes import get_profile


# ------------------------------------------------------------------------------------------ C5
@dataclass
class GammaGridDesign(Design):
    gammas: list[float]
    onsets: list[int]


def c05_design(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float,
               protocol_name: str = protocol.DEFAULT_PROTOCOL, refine_edges: bool = False) -> GammaGridDesign:
    """C5's runs: C4's onset sweep at every γ."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    gammas = gamma_list(gammas)
    protocol.get_protocol(protocol_name, "protocol_name")
    grid = onset_grid(P, onset_fracs)
    checks.flag(refine_edges, "refine_edges")
    specs = onsets.gamma_specs(P, seeds, gammas, protocol_name, grid, window_frac)
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
               f"onsets {grid}")
    return GammaGridDesign(specs, summary, seeds, gammas, grid)


def c05_sweep(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any
              ) -> onsets.GammaSweep:
    """C5's analysis (the onset edge at every γ), for the pages that draw or compare it."""
    d = c05_design(**params)
    return onsets.gamma_sweep(get_profile(params["profile"]), d.seeds, d.gammas,
                              params.get("protocol_name", protocol.DEFAULT_PROTOCOL), d.onsets,
                              params["window_frac"], results_dir, train_missing, workers,
                              refine=params.get("refine_edges", False))


@dataclass
class C5Result(ClaimResult):
    edges: pd.DataFrame
    table: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame
    steps: int
    onsets: list[int]


def c05(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C5Result:
    """C5: the onset sweep of C4 at every γ, and where its onset edge sits as γ moves. Without
    `refine_edges` the edge is the coarse bracket's middle, ± half its width."""
    d = c05_design(**params)
    P = get_profile(params["profile"])
    g = c05_sweep(results_dir=results_dir, train_missing=train_missing, workers=workers, **params)
    found = g.edges.dropna(subset=["edge"]).sort_values("gamma")
    verdict = rules.verdict_c05(found)
    rho = float(found["gamma"].corr(found["edge"], method="spearman")) if len(found) >= 2 else math.nan
    rho_mem = float(g.edges["gamma"].corr(g.edges["t_mem"], method="spearman"))
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict,
               "protocol": params.get("protocol_name", protocol.DEFAULT_PROTOCOL), "n_gammas": len(d.gammas),
               "n_edges": len(found), "rho_edge": rho, "rho_t_mem": rho_mem,
               "refined": bool(params.get("refine_edges", False)), **onsets.edge_numbers(g.edges)}
    rows = g.edges.to_dict("records")
    parts = [f"γ {r['gamma']:g}: " + (f"{r['edge']:.0f} ± {r['edge_pm']:.0f}" if not math.isnan(r["edge"])
                                      else "no edge") for r in rows]
    numbers["edges_text"] = "; ".join(parts)
    ours = ("onset edge " + "; ".join(parts) + (f" (Spearman ρ(γ, edge) {rho:.2f})" if not math.isnan(rho) else "")
            + "; t_mem " + ", ".join(f"{r['t_mem']:.0f}" for r in rows))
    row = {"claim": "C5", "statement": "the window's position depends on the init scale γ: it moves earlier as "
                                       "γ grows", "paper": "earlier for larger γ (no numbers)", "ours": ours,
           "profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    return C5Result([row], numbers, d.summary, g.edges, g.table, g.per_run, g.curves, P.steps, d.onsets)


# -------------------------------------------------------------------------------------- C6, C7
C6_GAMMAS = (0.5, 1.1)  # the paper's comparison: 8/12 at γ = 0.5, 12/12 at γ = 1.1


@dataclass
class BasinDesign(Design):
    gammas: list[float]
    window: config.WDSchedule
    window_lambda: float


def c06_c07_design(*, profile: str, n_seeds: int, gammas: list, window_start_frac: float, window_frac: float,
                   protocol_name: str = protocol.DEFAULT_PROTOCOL) -> BasinDesign:
    """C6/C7's runs: one placed window at every γ, the same seeds."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    gammas = gamma_list(gammas)
    missing = [g for g in C6_GAMMAS if g not in gammas]
    if missing:
        raise config.ConfigError(f"gammas: must include {list(C6_GAMMAS)} (the paper's comparison), missing {missing}")
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    wd = protocol.window(P, window_start_frac, window_frac, pr.window_lambda)
    specs = [({"gamma": g, "seed": s}, protocol.anchor_run(P, s, wd, gamma=g, protocol=protocol_name))
             for g in gammas for s in seeds]
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
               f"window {wd.windows[0][:2]} at λ {pr.window_lambda:g}")
    return BasinDesign(specs, summary, seeds, gammas, wd, pr.window_lambda)


@dataclass
class BasinResult(ClaimResult):
    basin: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame
    steps: int
    window: tuple[int, int, float]


def c06_c07(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> BasinResult:
    """C6 and C7: at each γ, the seeds that reach OOD > 0.5 under one placed window (the basin of the
    reasoning solution), with exact binomial intervals; which γ is best."""
    d = c06_c07_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    basin = condition_table(per_run, ["gamma"]).sort_values("gamma").reset_index(drop=True)
    basin["share"] = basin["reasoning"] / basin["seeds"]
    cis = [stats.binomial_ci(int(k), int(n)) for k, n in zip(basin["reasoning"], basin["seeds"], strict=True)]
    basin["share_lo"], basin["share_hi"] = [c[0] for c in cis], [c[1] for c in cis]
    basin = basin.merge(onsets.gamma_conventions(d.gammas), on="gamma")
    by = {float(r["gamma"]): r for r in basin.to_dict("records")}
    small, ref = by[C6_GAMMAS[0]], by[C6_GAMMAS[1]]
    p = stats.fisher_exact(int(ref["reasoning"]), int(ref["seeds"]), int(small["reasoning"]), int(small["seeds"]),
                           "greater")
    v6 = rules.verdict_c06(small["share"], ref["share"])
    v7, best = rules.verdict_c07(basin)
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": v6, "verdict_c7": v7, "best_gamma": best,
               "protocol": params.get("protocol_name", protocol.DEFAULT_PROTOCOL),
               "window_start": d.window.windows[0][0], "window_end": d.window.windows[0][1],
               "window_lambda": d.window_lambda, "fisher_p": p}
    for r in by.values():
        t = tag(r["gamma"])
        numbers.update({f"k_{t}": int(r["reasoning"]), f"n_{t}": int(r["seeds"]), f"share_lo_{t}": r["share_lo"],
                        f"share_hi_{t}": r["share_hi"], f"ood_{t}": r["final_ood"]})
    counts = ", ".join(f"γ {r['gamma']:g}: {int(r['reasoning'])}/{int(r['seeds'])}" for r in by.values())
    rows = [{"claim": "C6", "statement": "the basin of the reasoning solution shrinks at small init",
             "paper": "γ 0.5: 8/12 seeds reach OOD > 0.5; γ 1.1: 12/12",
             "ours": f"{counts} (one-sided Fisher p {p:.2f}, γ 1.1 vs 0.5)", "profile": P.name,
             "seeds": len(d.seeds), "verdict": v6},
            {"claim": "C7", "statement": "a moderate init scale is best", "paper": "γ ∈ [0.7, 1.1]",
             "ours": f"most seeds reasoning at γ {best:g} ({counts})", "profile": P.name, "seeds": len(d.seeds),
             "verdict": v7}]
    curves = stats.mean_ci(history, ["gamma", "step"], "acc/test_ood")
    return BasinResult(rows, numbers, d.summary, basin, per_run, curves, P.steps, d.window.windows[0])


# ---------------------------------------------------------------------------------- the explorer
def x01_design(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float,
               theory_seeds: int, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> GammaGridDesign:
    """The explorer's grid: C5's runs."""
    checks.count(theory_seeds, "theory_seeds")
    return c05_design(profile=profile, n_seeds=n_seeds, gammas=gammas, onset_fracs=onset_fracs,
                      window_frac=window_frac, protocol_name=protocol_name)


@dataclass
class ExplorerGrid(ClaimResult):
    curves: pd.DataFrame
    schedules: pd.DataFrame
    theory: pd.DataFrame


def x01(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> ExplorerGrid:
    """The explorer's grid (C5's runs): OOD curves per (γ, window start), λ(t) per start, and the rate
    model's share of reasoning seeds for the same cell. No scoreboard row."""
    d = x01_design(**params)
    P = get_profile(params["profile"])
    pr = protocol.get_protocol(params.get("protocol_name", protocol.DEFAULT_PROTOCOL))
    c5 = c05_sweep(results_dir=results_dir, train_missing=train_missing, workers=workers,
                   **{k: v for k, v in params.items() if k != "theory_seeds"})
    curves = c5.curves.copy()
    curves["condition"] = np.where(curves["onset"] < 0, "none", "window")
    curves["window_start"] = curves["onset"].where(curves["onset"] >= 0)
    length = protocol.window_steps(P, 0.0, params["window_frac"])[1]
    sched = pd.concat([schedule_frame({"none": config.WDSchedule.none()}, P.steps).assign(window_start=math.nan)]
                      + [schedule_frame({"window": config.WDSchedule.window(o, length, pr.window_lambda)}, P.steps)
                         .assign(window_start=o) for o in d.onsets], ignore_index=True)
    n_theory = params["theory_seeds"]
    share = theory.window_shares(theory.RateModel(), d.gammas, [o / P.steps for o in d.onsets], n_theory,
                                 params["window_frac"])
    notes = []
    for i, o in enumerate(d.onsets):
        for j, g in enumerate(d.gammas):
            cell = c5.table[(c5.table["gamma"] == g) & (c5.table["onset"] == o)]
            k, n = int(cell["reasoning"].sum()), int(cell["seeds"].sum())
            notes.append({"gamma": g, "window_start": o,
                          "text": f"runs: {k}/{n} seeds reason · theory: {round(share[i, j] * n_theory)}/"
                                  f"{n_theory} seeds reason"})
    numbers = {"profile": P.name, "seeds": len(d.seeds), "n_cells": len(notes)}
    return ExplorerGrid([], numbers, d.summary, curves, sched, pd.DataFrame(notes))
