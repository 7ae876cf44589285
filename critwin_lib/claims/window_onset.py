"""The window-onset claims: how sharply does the fate switch as the window's onset moves (C4), and (beyond the
paper) does that onset edge move with the end of fitting (C4b)?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import config, protocol, stats
from critwin_lib.claims import core, fates, onsets, rules
from critwin_lib.claims.core import ClaimResult, Design, fetch, onset_grid, score_row
from critwin_lib.sizes import Size, get_profile


# ------------------------------------------------------------------------------------------ C4
@dataclass
class SweepDesign(Design):
    grids: dict[str, list[int]]


def c04_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: list, window_frac: float,
               alt_protocol: str = "", alt_n_seeds: int = 0, protocol_name: str = protocol.DEFAULT_PROTOCOL
               ) -> SweepDesign:
    """C4's runs: the 25 % window at every onset of a coarse grid, and no weight decay (n_seeds); the same
    under `alt_protocol` (alt_n_seeds) for the sensitivity table."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    grid = onset_grid(P, onset_fracs)
    protocol.get_protocol(protocol_name, "protocol_name")
    specs = onsets.sweep_specs(P, seeds, gamma, protocol_name, grid, window_frac)
    grids = {protocol_name: grid}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        specs += onsets.sweep_specs(P, P.seeds(alt_n_seeds), gamma, alt_protocol, grid, window_frac)
        grids[alt_protocol] = grid
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, onsets {grid}"
               + (f"; {alt_protocol}: {len(P.seeds(alt_n_seeds))} seeds" if alt_protocol else ""))
    return SweepDesign(specs, summary, seeds, grids)


def decide_c4(runs: pd.DataFrame, grid_step: float, resolution: int) -> tuple[str, dict[str, str], onsets.ShareEdge]:
    """C4 on the window runs of a sweep (with fates): the reasoning share rises through one half as the onset
    moves later (bootstrap over seeds: in ≥ 95 % of resamples holds, ≤ 5 % rejected), and that rise is sharp
    (within 4 × the paper's resolution; a grid coarser than that cannot tell)."""
    edge = onsets.share_edge(runs)
    exists = rules.HOLDS if edge.found >= 0.95 else (rules.REJECTED if edge.found <= 0.05 else rules.UNDECIDED)
    sharp = rules.UNDECIDED  # the coarse grid cannot resolve a switch narrower than its spacing
    if grid_step <= rules.EDGE_WIDTH * resolution and exists == rules.HOLDS:
        sharp = rules.HOLDS if edge.hi - edge.lo <= rules.EDGE_WIDTH * resolution else rules.UNDECIDED
    parts = {"an edge exists": exists, "the switch is sharp": sharp}
    return rules.combine(parts), parts, edge


@dataclass
class C4Result(ClaimResult):
    table: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame
    edge: onsets.ShareEdge
    parts: dict[str, str]
    sensitivity: pd.DataFrame
    steps: int


def c04(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C4Result:
    """C4: sweep the 25 % window's onset across the run; where the reasoning share rises, and how sharply."""
    d = c04_design(**params)
    P = get_profile(params["profile"])
    main = params.get("protocol_name", protocol.DEFAULT_PROTOCOL)
    grid = d.grids[main]
    resolution = max(1, round(core.PAPER_RESOLUTION * P.steps / 20_000))
    length = protocol.window_steps(P, 0.0, params["window_frac"])[1]
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run["close_ood"] = fates.ood_at(history, per_run, [o + length if o >= 0 else P.steps
                                                           for o in per_run["onset"]])
    t_mem = per_run[per_run["onset"] < 0].set_index(["protocol", "seed"])["t_mem"]  # each seed's own, no decay
    per_run["onset_over_own_t_mem"] = [o / t_mem.get((p, s), math.nan) if o >= 0 else math.nan
                                       for p, s, o in zip(per_run["protocol"], per_run["seed"], per_run["onset"],
                                                          strict=True)]
    step = float(min(b - a for a, b in zip(grid, grid[1:], strict=False))) if len(grid) > 1 else math.inf
    main_runs = per_run[per_run["protocol"] == main]
    verdict, parts, edge = decide_c4(main_runs[main_runs["onset"] >= 0], step, resolution)
    table = fates.share_table(main_runs, ["onset"]).sort_values("onset").merge(
        main_runs.groupby("onset")[["max_ood", "close_ood", "t_mem", "onset_over_own_t_mem"]].mean().reset_index(),
        on="onset")
    sens = []
    for proto in per_run["protocol"].unique():
        for metric, col in fates.METRICS.items():
            runs = fates.with_fates(per_run[(per_run["protocol"] == proto) & (per_run["onset"] >= 0)], col)
            v, p, e = decide_c4(runs, step, resolution)
            sens.append({"protocol": proto, "metric": metric, "seeds": int(runs["seed"].nunique()), "verdict": v,
                         "edge": e.edge, "edge_lo": e.lo, "edge_hi": e.hi, "found": e.found,
                         "parts": "; ".join(f"{k}: {s}" for k, s in p.items())})
    sens = pd.DataFrame(sens)
    windows = table[table["onset"] >= 0]
    low = windows.loc[windows["share"].idxmin()]
    none = table[table["onset"] < 0].iloc[0]
    old = _old_rule(P, d.seeds[:4], params, main, grid, results_dir, train_missing, workers)
    n = len(d.seeds)
    numbers = {"profile": P.name, "seeds": n, "verdict": verdict, "protocol": main, "resolution": resolution,
               "grid_step": step, "edge": edge.edge, "edge_lo": edge.lo, "edge_hi": edge.hi, "edge_found": edge.found,
               "edge_text": edge.text(), "edge_level": edge.level,
               "exists": parts["an edge exists"], "sharp": parts["the switch is sharp"],
               "k_none": int(none["reasoning"]), "share_none": float(none["share"]),
               "lowest_onset": int(low["onset"]), "lowest_share": float(low["share"]),
               "lowest_k": int(low["reasoning"]), "t_mem_none": float(none["t_mem"]), "n_onsets": int(len(windows)),
               "headline": fates.headline(sens.assign(onset="as the claim"), verdict), **old}
    for _, r in windows.iterrows():
        numbers[f"k_{int(r['onset'])}"] = int(r["reasoning"])
    shares = ", ".join(f"{int(r['onset'])}: {int(r['reasoning'])}/{int(r['seeds'])}" for _, r in windows.iterrows())
    row = score_row("C4", "moving the window onset by 100 steps moves OOD from chance to reasoning",
                    "+100 steps: 0.15 → 0.61; +400: 0.93",
                    f"reasoning seeds by onset {shares} (none {int(none['reasoning'])}/{n}); {edge.text()}",
                    P.name, n, verdict)
    curves = stats.mean_ci(history[history["protocol"] == main], ["onset", "step"], "acc/test_ood")
    return C4Result([row], numbers, d.summary, table, per_run, curves, edge, parts, sens, P.steps)


def _old_rule(P: Size, seeds: list[int], params: dict[str, Any], proto: str, grid: list[int], results_dir: str,
              train_missing: bool, workers: int) -> dict[str, Any]:
    """The rule before fates (issue #9): the first upward crossing of θ = (N + 0.61) / 2 by the mean final OOD of
    the first 4 seeds, bisected to the paper's resolution, and the transition width. Kept for the rule history."""
    a = onsets.analyse(P, seeds, params["gamma"], proto, grid, params["window_frac"], results_dir, train_missing,
                       workers)
    e = a.edge
    return {"old_rule_verdict": rules.verdict_c04(a.bracket is not None, a.width, a.resolution),
            "old_edge": e.edge if e else math.nan, "old_edge_pm": e.uncertainty if e else math.nan,
            "old_width": a.width, "old_seeds": len(seeds)}


# ----------------------------------------------------------------------------------------- C4b
def c04b_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: dict, window_frac: float) -> SweepDesign:
    """C4b's runs: each protocol's onset sweep (its own grid of onsets) with its no-weight-decay runs."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    if not isinstance(onset_fracs, dict) or not onset_fracs:
        raise config.ConfigError(f"onset_fracs: must map protocol names to onset fractions, got {onset_fracs!r}")
    for name in onset_fracs:
        protocol.get_protocol(name, "onset_fracs")
    grids = {name: onset_grid(P, fr) for name, fr in onset_fracs.items()}
    specs = [sp for name, on in grids.items() for sp in onsets.sweep_specs(P, seeds, gamma, name, on, window_frac)]
    summary = (f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds; "
               + "; ".join(f"{name}: onsets {on}" for name, on in grids.items()))
    return SweepDesign(specs, summary, seeds, grids)


@dataclass
class C4bResult(ClaimResult):
    table: pd.DataFrame
    per_run: pd.DataFrame
    sweeps: list[onsets.OnsetSweep]
    steps: int


def c04b(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C4bResult:
    """C4b (beyond the paper): in protocols whose fitting phase ends at different steps, does the onset
    edge move with t_mem?"""
    d = c04b_design(**params)
    P = get_profile(params["profile"])
    fetch(d.specs, results_dir, train_missing, workers)  # every protocol's sweep at once (in parallel)
    sweeps = [onsets.analyse(P, d.seeds, params["gamma"], name, on, params["window_frac"], results_dir,
                             train_missing, workers) for name, on in d.grids.items()]
    verdict = rules.verdict_c04b([(a.t_mem_none, a.edge.edge if a.edge else math.nan) for a in sweeps])
    tables = [a.table().assign(protocol=a.protocol, t_mem_none=a.t_mem_none,
                               edge=a.edge.edge if a.edge else math.nan) for a in sweeps]
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    parts = []
    for a in sweeps:
        tag = a.protocol.replace("-", "_")
        e = a.edge
        numbers.update({f"{tag}_t_mem": a.t_mem_none, f"{tag}_edge": e.edge if e else math.nan,
                        f"{tag}_edge_pm": e.uncertainty if e else math.nan, f"{tag}_ood_none": a.N})
        parts.append(f"{a.protocol}: t_mem {a.t_mem_none:.0f}, "
                     + (f"edge {e.edge:.0f} ± {e.uncertainty:.0f}" if e else "no edge"))
    row = {"claim": "C4b", "statement": "(beyond the paper) the window's onset edge moves with t_mem, the end "
                                        "of fitting", "paper": "not studied", "ours": "; ".join(parts),
           "profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    per_run = pd.concat([a.per_run.assign(protocol=a.protocol, onset_over_t_mem=a.per_run["onset"] / a.t_mem_none)
                         for a in sweeps], ignore_index=True)
    return C4bResult([row], numbers, d.summary, pd.concat(tables, ignore_index=True), per_run, sweeps, P.steps)
