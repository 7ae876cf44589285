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
from critwin_lib.claims import fates, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import (
    SUCCESS_OOD,
    ClaimResult,
    Design,
    condition_table,
    fetch,
    gamma_list,
    onset_grid,
    tag,
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
        for label, t in (("final OOD > 0.5", trend), ("max OOD over training > 0.5", trend_max))])
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


# -------------------------------------------------------------------------------------- C6, C7
C6_GAMMAS = (0.5, 1.1)  # the paper's comparison: 8/12 at γ = 0.5, 12/12 at γ = 1.1
C6_PAPER_SHARES = (8 / 12, 12 / 12)  # the paper's effect, for the power of the design
POWER_DRAWS = 10_000


@dataclass
class BasinDesign(Design):
    gammas: list[float]
    windows: dict[str, config.WDSchedule]  # name: schedule; the first is the rule's
    window_lambda: float


def c06_c07_design(*, profile: str, n_seeds: int, gammas: list, windows: dict, window_frac: float,
                   protocol_name: str = "") -> BasinDesign:
    """C6/C7's runs: each placed window ({name: start fraction}; the first is the rule's) at every γ, the same
    seeds."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    gammas = gamma_list(gammas)
    missing = [g for g in C6_GAMMAS if g not in gammas]
    if missing:
        raise config.ConfigError(f"gammas: must include {list(C6_GAMMAS)} (the paper's comparison), missing {missing}")
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    places = checks.placements(windows, window_frac, field="windows")
    wds = {name: protocol.window(P, start, window_frac, pr.window_lambda) for name, start in places.items()}
    specs = [({"window": name, "gamma": g, "seed": s}, protocol.anchor_run(P, s, wd, gamma=g, protocol=protocol_name))
             for name, wd in wds.items() for g in gammas for s in seeds]
    where = ", ".join(f"{name} {wd.windows[0][:2]}" for name, wd in wds.items())
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
               f"windows {where} at λ {pr.window_lambda:g}, {len(specs)} runs")
    return BasinDesign(specs, summary, seeds, gammas, wds, pr.window_lambda, protocol=protocol_name)


def c06_part(b: int, c: int, n: int) -> str:
    """C6's one part, "more seeds reason at γ 1.1 than at γ 0.5", on seeds shared by the two γ: b reason at 1.1
    only, c at 0.5 only. Holds on an exact one-sided McNemar test at α; rejected when the reverse is significant
    or when Tango's 95 % interval of the share difference lies below C6_GAP (the data exclude the paper's size)."""
    state = fates.beats_counts(b, c)[0]
    if state == rules.UNDECIDED and n and stats.tango_ci(b, c, n)[2] < rules.C6_GAP:
        return rules.REJECTED
    return state


def c07_parts(basin: pd.DataFrame) -> dict[str, str]:
    """C7's parts, "the moderate range [0.7, 1.1] beats the smallest γ" and "... the largest γ": the moderate γ's
    seeds pooled against each extreme's, one-sided Fisher exact tests (basin: gamma, reasoning, seeds)."""
    lo, hi = rules.C7_RANGE
    mid = basin[(basin["gamma"] >= lo) & (basin["gamma"] <= hi)]
    k, n = int(mid["reasoning"].sum()), int(mid["seeds"].sum())
    parts = {}
    for label, row in (("beats the smallest γ", basin.iloc[0]), ("beats the largest γ", basin.iloc[-1])):
        if not n or lo <= row["gamma"] <= hi:  # no moderate γ, or the extreme is itself moderate
            parts[label] = rules.UNDECIDED
            continue
        ke, ne = int(row["reasoning"]), int(row["seeds"])
        parts[label] = rules.part_beats(stats.fisher_exact(k, n, ke, ne, "greater"),
                                        stats.fisher_exact(k, n, ke, ne, "less"))
    return parts


def c06_power(n: int, shares: tuple[float, float] = C6_PAPER_SHARES, draws: int = POWER_DRAWS) -> float:
    """The chance that C6's rule says "reproduced" with n seeds per γ if the paper's shares were the truth
    (seeds independent across γ), by simulation through `c06_part`."""
    rng = np.random.default_rng(0)
    small, ref = rng.random((draws, n)) < shares[0], rng.random((draws, n)) < shares[1]
    b, c = (ref & ~small).sum(axis=1), (small & ~ref).sum(axis=1)
    counts = pd.Series(list(zip(b.tolist(), c.tolist(), strict=True))).value_counts()
    hits = sum(cnt for (bb, cc), cnt in counts.items() if c06_part(bb, cc, n) == rules.HOLDS)
    return float(hits / draws)


def _basin(per_run: pd.DataFrame, gammas: list[float]) -> pd.DataFrame:
    basin = condition_table(per_run, ["gamma"]).sort_values("gamma").reset_index(drop=True)
    basin["share"] = basin["reasoning"] / basin["seeds"]
    cis = [stats.binomial_ci(int(k), int(n)) for k, n in zip(basin["reasoning"], basin["seeds"], strict=True)]
    basin["share_lo"], basin["share_hi"] = [c[0] for c in cis], [c[1] for c in cis]
    return basin.merge(onsets.gamma_conventions(gammas), on="gamma")


def _basin_verdicts(per_run: pd.DataFrame, gammas: list[float], success: str) -> dict[str, Any]:
    """Both rules on one window's runs, a seed reasoning when `success` (a per-run boolean column) is true."""
    runs = per_run.assign(fate=np.where(per_run[success], "reasoning", "other"))
    basin = _basin(runs, gammas)
    small, ref = (runs[runs["gamma"] == g].set_index("seed")["fate"] == "reasoning" for g in C6_GAMMAS)
    seeds = sorted(set(small.index) & set(ref.index))
    b = int((ref[seeds] & ~small[seeds]).sum())
    c = int((small[seeds] & ~ref[seeds]).sum())
    by = basin.set_index("gamma")
    k0, n0, k1, n1 = (int(by.loc[g, col]) for g in C6_GAMMAS for col in ("reasoning", "seeds"))
    p7 = c07_parts(basin)
    _, p_more, p_less = fates.beats_counts(b, c)
    return {"c6": rules.combine({"γ 1.1 above γ 0.5": c06_part(b, c, len(seeds))}), "c7": rules.combine(p7),
            "c7_parts": p7, "b": b, "c": c, "k0": k0, "n0": n0, "k1": k1, "n1": n1,
            "mcnemar_p": p_more, "mcnemar_p_reverse": p_less,
            "fisher_p": stats.fisher_exact(k1, n1, k0, n0, "greater"),
            "diff": stats.tango_ci(b, c, len(seeds)), "basin": basin}


@dataclass
class BasinResult(ClaimResult):
    basin: pd.DataFrame  # the rule's window
    per_run: pd.DataFrame
    curves: pd.DataFrame
    steps: int
    window: tuple[int, int, float]  # the rule's window
    basins: pd.DataFrame  # every window (column `window`)
    sensitivity: pd.DataFrame  # the verdicts under each window and success metric (the rule's row marked)


def c06_c07(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> BasinResult:
    """C6 and C7: at each γ, the seeds that reach OOD > 0.5 under each placed window (the basin of the reasoning
    solution), with exact binomial intervals; the rules read the first window (rules in the notebook)."""
    d = c06_c07_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run["final_success"] = per_run["fate"] == "reasoning"
    per_run["max_success"] = per_run["max_ood"] > SUCCESS_OOD
    names = list(d.windows)
    rule_window = names[0]
    found = {(w, m): _basin_verdicts(per_run[per_run["window"] == w], d.gammas, f"{m}_success")
             for w in names for m in ("final", "max")}
    v = found[(rule_window, "final")]
    basins = pd.concat([_basin(per_run[per_run["window"] == w], d.gammas).assign(window=w) for w in names],
                       ignore_index=True)
    basin = basins[basins["window"] == rule_window].drop(columns="window").reset_index(drop=True)
    old = found[("early" if "early" in names else rule_window, "final")]["basin"]  # the old rules read early
    v7 = rule_history.verdict_c07(old)[0]  # the old C7 rule: the γ with most reasoning seeds
    best = rule_history.verdict_c07(basin)[1]
    old_small, old_ref = (old.set_index("gamma").loc[g, "share"] for g in C6_GAMMAS)
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": v["c6"], "verdict_c7": v["c7"],
               "best_gamma": best, "protocol": d.protocol,
               "rule_window": rule_window, "window_start": d.windows[rule_window].windows[0][0],
               "window_end": d.windows[rule_window].windows[0][1], "window_lambda": d.window_lambda,
               "fisher_p": v["fisher_p"], "mcnemar_p": v["mcnemar_p"], "b": v["b"], "c": v["c"],
               "mcnemar_text": f"exact one-sided McNemar p {v['mcnemar_p']:.3f} for more reasoning seeds at γ 1.1, "
                               f"{v['mcnemar_p_reverse']:.3f} for more at γ 0.5",
               "diff": v["diff"][0], "diff_lo": v["diff"][1], "diff_hi": v["diff"][2], "gap": rules.C6_GAP,
               "power": c06_power(len(d.seeds)), "power_12": c06_power(12), "power_24": c06_power(24),
               "c7_smallest": v["c7_parts"]["beats the smallest γ"],
               "c7_largest": v["c7_parts"]["beats the largest γ"],
               "old_rule_verdict": rule_history.verdict_c06(old_small, old_ref), "old_rule_verdict_c7": v7,
               "sigma0": protocol.SIGMA0}
    for r in basin.to_dict("records"):
        t = tag(r["gamma"])
        numbers.update({f"k_{t}": int(r["reasoning"]), f"n_{t}": int(r["seeds"]), f"share_lo_{t}": r["share_lo"],
                        f"share_hi_{t}": r["share_hi"], f"ood_{t}": r["final_ood"], f"std_{t}": r["std"]})
    for w in names[1:]:
        wt = w.replace(" ", "_")
        numbers.update({f"{wt}_verdict": found[(w, "final")]["c6"], f"{wt}_verdict_c7": found[(w, "final")]["c7"],
                        f"{wt}_k_g0p5": found[(w, "final")]["k0"], f"{wt}_k_g1p1": found[(w, "final")]["k1"],
                        f"{wt}_n": found[(w, "final")]["n0"]})
    sensitivity = pd.DataFrame([
        {"window": w, "a seed reasons when": "final OOD > 0.5" if m == "final" else "max OOD over training > 0.5",
         "γ 0.5": f"{f['k0']}/{f['n0']}", "γ 1.1": f"{f['k1']}/{f['n1']}", "McNemar p": round(f["mcnemar_p"], 3),
         "C6": f["c6"], "C7": f["c7"], "rule": w == rule_window and m == "final"}
        for (w, m), f in found.items()])
    counts = ", ".join(f"γ {r['gamma']:g}: {int(r['reasoning'])}/{int(r['seeds'])}" for r in basin.to_dict("records"))
    rows = [{"claim": "C6", "statement": "the basin of the reasoning solution shrinks at small init",
             "paper": "γ 0.5: 8/12 seeds reach OOD > 0.5; γ 1.1: 12/12",
             "ours": f"{rule_window}: {counts} (γ 1.1 − γ 0.5 {v['diff'][0]:+.2f} [{v['diff'][1]:+.2f}, "
                     f"{v['diff'][2]:+.2f}], paired by seed; {numbers['mcnemar_text']})",
             "profile": P.name, "seeds": len(d.seeds), "verdict": v["c6"]},
            {"claim": "C7", "statement": "a moderate init scale is best", "paper": "γ ∈ [0.7, 1.1]",
             "ours": f"{rule_window}: γ 0.7-1.1 pooled vs γ {d.gammas[0]:g}: {v['c7_parts']['beats the smallest γ']}, "
                     f"vs γ {d.gammas[-1]:g}: {v['c7_parts']['beats the largest γ']} ({counts})",
             "profile": P.name, "seeds": len(d.seeds), "verdict": v["c7"]}]
    curves = stats.mean_ci(history[history["window"] == rule_window], ["gamma", "step"], "acc/test_ood")
    return BasinResult(rows=rows, numbers=numbers, summary=d.summary, basin=basin, per_run=per_run, curves=curves,
                       steps=P.steps, window=d.windows[rule_window].windows[0], basins=basins, sensitivity=sensitivity)


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
