"""The init-scale claim C5: does the window's onset edge move earlier as γ grows? And the explorer page's grid,
which is C5's runs drawn cell by cell beside the rate model's prediction. The basin across γ (C6, C7) is in
`basin`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats, theory
from critwin_lib.claims import fates, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import (
    SUCCESS_OOD,
    ClaimResult,
    Design,
    gamma_list,
    onset_grid,
)
from critwin_lib.schedules import schedule_frame
from critwin_lib.sizes import get_profile


# ------------------------------------------------------------------------------------------ C5
@dataclass
class GammaGridDesign(Design):
    gammas: list[float]
    onsets: list[int]


def c05_design(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float,
               protocol_name: str = "", refine_edges: bool = False) -> GammaGridDesign:
    """C5's runs: C4's onset sweep at every γ."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    gammas = gamma_list(gammas)
    protocol.get_protocol(protocol_name, "protocol_name")
    grid = onset_grid(P, onset_fracs)
    checks.flag(refine_edges, "refine_edges")
    specs = onsets.gamma_specs(P, seeds, gammas, protocol_name, grid, window_frac)
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
               f"onsets {grid}")
    return GammaGridDesign(specs, summary, seeds, gammas, grid, protocol=protocol_name)


def c05_sweep(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any
              ) -> onsets.GammaSweep:
    """C5's analysis (the onset edge at every γ), for the pages that draw or compare it."""
    d = c05_design(**params)
    return onsets.gamma_sweep(get_profile(params["profile"]), d.seeds, d.gammas,
                              d.protocol, d.onsets,
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
    sensitivity: pd.DataFrame  # the rule under each success metric (the rule's row marked)


def window_centroids(per_run: pd.DataFrame, success: str = "reasoning") -> pd.DataFrame:
    """Per (γ, seed), a seed-level position of the window: the mean onset of the windows under which the seed
    reasons (NaN when it reasons under none). `per_run`: window runs (onset ≥ 0) with gamma, seed, onset, fate."""
    w = per_run[per_run["onset"] >= 0].assign(ok=lambda d: d["fate"] == success)
    return (w[w["ok"]].groupby(["gamma", "seed"])["onset"].mean()
            .reindex(pd.MultiIndex.from_frame(w[["gamma", "seed"]].drop_duplicates()))
            .rename("centroid").reset_index())


def c05_trend(per_run: pd.DataFrame) -> dict[str, Any]:
    """C5's part "the window moves earlier as γ grows": Spearman's ρ of the seed-level centroids against γ with
    permutation tests over seeds (the spec's trend test); holds when the one-sided test for an earlier window at
    larger γ gives p < α, rejected when the one for a later one does."""
    c = window_centroids(per_run).dropna()
    if len(c) < 3 or c["gamma"].nunique() < 2 or c["centroid"].nunique() < 2:
        return {"rho": math.nan, "p_earlier": math.nan, "p_later": math.nan, "n": len(c), "state": rules.UNDECIDED}
    rho, p_less = stats.spearman_trend_test(c["gamma"], c["centroid"], "less")
    _, p_greater = stats.spearman_trend_test(c["gamma"], c["centroid"], "greater")
    return {"rho": rho, "p_earlier": p_less, "p_later": p_greater, "n": len(c),
            "state": rules.part_beats(p_less, p_greater)}


def c05(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C5Result:
    """C5: the onset sweep of C4 at every γ, where its onset edge sits as γ moves (bracket on the means, and the
    reasoning share's edge with a bootstrap over seeds), and the trend test over seeds the rule reads."""
    d = c05_design(**params)
    P = get_profile(params["profile"])
    g = c05_sweep(results_dir=results_dir, train_missing=train_missing, workers=workers, **params)
    found = g.edges.dropna(subset=["edge"]).sort_values("gamma")
    old_verdict = rule_history.verdict_c05(found)  # the rule before 2026-12-01, on the bracketed edges of the means
    trend = c05_trend(g.per_run)
    verdict = rules.combine({"earlier as γ grows": trend["state"]})
    by_max = g.per_run.assign(fate=np.where(g.per_run["max_ood"] > SUCCESS_OOD, "reasoning", "other"))
    trend_max = c05_trend(by_max)
    sensitivity = pd.DataFrame([
        {"a seed reasons when": label, "ρ": round(t["rho"], 2), "p (earlier)": round(t["p_earlier"], 3),
         "p (later)": round(t["p_later"], 3), "seed-level values": t["n"],
         "verdict": rules.combine({"earlier as γ grows": t["state"]}), "rule": label.startswith("final")}
        for label, t in ((fates.REASONS_FITTED, trend), ("max OOD over training > 0.5", trend_max))])
    share_edges = {gm: onsets.share_edge(g.per_run[(g.per_run["gamma"] == gm) & (g.per_run["onset"] >= 0)])
                   for gm in d.gammas}
    for field, column in (("edge", "share_edge"), ("lo", "share_edge_lo"), ("hi", "share_edge_hi"),
                          ("found", "share_edge_found")):
        g.edges[column] = [getattr(share_edges[gm], field) for gm in g.edges["gamma"]]
    rho = float(found["gamma"].corr(found["edge"], method="spearman")) if len(found) >= 2 else math.nan
    rho_mem = float(g.edges["gamma"].corr(g.edges["t_mem"], method="spearman"))
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "old_rule_verdict": old_verdict,
               "protocol": d.protocol, "n_gammas": len(d.gammas),
               "n_edges": len(found), "rho_edge": rho, "rho_t_mem": rho_mem,
               "trend_rho": trend["rho"], "trend_p": trend["p_earlier"], "trend_p_later": trend["p_later"],
               "trend_n": trend["n"], "refined": bool(params.get("refine_edges", False)),
               **onsets.edge_numbers(g.edges)}
    rows = g.edges.to_dict("records")
    parts = [f"γ {r['gamma']:g}: " + (f"{r['edge']:.0f} ± {r['edge_pm']:.0f}" if not math.isnan(r["edge"])
                                      else "no edge") for r in rows]
    numbers["edges_text"] = "; ".join(parts)

    def share_text(e: onsets.ShareEdge) -> str:
        if math.isnan(e.edge):
            return f"none ({e.found:.0%} of resamples)"
        return f"{e.edge:.0f} [{e.lo:.0f}, {e.hi:.0f}]"

    numbers["share_edges_text"] = "; ".join(f"γ {gm:g}: {share_text(e)}" for gm, e in share_edges.items())
    trend_text = ("no trend test (too few seeds reason)" if math.isnan(trend["rho"]) else
                  f"ρ(γ, where the window works) {trend['rho']:.2f}, permutation p {trend['p_earlier']:.2f} "
                  f"over {trend['n']} seed-level values")
    numbers["trend_text"] = trend_text
    ours = (f"reasoning-share edge {numbers['share_edges_text']}; {trend_text}; t_mem "
            + ", ".join(f"{r['t_mem']:.0f}" for r in rows))
    row = {"claim": "C5", "statement": "the window's position depends on the init scale γ: it moves earlier as "
                                       "γ grows", "paper": "earlier for larger γ (no numbers)", "ours": ours,
           "profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    return C5Result(rows=[row], numbers=numbers, summary=d.summary, edges=g.edges, table=g.table, per_run=g.per_run,
                    curves=g.curves, steps=P.steps, onsets=d.onsets, sensitivity=sensitivity)


# ---------------------------------------------------------------------------------- the explorer
def x01_design(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float,
               theory_seeds: int, protocol_name: str = "") -> GammaGridDesign:
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
    pr = protocol.get_protocol(d.protocol)
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
