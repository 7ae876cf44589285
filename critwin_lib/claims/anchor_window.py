"""The anchor-window claims: does weight decay in one 25 % window match weight decay over the whole run (C1),
does its placement matter at equal budget (C2, C3), how sharply does the fate switch as the window's onset
moves (C4), and (beyond the paper) does that onset edge move with the end of fitting (C4b)?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import config, protocol, schedules, stats
from critwin_lib.claims import core, onsets, rules
from critwin_lib.claims.core import ClaimResult, Design, condition_table, fetch, onset_grid
from critwin_lib.sizes import get_profile


# ------------------------------------------------------------------------------------------- C1
@dataclass
class C1Design(Design):
    c1_start: int
    steps: int
    window_lambda: float
    budget: float
    references: dict[str, config.WDSchedule]
    windows: dict[int, config.WDSchedule]


def c01_design(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
               window_lambda: float, slider_starts: list, protocol_name: str = protocol.DEFAULT_PROTOCOL
               ) -> C1Design:
    """C1's runs: none, full-run weight decay at equal budget and at equal λ, and the 25 % window at the C1
    start and at every slider start, each over the same seeds. Every parameter is checked first."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    lam = core.window_lambda(protocol_name, window_lambda)
    c1_window = protocol.window(P, window_start_frac, window_frac, lam)
    start_fracs = sorted(set(slider_starts) | {window_start_frac})
    windows = {protocol.window_steps(P, f, window_frac)[0]: protocol.window(P, f, window_frac, lam)
               for f in start_fracs}
    budget = schedules.budget(c1_window, P.steps)
    references = {"none": config.WDSchedule.none(), "full, equal budget": protocol.full_run(budget / P.steps),
                  "full, equal λ": protocol.full_run(lam)}
    specs = []
    for seed in seeds:
        for name, wd in references.items():
            specs.append(({"condition": name, "window_start": math.nan, "seed": seed},
                          protocol.anchor_run(P, seed, wd, gamma=gamma, protocol=protocol_name)))
        for start, wd in windows.items():
            specs.append(({"condition": "window", "window_start": start, "seed": seed},
                          protocol.anchor_run(P, seed, wd, gamma=gamma, protocol=protocol_name)))
    c1_start, c1_end = c1_window.windows[0][:2]
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} runs; "
               f"C1 window [{c1_start}, {c1_end}) at λ = {lam:g}, budget Σλ = {budget:g}")
    return C1Design(specs, summary, seeds, c1_start, P.steps, lam, budget, references, windows)



@dataclass
class C1Result(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    schedules: pd.DataFrame
    c1_start: int
    steps: int


def c01(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C1Result:
    """C1: none vs full-run weight decay (equal budget, equal λ) vs one 25 % window, same γ and seeds.
    `params` are the notebook's (see `c01_design`)."""
    d = c01_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    main = per_run[per_run["window_start"].isna() | (per_run["window_start"] == d.c1_start)]
    order = ["none", "window", "full, equal budget", "full, equal λ"]
    table = (stats.mean_ci(main, ["condition"], "final_ood").set_index("condition").loc[order]
             .join(main.groupby("condition")[["max_ood", "final_trained_shift", "t_mem", "final_train"]].mean()))
    W, F, N, F_lam = (float(table.loc[c, "mean"]) for c in ("window", "full, equal budget", "none", "full, equal λ"))
    W_lo, W_hi = float(table.loc["window", "lo"]), float(table.loc["window", "hi"])
    verdict = rules.verdict_c01(W, F, N)
    Wmax, Fmax, Nmax = (float(table.loc[c, "max_ood"]) for c in ("window", "full, equal budget", "none"))
    n_seeds = len(d.seeds)
    numbers = {"verdict": verdict, "profile": P.name, "seeds": n_seeds, "gamma": float(params["gamma"]),
               "protocol": params.get("protocol_name", protocol.DEFAULT_PROTOCOL), "window_lambda": d.window_lambda,
               "full_lambda": d.budget / P.steps, "ood_window": W, "ood_window_lo": W_lo, "ood_window_hi": W_hi,
               "ood_full": F, "ood_full_lambda": F_lam, "ood_none": N, "max_window": Wmax, "max_full": Fmax,
               "max_none": Nmax}
    row = {"claim": "C1", "statement": "WD in one 25% window matches WD over the whole run",
           "paper": "OOD 0.93 (window) vs 0.91 (full)",
           "ours": f"window {W:.2f} [{W_lo:.2f}, {W_hi:.2f}] vs full {F:.2f} (equal budget), "
                   f"{F_lam:.2f} (equal λ); none {N:.2f}; max-over-training: window {Wmax:.2f}, full {Fmax:.2f}, "
                   f"none {Nmax:.2f}",
           "profile": P.name, "seeds": n_seeds, "verdict": verdict}
    curves = stats.mean_ci(history, ["condition", "window_start", "step"], "acc/test_ood")
    sched = pd.concat(
        [schedules.schedule_frame({k: v}, P.steps).assign(window_start=math.nan) for k, v in d.references.items()]
        + [schedules.schedule_frame({"window": wd}, P.steps).assign(window_start=s) for s, wd in d.windows.items()],
        ignore_index=True)
    return C1Result([row], numbers, d.summary, history, per_run, table, curves, sched, d.c1_start, P.steps)


# --------------------------------------------------------------------------------------- C2, C3
@dataclass
class PlacementDesign(Design):
    conditions: dict[str, config.WDSchedule]
    placements: list[str]
    span_name: str
    budget: float
    window_lambda: float


def c02_c03_design(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float,
                   window_lambda: float, span: list, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> PlacementDesign:
    """C2/C3's runs: the same budget Σλ in an early, a middle and a late window and over the paper's
    2,500-17,500 span scaled, against no weight decay."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    lam = core.window_lambda(protocol_name, window_lambda)
    placed = {name: protocol.window(P, f, window_frac, lam) for name, f in placements.items()}
    budget = schedules.budget(next(iter(placed.values())), P.steps)
    if not isinstance(span, list | tuple) or len(span) != 2:
        raise config.ConfigError(f"span: must be [start_frac, end_frac], got {span!r}")
    s0, s1 = protocol.window_steps(P, span[0], span[1] - span[0], ("span", "span"))
    span_name = f"span {span[0]:g}–{span[1]:g}"
    conditions = {"none": config.WDSchedule.none(), **placed,
                  span_name: config.WDSchedule(windows=((s0, s1, budget / (s1 - s0)),))}
    specs = [({"condition": name, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name))
             for name, wd in conditions.items() for s in seeds]
    summary = f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} runs, budget Σλ = {budget:g}"
    return PlacementDesign(specs, summary, seeds, conditions, list(placements), span_name, budget, lam)


@dataclass
class PlacementResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    schedules: pd.DataFrame
    order: list[str]


def c02_c03(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> PlacementResult:
    """C2 (middle beats early at equal budget) and C3 (early and late stay at chance)."""
    d = c02_c03_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    table = condition_table(per_run, ["condition"]).set_index("condition")
    names = d.placements
    E, M, L = (float(table.loc[n, "final_ood"]) for n in names[:3])
    N = float(table.loc["none", "final_ood"])
    Emax, Mmax = (float(table.loc[n, "max_ood"]) for n in names[:2])
    v2, v3 = rules.verdict_c02(M, E, N), rules.verdict_c03(E, L, N, M)
    ratio = M / E if E > 0 else math.inf
    n_seeds = len(d.seeds)
    numbers = {"profile": P.name, "seeds": n_seeds, "protocol": params.get("protocol_name", protocol.DEFAULT_PROTOCOL),
               "window_lambda": d.window_lambda, "budget": d.budget, "ood_early": E, "ood_middle": M,
               "ood_late": L, "ood_none": N, "ood_span": float(table.loc[d.span_name, "final_ood"]),
               "ratio": ratio, "max_ratio": Mmax / Emax if Emax > 0 else math.inf,
               "verdict_c2": v2, "verdict_c3": v3}
    for n in names[:3]:
        numbers[f"lo_{n}"], numbers[f"hi_{n}"] = float(table.loc[n, "ood_lo"]), float(table.loc[n, "ood_hi"])
    rows = [
        {"claim": "C2", "statement": "at equal budget, WD mid-run beats WD early",
         "paper": "middle 5-9x early", "ours": f"middle {M:.2f} vs early {E:.2f} ({ratio:.1f}x); "
                                               f"max-over-training {Mmax:.2f} vs {Emax:.2f}",
         "profile": P.name, "seeds": n_seeds, "verdict": v2},
        {"claim": "C3", "statement": "the same budget early or late leaves OOD at chance, as no WD",
         "paper": "early, late ≈ 0.15 ≈ none", "ours": f"early {E:.2f}, late {L:.2f}, none {N:.2f}",
         "profile": P.name, "seeds": n_seeds, "verdict": v3},
    ]
    curves = stats.mean_ci(history, ["condition", "step"], "acc/test_ood")
    sched = schedules.schedule_frame(d.conditions, P.steps)
    return PlacementResult(rows, numbers, d.summary, history, per_run, table.reset_index(), curves, sched,
                           list(d.conditions))


# ------------------------------------------------------------------------------------------ C4
@dataclass
class SweepDesign(Design):
    grids: dict[str, list[int]]


def c04_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: list, window_frac: float,
               protocol_name: str = protocol.DEFAULT_PROTOCOL) -> SweepDesign:
    """C4's runs: the 25 % window at every onset of a coarse grid, and no weight decay."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    grid = onset_grid(P, onset_fracs)
    protocol.get_protocol(protocol_name, "protocol_name")
    specs = onsets.sweep_specs(P, seeds, gamma, protocol_name, grid, window_frac)
    summary = f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, onsets {grid}"
    return SweepDesign(specs, summary, seeds, {protocol_name: grid})


@dataclass
class C4Result(ClaimResult):
    table: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame
    sweep: onsets.OnsetSweep
    steps: int


def c04(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C4Result:
    """C4: sweep the 25 % window's onset across the run; find the onset edge and how sharp it is."""
    d = c04_design(**params)
    P = get_profile(params["profile"])
    (proto, grid), = d.grids.items()
    a = onsets.analyse(P, d.seeds, params["gamma"], proto, grid, params["window_frac"], results_dir,
                       train_missing, workers)
    verdict = rules.verdict_c04(a.bracket is not None, a.width, a.resolution)
    table = a.table()
    swept = table[table["onset"] >= 0]
    e = a.edge
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "protocol": proto,
               "window_lambda": a.lam, "ood_none": a.N, "theta": a.theta,
               "resolution": a.resolution, "t_mem_none": a.t_mem_none,
               "min_onset_ood": float(swept["final_ood"].min()), "max_onset_ood": float(swept["final_ood"].max()),
               "edge": e.edge if e else math.nan, "edge_pm": e.uncertainty if e else math.nan,
               "width": a.width, "n_onsets": int(len(swept)),
               "min_onset_max_ood": float(swept["max_ood"].min()), "max_onset_max_ood": float(swept["max_ood"].max())}
    if e:
        ours = f"edge at onset {e.edge:.0f} ± {e.uncertainty:.0f} steps; chance → ≥ 0.61 in {a.width:.0f} steps"
    else:
        ours = (f"no edge: mean final OOD {numbers['min_onset_ood']:.2f}-{numbers['max_onset_ood']:.2f} at every "
                f"onset (max-over-training {numbers['min_onset_max_ood']:.2f}-{numbers['max_onset_max_ood']:.2f}); "
                f"none {a.N:.2f}")
    row = {"claim": "C4", "statement": "moving the window onset by 100 steps moves OOD from chance to reasoning",
           "paper": "+100 steps: 0.15 → 0.61; +400: 0.93", "ours": ours, "profile": P.name,
           "seeds": len(d.seeds), "verdict": verdict}
    curves = stats.mean_ci(a.history, ["onset", "step"], "acc/test_ood")
    return C4Result([row], numbers, d.summary, table, a.per_run, curves, a, P.steps)


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
