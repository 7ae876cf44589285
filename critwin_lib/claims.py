"""Each claim as one function: its runs, its numbers and its verdict by the rule its notebook states.

The notebook of a claim calls its function and draws what it returns; `python -m critwin_lib.claims`
calls the same functions with each notebook's default parameters on the stored results and writes
`results/claims.csv`, so the scoreboard and the book cannot disagree.
"""

from __future__ import annotations

import ast
import contextlib
import csv
import io
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import config, edges, experiment, protocol, robustness, schedules, specificity, stats, theory
from critwin_lib.plotting import schedule_frame

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "inconclusive")  # "inconclusive": a premise failed
CLAIMS_CSV_COLUMNS = ["claim", "statement", "paper", "ours", "profile", "seeds", "verdict"]


@dataclass
class ClaimResult:
    """What a claim's runs show: the rows of its scoreboard entry and what its page draws."""

    rows: list[dict[str, Any]]  # one or more scoreboard rows (claim, statement, paper, ours, ...)
    numbers: dict[str, Any]  # glued into the book
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _verdict_c01(W: float, F: float, N: float) -> str:
    if W >= F - 0.10 and W >= N + 0.25:
        return "reproduced"
    if W >= N + 0.25:
        return "partly reproduced"
    return "not reproduced"


def _window_lambda(proto: str, window_lambda: float) -> float:
    """A claim's in-window λ: the protocol's when the notebook leaves `window_lambda` at 0."""
    pr = protocol.get_protocol(proto, "protocol_name")
    if not isinstance(window_lambda, int | float) or not math.isfinite(window_lambda) or window_lambda < 0:
        raise config.ConfigError(f"window_lambda: must be >= 0 (0: the protocol's), got {window_lambda!r}")
    return float(window_lambda) or pr.window_lambda


def c01(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
        window_lambda: float, slider_starts: list, results_dir: str, train_missing: bool = True,
        workers: int = -1, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C1: none vs full-run weight decay (equal budget, equal λ) vs one 25 % window, same γ and seeds.
    Parameters are the notebook's (its parameters cell holds the defaults). Every one is checked (a bad
    one raises ConfigError naming it) before anything is trained."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    window_lambda = _window_lambda(protocol_name, window_lambda)
    c1_window = protocol.window(P, window_start_frac, window_frac, window_lambda)
    start_fracs = sorted(set(slider_starts) | {window_start_frac})
    windows = {protocol.window_steps(P, f, window_frac)[0]: protocol.window(P, f, window_frac, window_lambda)
               for f in start_fracs}
    budget = schedules.budget(c1_window, P.steps)
    references = {
        "none": config.WDSchedule.none(),
        "full, equal budget": protocol.full_run(budget / P.steps),
        "full, equal λ": protocol.full_run(window_lambda),
    }
    specs = []
    for seed in seeds:
        for name, wd in references.items():
            specs.append(({"condition": name, "window_start": math.nan, "seed": seed},
                          protocol.anchor_run(P, seed, wd, gamma=gamma, protocol=protocol_name)))
        for start, wd in windows.items():
            specs.append(({"condition": "window", "window_start": start, "seed": seed},
                          protocol.anchor_run(P, seed, wd, gamma=gamma, protocol=protocol_name)))
    c1_start = c1_window.windows[0][0]
    print(f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} runs; "
          f"C1 window [{c1_start}, {c1_window.windows[0][1]}) at λ = {window_lambda:g}, budget Σλ = {budget:g}")
    history, per_run = _run_grid(specs, results_dir, train_missing, workers)

    main = per_run[per_run["window_start"].isna() | (per_run["window_start"] == c1_start)]
    order = ["none", "window", "full, equal budget", "full, equal λ"]
    table = (stats.mean_ci(main, ["condition"], "final_ood").set_index("condition").loc[order]
             .join(main.groupby("condition")[["max_ood", "final_trained_shift", "t_mem", "final_train"]].mean()))
    W, F, N, F_lam = (float(table.loc[c, "mean"]) for c in ("window", "full, equal budget", "none", "full, equal λ"))
    W_lo, W_hi = float(table.loc["window", "lo"]), float(table.loc["window", "hi"])
    verdict = _verdict_c01(W, F, N)
    Wmax, Fmax, Nmax = (float(table.loc[c, "max_ood"]) for c in ("window", "full, equal budget", "none"))
    numbers = {"verdict": verdict, "profile": P.name, "seeds": len(seeds), "gamma": float(gamma),
               "protocol": protocol_name, "window_lambda": window_lambda, "full_lambda": budget / P.steps,
               "ood_window": W, "ood_window_lo": W_lo, "ood_window_hi": W_hi, "ood_full": F,
               "ood_full_lambda": F_lam, "ood_none": N, "max_window": Wmax, "max_full": Fmax, "max_none": Nmax}
    row = {"claim": "C1", "statement": "WD in one 25% window matches WD over the whole run",
           "paper": "OOD 0.93 (window) vs 0.91 (full)",
           "ours": f"window {W:.2f} [{W_lo:.2f}, {W_hi:.2f}] vs full {F:.2f} (equal budget), "
                   f"{F_lam:.2f} (equal λ); none {N:.2f}; max-over-training: window {Wmax:.2f}, full {Fmax:.2f}, "
                   f"none {Nmax:.2f}",
           "profile": P.name, "seeds": len(seeds), "verdict": verdict}
    curves = stats.mean_ci(history, ["condition", "window_start", "step"], "acc/test_ood")
    sched = pd.concat(
        [schedule_frame({k: v}, P.steps).assign(window_start=math.nan) for k, v in references.items()]
        + [schedule_frame({"window": wd}, P.steps).assign(window_start=s) for s, wd in windows.items()],
        ignore_index=True)
    return ClaimResult([row], numbers, {"history": history, "per_run": per_run, "table": table, "curves": curves,
                                        "schedules": sched}, {"c1_start": c1_start, "steps": P.steps})


# ------------------------------------------------------------------------- shared by C2-C4b, C13
SUCCESS_OOD = 0.5  # spec §5: a seed "reaches the reasoning solution" when its final OOD accuracy > 0.5
MEMORIZED_OOD = 0.25  # ... and "memorizes" when it fits the training set and stays below this on OOD
CHANCE_BAND = 0.10  # a mean within this of the no-weight-decay mean is "at chance"
PAPER_RESOLUTION = 100  # steps, at the paper's 20,000-step runs (C4)


def fate(row: pd.Series | dict) -> str:
    """One run's outcome: reasoning (final OOD > 0.5), memorizing (train fitted, OOD < 0.25),
    collapsed (training accuracy < 0.5 at the end) or other."""
    if row["final_train"] < 0.5:
        return "collapsed"
    if row["final_ood"] > SUCCESS_OOD:
        return "reasoning"
    if row["final_ood"] < MEMORIZED_OOD and row["final_train"] >= 0.99:
        return "memorizing"
    return "other"


class _Planned(Exception):
    """Raised by the first `_run_grid` of a claim function while planning: carries its runs."""

    def __init__(self, runs: list[config.RunConfig]) -> None:
        super().__init__(f"{len(runs)} runs")
        self.runs = runs


_planning = False


def _run_grid(specs: list[tuple[dict[str, Any], config.RunConfig]], results_dir: str, train_missing: bool,
              workers: int, fate_of: Any = fate) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Make sure every run exists (training what is missing); return (histories, one row per run, with
    each run's `fate_of` unless that is None). A claim function's first call covers all its runs except
    those an edge finder adds later."""
    labels, runs = [lab for lab, _ in specs], [cfg for _, cfg in specs]
    if _planning:
        raise _Planned(runs)
    sw = experiment.sweep(runs, results_dir, workers=workers, train_missing=train_missing)
    per_run = experiment.summaries(sw.results, labels)
    if fate_of is not None:
        per_run["fate"] = [fate_of(r) for _, r in per_run.iterrows()]
    return experiment.frame(sw.results, labels), per_run


def condition_table(per_run: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per condition: final OOD (mean, bootstrap interval), mean max OOD, seeds reasoning / memorizing /
    collapsed, and mean t_mem."""
    t = stats.mean_ci(per_run, by, "final_ood").rename(columns={"mean": "final_ood", "lo": "ood_lo",
                                                                 "hi": "ood_hi", "n": "seeds"})
    g = per_run.groupby(by, sort=False, dropna=False)
    extra = pd.DataFrame({
        "max_ood": g["max_ood"].mean(),
        "reasoning": g["fate"].apply(lambda f: int((f == "reasoning").sum())),
        "memorizing": g["fate"].apply(lambda f: int((f == "memorizing").sum())),
        "collapsed": g["fate"].apply(lambda f: int((f == "collapsed").sum())),
        "trained_shift": g["final_trained_shift"].mean(),
        "t_mem": g["t_mem"].mean(),
    }).reset_index()
    return t.merge(extra, on=by, how="left")


# --------------------------------------------------------------------------- calibration page
def c00(*, profile: str, n_seeds: int, gamma: float, grid: dict, init_check: list, results_dir: str,
        train_missing: bool = True, workers: int = -1) -> ClaimResult:
    """Calibration: for each protocol, no weight decay and constant λ over the whole run at each λ of `grid`
    ({protocol: [λ, ...]}); which settings give both fates (rule in the notebook); and, without weight
    decay, the init scales of `init_check` (γ on σ₀). No scoreboard row."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    specs = [({"protocol": name, "lambda": float(lam), "seed": s},
              protocol.anchor_run(P, s, protocol.full_run(lam), gamma=gamma, protocol=name))
             for name, lams in grid.items() for lam in lams for s in seeds]
    checks = [({"gamma": float(g), "seed": s}, protocol.anchor_run(P, s, config.WDSchedule.none(), gamma=g))
              for g in init_check for s in seeds]
    print(f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(specs) + len(checks)} runs")
    history, per_run = _run_grid(specs + checks, results_dir, train_missing, workers)
    is_check = per_run["protocol"].isna() if "gamma" in per_run else pd.Series(False, index=per_run.index)
    init_runs, per_run = per_run[is_check], per_run[~is_check]
    history = history[history["protocol"].notna()] if "gamma" in history else history
    init_table = condition_table(init_runs, ["gamma"]) if len(init_runs) else pd.DataFrame()
    if len(init_table):
        init_table.insert(1, "init std", init_table["gamma"] * protocol.SIGMA0)
    table = condition_table(per_run, ["protocol", "lambda"])
    table["t_mem_frac"] = table["t_mem"] / P.steps
    numbers = {"profile": P.name, "seeds": len(seeds), "steps": P.steps, "sigma0": protocol.SIGMA0,
               "gamma": float(gamma)}
    verdicts = {}
    for name in grid:
        t = table[table["protocol"] == name].set_index("lambda")
        none_ok = 0.0 in t.index and t.loc[0.0, "memorizing"] >= t.loc[0.0, "seeds"] / 2
        best = t.drop(index=0.0, errors="ignore").sort_values(["reasoning", "final_ood"], ascending=False)
        full_ok = len(best) > 0 and best["reasoning"].iloc[0] > best["seeds"].iloc[0] / 2
        verdicts[name] = {"none_memorizes": bool(none_ok), "full_reasons": bool(full_ok),
                          "best_lambda": float(best.index[0]) if len(best) else math.nan,
                          "both_fates": bool(none_ok and full_ok),
                          "t_mem_none": float(t.loc[0.0, "t_mem"]) if 0.0 in t.index else math.nan}
        tag = name.replace("-", "_")
        numbers.update({f"{tag}_{k}": verdicts[name][k] for k in ("both_fates", "best_lambda", "t_mem_none")})
        numbers[f"{tag}_t_mem_frac"] = verdicts[name]["t_mem_none"] / P.steps
        for lam in t.index:
            numbers[f"{tag}_ood_{lam:g}"] = float(t.loc[lam, "final_ood"])
            numbers[f"{tag}_reasoning_{lam:g}"] = int(t.loc[lam, "reasoning"])
    curves = []
    for name, v in verdicts.items():
        keep = (history["protocol"] == name) & history["lambda"].isin([0.0, v["best_lambda"]])
        for metric in ("acc/train", "acc/test_id", "acc/test_ood"):
            c = stats.mean_ci(history[keep], ["protocol", "lambda", "step"], metric)
            curves.append(c.assign(metric=metric.split("/")[1]))
    curves = pd.concat(curves, ignore_index=True)
    curves["condition"] = [("none" if lam == 0 else f"full λ = {lam:g}") for lam in curves["lambda"]]
    for _, r in init_table.iterrows():
        numbers[f"init_ood_{r['gamma']:g}"] = float(r["final_ood"])
        numbers[f"init_memorizing_{r['gamma']:g}"] = int(r["memorizing"])
    return ClaimResult([], numbers, {"history": history, "per_run": per_run, "table": table, "curves": curves,
                                     "init": init_table}, {"verdicts": verdicts})


# --------------------------------------------------------------------------------------- C2, C3
def _verdict_c02(M: float, E: float, N: float) -> str:
    if M >= N + 0.25 and M >= 5 * E:
        return "reproduced"
    if M >= E + 0.15:
        return "partly reproduced"
    return "not reproduced"


def _verdict_c03(E: float, L: float, N: float, M: float) -> str:
    at_chance = [abs(v - N) <= CHANCE_BAND for v in (E, L)]
    if M < N + 0.25:  # no placement works: "early and late fail" would say nothing
        return "not reproduced"
    return "reproduced" if all(at_chance) else ("partly reproduced" if any(at_chance) else "not reproduced")


def c02(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float, window_lambda: float,
        span: list, results_dir: str, train_missing: bool = True, workers: int = -1,
        protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C2/C3: the same budget Σλ in an early, a middle and a late window (and over the paper's
    2,500-17,500 span scaled), against no weight decay."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    window_lambda = _window_lambda(protocol_name, window_lambda)
    placed = {name: protocol.window(P, f, window_frac, window_lambda) for name, f in placements.items()}
    budget = schedules.budget(next(iter(placed.values())), P.steps)
    if len(span) != 2:
        raise config.ConfigError(f"span: must be [start_frac, end_frac], got {span!r}")
    s0, s1 = protocol.window_steps(P, span[0], span[1] - span[0], ("span", "span"))
    span_name = f"span {span[0]:g}–{span[1]:g}"
    conditions = {"none": config.WDSchedule.none(), **placed,
                  span_name: config.WDSchedule(windows=((s0, s1, budget / (s1 - s0)),))}
    specs = [({"condition": name, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name))
             for name, wd in conditions.items() for s in seeds]
    print(f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} runs, budget Σλ = {budget:g}")
    history, per_run = _run_grid(specs, results_dir, train_missing, workers)
    table = condition_table(per_run, ["condition"]).set_index("condition")
    names = list(placements)
    E, M, L = (float(table.loc[n, "final_ood"]) for n in names[:3])
    N = float(table.loc["none", "final_ood"])
    Emax, Mmax = (float(table.loc[n, "max_ood"]) for n in names[:2])
    v2, v3 = _verdict_c02(M, E, N), _verdict_c03(E, L, N, M)
    ratio = M / E if E > 0 else math.inf
    numbers = {"profile": P.name, "seeds": len(seeds), "protocol": protocol_name, "window_lambda": window_lambda,
               "budget": budget, "ood_early": E, "ood_middle": M,
               "ood_late": L, "ood_none": N, "ood_span": float(table.loc[span_name, "final_ood"]),
               "ratio": ratio, "max_ratio": Mmax / Emax if Emax > 0 else math.inf,
               "verdict_c2": v2, "verdict_c3": v3}
    for n in names[:3]:
        numbers[f"lo_{n}"], numbers[f"hi_{n}"] = float(table.loc[n, "ood_lo"]), float(table.loc[n, "ood_hi"])
    rows = [
        {"claim": "C2", "statement": "at equal budget, WD mid-run beats WD early",
         "paper": "middle 5-9x early", "ours": f"middle {M:.2f} vs early {E:.2f} ({ratio:.1f}x); "
                                               f"max-over-training {Mmax:.2f} vs {Emax:.2f}",
         "profile": P.name, "seeds": len(seeds), "verdict": v2},
        {"claim": "C3", "statement": "the same budget early or late leaves OOD at chance, as no WD",
         "paper": "early, late ≈ 0.15 ≈ none", "ours": f"early {E:.2f}, late {L:.2f}, none {N:.2f}",
         "profile": P.name, "seeds": len(seeds), "verdict": v3},
    ]
    curves = stats.mean_ci(history, ["condition", "step"], "acc/test_ood")
    sched = schedule_frame(conditions, P.steps)
    return ClaimResult(rows, numbers, {"history": history, "per_run": per_run, "table": table.reset_index(),
                                       "curves": curves, "schedules": sched}, {"order": list(conditions)})


# ------------------------------------------------------------------------------------------ C4
def onset_grid(P: config.Profile, fracs: list) -> list[int]:
    return sorted({P.step_at(f, "onset_fracs") for f in fracs})


def onset_specs(P: config.Profile, seeds: list[int], gamma: float, proto: str, onsets: list[int],
                window_frac: float) -> list[tuple[dict[str, Any], config.RunConfig]]:
    """No weight decay (onset -1), then one 25 % window at the protocol's λ at each onset, every seed."""
    pr = protocol.get_protocol(proto)
    length = protocol.window_steps(P, 0.0, window_frac)[1]
    for o in onsets:
        if o + length > P.steps:
            raise config.ConfigError(f"onsets: a window at {o} ends after the run ({P.steps} steps)")
    wds = [(-1, config.WDSchedule.none())] + [(o, config.WDSchedule.window(o, length, pr.window_lambda))
                                              for o in onsets]
    return [({"protocol": proto, "onset": o, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=proto))
            for o, wd in wds for s in seeds]


def onset_analysis(P: config.Profile, seeds: list[int], gamma: float, proto: str, onsets: list[int],
                   window_frac: float, results_dir: str, train_missing: bool, workers: int,
                   refine: bool = True) -> dict[str, Any]:
    """An onset sweep of one protocol's 25 % window at equal λ, its no-weight-decay baseline, and the
    onset edge: the first upward crossing of θ = (N + 0.61) / 2 between neighbouring onsets of the sweep,
    narrowed by bisection to the paper's resolution scaled to the run (100 steps at 20k)."""
    resolution = max(1, round(PAPER_RESOLUTION * P.steps / 20_000))

    def specs_for(on: list[int]) -> list:
        return onset_specs(P, seeds, gamma, proto, on, window_frac)[len(seeds):]

    history, per_run = _run_grid(onset_specs(P, seeds, gamma, proto, onsets, window_frac), results_dir,
                                 train_missing, workers)
    none = per_run[per_run["onset"] == -1]
    N, t_mem_none = float(none["final_ood"].mean()), float(none["t_mem"].mean())
    theta = (N + 0.61) / 2
    coarse = per_run[per_run["onset"] >= 0].groupby("onset")["final_ood"].mean()
    bracket = next(((a, b) for a, b in zip(coarse.index, coarse.index[1:], strict=False)
                    if coarse[a] < theta <= coarse[b]), None)
    falling = next(((a, b) for a, b in zip(coarse.index, coarse.index[1:], strict=False)
                    if coarse[a] >= theta > coarse[b]), None)  # a closing edge: reported, not bisected
    extra_hist, extra_runs = [], []

    def evaluate(on) -> dict[int, float]:
        means = {o: float(coarse[o]) for o in on if o in coarse.index}
        todo = [o for o in on if o not in coarse.index]
        if todo:
            h, r = _run_grid(specs_for(todo), results_dir, train_missing, workers)
            extra_hist.append(h)
            extra_runs.append(r)
            means.update(r.groupby("onset")["final_ood"].mean().to_dict())
        return means

    found = None
    if bracket is not None and refine:
        lo, hi = (edges._on_grid(x, resolution) for x in bracket)
        found = edges.find_edge(evaluate, lo, hi, theta, resolution)
    if extra_runs:
        per_run = pd.concat([per_run, *extra_runs], ignore_index=True)
        history = pd.concat([history, *extra_hist], ignore_index=True)
    swept = per_run[per_run["onset"] >= 0]
    means = swept.groupby("onset")["final_ood"].mean()
    width = edges.transition_width(means.index.tolist(), means.tolist(), N + CHANCE_BAND, 0.61)
    return {"protocol": proto, "N": N, "t_mem_none": t_mem_none, "theta": theta, "resolution": resolution,
            "bracket": bracket, "falling": falling, "edge": found, "width": width, "per_run": per_run,
            "history": history, "lambda": protocol.get_protocol(proto).window_lambda}


def _verdict_c04(a: dict[str, Any]) -> str:
    if a["bracket"] is None or math.isnan(a["width"]):
        return "not reproduced"
    return "reproduced" if a["width"] <= 4 * a["resolution"] else "partly reproduced"


def _onset_table(a: dict[str, Any]) -> pd.DataFrame:
    t = condition_table(a["per_run"], ["onset"]).sort_values("onset")
    t["onset_over_t_mem"] = t["onset"] / a["t_mem_none"]
    t.loc[t["onset"] < 0, "onset_over_t_mem"] = math.nan
    return t


def c03(*, profile: str, n_seeds: int, gamma: float, onset_fracs: list, window_frac: float, results_dir: str,
        train_missing: bool = True, workers: int = -1, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C4: sweep the 25 % window's onset across the run; find the onset edge and how sharp it is."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    onsets = onset_grid(P, onset_fracs)
    protocol.get_protocol(protocol_name, "protocol_name")
    print(f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, onsets {onsets}")
    a = onset_analysis(P, seeds, gamma, protocol_name, onsets, window_frac, results_dir, train_missing, workers)
    verdict = _verdict_c04(a)
    table = _onset_table(a)
    swept = table[table["onset"] >= 0]
    e = a["edge"]
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict, "protocol": protocol_name,
               "window_lambda": a["lambda"], "ood_none": a["N"], "theta": a["theta"],
               "resolution": a["resolution"], "t_mem_none": a["t_mem_none"],
               "min_onset_ood": float(swept["final_ood"].min()), "max_onset_ood": float(swept["final_ood"].max()),
               "edge": e.edge if e else math.nan, "edge_pm": e.uncertainty if e else math.nan,
               "width": a["width"], "n_onsets": int(len(swept)),
               "min_onset_max_ood": float(swept["max_ood"].min()), "max_onset_max_ood": float(swept["max_ood"].max())}
    if e:
        ours = f"edge at onset {e.edge:.0f} ± {e.uncertainty:.0f} steps; chance → ≥ 0.61 in {a['width']:.0f} steps"
    else:
        ours = (f"no edge: mean final OOD {numbers['min_onset_ood']:.2f}-{numbers['max_onset_ood']:.2f} at every "
                f"onset (max-over-training {numbers['min_onset_max_ood']:.2f}-{numbers['max_onset_max_ood']:.2f}); "
                f"none {a['N']:.2f}")
    row = {"claim": "C4", "statement": "moving the window onset by 100 steps moves OOD from chance to reasoning",
           "paper": "+100 steps: 0.15 → 0.61; +400: 0.93", "ours": ours, "profile": P.name,
           "seeds": len(seeds), "verdict": verdict}
    curves = stats.mean_ci(a["history"], ["onset", "step"], "acc/test_ood")
    return ClaimResult([row], numbers, {"table": table, "per_run": a["per_run"], "curves": curves},
                       {"analysis": a, "steps": P.steps})


# ----------------------------------------------------------------------------------------- C4b
def _verdict_c04b(analyses: list[dict[str, Any]]) -> str:
    found = [a for a in analyses if a["edge"] is not None]
    if len(found) >= 2:
        (a, b) = sorted(found, key=lambda a: a["t_mem_none"])[:2]
        d_edge, d_mem = b["edge"].edge - a["edge"].edge, b["t_mem_none"] - a["t_mem_none"]
        return "reproduced" if d_mem > 0 and d_edge >= 0.5 * d_mem else "partly reproduced"
    if len(found) == 1:
        a = found[0]
        return "partly reproduced" if abs(a["edge"].edge - a["t_mem_none"]) <= a["t_mem_none"] / 2 else \
            "not reproduced"
    return "not reproduced"


def c04(*, profile: str, n_seeds: int, gamma: float, onset_fracs: dict, window_frac: float, results_dir: str,
        train_missing: bool = True, workers: int = -1) -> ClaimResult:
    """C4b (beyond the paper): in protocols whose fitting phase ends at different steps, does the onset
    edge move with t_mem?"""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    if not isinstance(onset_fracs, dict) or not onset_fracs:
        raise config.ConfigError(f"onset_fracs: must map protocol names to onset fractions, got {onset_fracs!r}")
    for name in onset_fracs:
        protocol.get_protocol(name, "onset_fracs")
    grids = {name: onset_grid(P, fr) for name, fr in onset_fracs.items()}
    _run_grid([sp for name, on in grids.items() for sp in onset_specs(P, seeds, gamma, name, on, window_frac)],
              results_dir, train_missing, workers)  # every protocol's sweep at once (in parallel)
    analyses = [onset_analysis(P, seeds, gamma, name, on, window_frac, results_dir, train_missing, workers)
                for name, on in grids.items()]
    verdict = _verdict_c04b(analyses)
    tables = []
    for a in analyses:
        t = _onset_table(a)
        tables.append(t.assign(protocol=a["protocol"], t_mem_none=a["t_mem_none"],
                               edge=a["edge"].edge if a["edge"] else math.nan))
    table = pd.concat(tables, ignore_index=True)
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict}
    parts = []
    for a in analyses:
        tag = a["protocol"].replace("-", "_")
        e = a["edge"]
        numbers.update({f"{tag}_t_mem": a["t_mem_none"], f"{tag}_edge": e.edge if e else math.nan,
                        f"{tag}_edge_pm": e.uncertainty if e else math.nan, f"{tag}_ood_none": a["N"]})
        parts.append(f"{a['protocol']}: t_mem {a['t_mem_none']:.0f}, "
                     + (f"edge {e.edge:.0f} ± {e.uncertainty:.0f}" if e else "no edge"))
    row = {"claim": "C4b", "statement": "(beyond the paper) the window's onset edge moves with t_mem, the end "
                                        "of fitting", "paper": "not studied", "ours": "; ".join(parts),
           "profile": P.name, "seeds": len(seeds), "verdict": verdict}
    return ClaimResult([row], numbers, {"table": table}, {"analyses": analyses, "steps": P.steps})


# ----------------------------------------------------------------------------------------- C13
C13_METRICS = {
    "acc/test_ood": "OOD accuracy",
    "ci/wq1": "condensation index of W_Q (layer 1)",
    "srank/embed": "stable rank of the key embeddings",
    "srank/wq1": "stable rank of W_Q (layer 1)",
    "order/embed": "embedding order |ρ(PC1, value)|",
    "align/embed_resid": "alignment: key embeddings vs OOD residual stream",
    "align/anchor_ov": "alignment: anchor differences vs layer-1 OV",
}
C13_DIRECTION = {"ci/wq1": 1, "srank/embed": -1, "order/embed": 1, "align/embed_resid": 1}  # reasoning vs memorizing


def _agreeing_c13(diffs: dict[str, tuple[float, float, float]]) -> list[str]:
    """The metrics whose interval of the difference excludes 0 in the predicted direction."""
    return [k for k, s in C13_DIRECTION.items() if s * diffs[k][1] > 0 and s * diffs[k][2] > 0]


def _verdict_c13(n_agree: int) -> str:
    return "reproduced" if n_agree >= 3 else ("partly reproduced" if n_agree >= 1 else "not reproduced")


def c13(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
        results_dir: str, train_missing: bool = True, workers: int = -1,
        protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C13: the structural measurements over training, for the C1 window (reasoning) and no weight
    decay (memorizing), same seeds."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    conds = {"none": config.WDSchedule.none(),
             "window": protocol.window(P, window_start_frac, window_frac, pr.window_lambda)}
    specs = [({"condition": c, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name,
                                                               instrument=True))
             for c, wd in conds.items() for s in seeds]
    history, per_run = _run_grid(specs, results_dir, train_missing, workers)
    last = history[history["step"] == P.steps]
    diffs, rows = {}, []
    for k in C13_METRICS:
        w = last[last["condition"] == "window"].set_index("seed")[k]
        n = last[last["condition"] == "none"].set_index("seed")[k]
        d = (w - n.reindex(w.index)).to_numpy()
        lo, hi = stats.bootstrap_ci(d)
        diffs[k] = (float(np.mean(d)), lo, hi)
        rows.append({"metric": C13_METRICS[k], "key": k, "window": float(w.mean()), "none": float(n.mean()),
                     "difference": float(np.mean(d)), "lo": lo, "hi": hi,
                     "predicted sign": {1: "+", -1: "−"}.get(C13_DIRECTION.get(k, 0), "")})
    agree = [C13_METRICS[k] for k in _agreeing_c13(diffs)]
    verdict = _verdict_c13(len(agree))
    ood = {r["key"]: r for r in rows}["acc/test_ood"]
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict, "n_agree": len(agree),
               "protocol": protocol_name, "window_lambda": pr.window_lambda,
               "ood_window": ood["window"], "ood_none": ood["none"]}
    for k, (m, lo, hi) in diffs.items():
        tag = k.replace("/", "_")
        numbers.update({f"d_{tag}": m, f"d_{tag}_lo": lo, f"d_{tag}_hi": hi})
    row = {"claim": "C13", "statement": "reasoning and memorizing runs differ in condensation, stable rank, "
                                        "embedding order and subspace alignment",
           "paper": "metrics named, values not given", "ours": f"{len(agree)} of 4 in the predicted direction "
                                                              f"(95% CI excludes 0): " + (", ".join(agree) or "none"),
           "profile": P.name, "seeds": len(seeds), "verdict": verdict}
    long = history.melt(id_vars=["condition", "seed", "step"], value_vars=list(C13_METRICS),
                        var_name="key", value_name="value")
    curves = stats.mean_ci(long, ["condition", "key", "step"], "value")
    curves["metric"] = curves["key"].map(C13_METRICS)
    return ClaimResult([row], numbers, {"history": history, "per_run": per_run, "table": pd.DataFrame(rows),
                                        "curves": curves})


# ---------------------------------------------------------------------------------- C5, C6, C7 (γ)
def gamma_list(gammas: Any, field: str = "gammas") -> list[float]:
    """Distinct positive init scales, sorted; anything else is a ConfigError naming `field`."""
    config.positive_numbers(gammas, field, "positive init scales γ")
    if len(set(gammas)) != len(gammas):
        raise config.ConfigError(f"{field}: γ values must be distinct, got {gammas!r}")
    return sorted(float(g) for g in gammas)


def gamma_conventions(gammas: list[float]) -> pd.DataFrame:
    """Each γ's weight std (γ·σ₀) and the same std in the precursor papers' exponent convention
    (std = d_model^-γ_exp), so their phase diagrams can be compared."""
    rows = []
    for g in gammas:
        m = config.ModelConfig(init_gamma=g, init_sigma0=protocol.SIGMA0)
        rows.append({"gamma": g, "std": m.init_std, "gamma_exponent": m.gamma_exponent})
    return pd.DataFrame(rows)


def _tag(g: float) -> str:
    return f"g{g:g}".replace(".", "p")


def _c05_specs(P: config.Profile, seeds: list[int], gammas: list[float], proto: str, onsets: list[int],
               window_frac: float) -> list[tuple[dict[str, Any], config.RunConfig]]:
    return [({**lab, "gamma": g}, cfg) for g in gammas for lab, cfg in onset_specs(P, seeds, g, proto, onsets,
                                                                                      window_frac)]


def _verdict_c05(found: pd.DataFrame) -> str:
    if len(found) < 2:
        return "not reproduced"
    rho = found["gamma"].corr(found["edge"], method="spearman")
    first, last = found.iloc[0], found.iloc[-1]
    apart = last["edge"] + last["edge_pm"] < first["edge"] - first["edge_pm"]
    if rho <= -0.8 and apart:
        return "reproduced"
    return "partly reproduced" if rho < 0 else "not reproduced"


def c05(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float, results_dir: str,
        train_missing: bool = True, workers: int = -1, protocol_name: str = protocol.DEFAULT_PROTOCOL,
        refine_edges: bool = False) -> ClaimResult:
    """C5: the onset sweep of C4 at every γ, and where its onset edge sits as γ moves. Without
    `refine_edges` the edge is the coarse bracket's middle, ± half its width."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    gammas = gamma_list(gammas)
    protocol.get_protocol(protocol_name, "protocol_name")
    onsets = onset_grid(P, onset_fracs)
    if not isinstance(refine_edges, bool):
        raise config.ConfigError(f"refine_edges: must be true or false, got {refine_edges!r}")
    print(f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
          f"onsets {onsets}")
    _run_grid(_c05_specs(P, seeds, gammas, protocol_name, onsets, window_frac), results_dir, train_missing, workers)
    rows, runs, hists = [], [], []
    for g in gammas:
        a = onset_analysis(P, seeds, g, protocol_name, onsets, window_frac, results_dir, train_missing, workers,
                           refine=refine_edges)
        e = a["edge"]
        coarse = e or (edges.Edge(*a["bracket"], a["theta"]) if a["bracket"] is not None else None)
        edge, pm = (coarse.edge, coarse.uncertainty) if coarse else (math.nan, math.nan)
        swept = a["per_run"][a["per_run"]["onset"] >= 0].groupby("onset")["final_ood"].mean()
        rows.append({"gamma": g, "t_mem": a["t_mem_none"], "ood_none": a["N"], "theta": a["theta"], "edge": edge,
                     "edge_pm": pm, "edge_over_t_mem": edge / a["t_mem_none"], "refined": e is not None,
                     "closing": a["falling"] is not None, "best_onset": int(swept.idxmax()),
                     "best_onset_ood": float(swept.max())})
        runs.append(a["per_run"].assign(gamma=g))
        hists.append(a["history"].assign(gamma=g))
    edges_df = pd.DataFrame(rows).merge(gamma_conventions(gammas), on="gamma")
    per_run, history = pd.concat(runs, ignore_index=True), pd.concat(hists, ignore_index=True)
    found = edges_df.dropna(subset=["edge"]).sort_values("gamma")
    verdict = _verdict_c05(found)
    rho = float(found["gamma"].corr(found["edge"], method="spearman")) if len(found) >= 2 else math.nan
    rho_mem = float(edges_df["gamma"].corr(edges_df["t_mem"], method="spearman"))
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict, "protocol": protocol_name,
               "n_gammas": len(gammas), "n_edges": len(found), "rho_edge": rho, "rho_t_mem": rho_mem,
               "refined": bool(refine_edges)}
    for r in rows:
        numbers.update({f"edge_{_tag(r['gamma'])}": r["edge"], f"edge_pm_{_tag(r['gamma'])}": r["edge_pm"],
                        f"t_mem_{_tag(r['gamma'])}": r["t_mem"]})
    parts = [f"γ {r['gamma']:g}: " + (f"{r['edge']:.0f} ± {r['edge_pm']:.0f}" if not math.isnan(r["edge"])
                                      else "no edge") for r in rows]
    numbers["edges_text"] = "; ".join(parts)
    ours = ("onset edge " + "; ".join(parts) + (f" (Spearman ρ(γ, edge) {rho:.2f})" if not math.isnan(rho) else "")
            + "; t_mem " + ", ".join(f"{r['t_mem']:.0f}" for r in rows))
    row = {"claim": "C5", "statement": "the window's position depends on the init scale γ: it moves earlier as "
                                       "γ grows", "paper": "earlier for larger γ (no numbers)", "ours": ours,
           "profile": P.name, "seeds": len(seeds), "verdict": verdict}
    table = condition_table(per_run, ["gamma", "onset"]).sort_values(["gamma", "onset"])
    curves = stats.mean_ci(history, ["gamma", "onset", "step"], "acc/test_ood")
    return ClaimResult([row], numbers, {"edges": edges_df, "table": table, "per_run": per_run, "curves": curves},
                       {"steps": P.steps, "onsets": onsets})


def _verdict_c06(small: dict[str, Any], ref: dict[str, Any]) -> str:
    d = ref["share"] - small["share"]
    if d >= 0.25:  # the paper's gap is 4 of 12 seeds (0.33); at 8 seeds, at least 2
        return "reproduced"
    return "partly reproduced" if d > 0 else "not reproduced"


def _verdict_c07(basin: pd.DataFrame) -> tuple[str, float]:
    best = basin.sort_values(["reasoning", "final_ood"], ascending=False).iloc[0]
    ends = basin.iloc[[0, -1]]
    if not 0.7 <= best["gamma"] <= 1.1:
        return "not reproduced", float(best["gamma"])
    above = int((best["reasoning"] > ends["reasoning"]).sum())
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[above], float(best["gamma"])


C6_GAMMAS = (0.5, 1.1)  # the paper's comparison: 8/12 at γ = 0.5, 12/12 at γ = 1.1


def c06(*, profile: str, n_seeds: int, gammas: list, window_start_frac: float, window_frac: float,
        results_dir: str, train_missing: bool = True, workers: int = -1,
        protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C6 and C7: at each γ, the seeds that reach OOD > 0.5 under one placed window (the basin of the
    reasoning solution), with exact binomial intervals; which γ is best."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    gammas = gamma_list(gammas)
    missing = [g for g in C6_GAMMAS if g not in gammas]
    if missing:
        raise config.ConfigError(f"gammas: must include {list(C6_GAMMAS)} (the paper's comparison), missing {missing}")
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    wd = protocol.window(P, window_start_frac, window_frac, pr.window_lambda)
    print(f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
          f"window {wd.windows[0][:2]} at λ {pr.window_lambda:g}")
    specs = [({"gamma": g, "seed": s}, protocol.anchor_run(P, s, wd, gamma=g, protocol=protocol_name))
             for g in gammas for s in seeds]
    history, per_run = _run_grid(specs, results_dir, train_missing, workers)
    basin = condition_table(per_run, ["gamma"]).sort_values("gamma").reset_index(drop=True)
    basin["share"] = basin["reasoning"] / basin["seeds"]
    cis = [stats.binomial_ci(int(k), int(n)) for k, n in zip(basin["reasoning"], basin["seeds"], strict=True)]
    basin["share_lo"], basin["share_hi"] = [c[0] for c in cis], [c[1] for c in cis]
    basin = basin.merge(gamma_conventions(gammas), on="gamma")
    by = {float(r["gamma"]): r for r in basin.to_dict("records")}
    small, ref = by[C6_GAMMAS[0]], by[C6_GAMMAS[1]]
    from scipy.stats import fisher_exact

    p = float(fisher_exact([[ref["reasoning"], ref["seeds"] - ref["reasoning"]],
                            [small["reasoning"], small["seeds"] - small["reasoning"]]], alternative="greater")[1])
    v6 = _verdict_c06(small, ref)
    v7, best = _verdict_c07(basin)
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": v6, "verdict_c7": v7, "best_gamma": best,
               "protocol": protocol_name, "window_start": wd.windows[0][0], "window_end": wd.windows[0][1],
               "window_lambda": pr.window_lambda, "fisher_p": p}
    for r in by.values():
        t = _tag(r["gamma"])
        numbers.update({f"k_{t}": int(r["reasoning"]), f"n_{t}": int(r["seeds"]), f"share_lo_{t}": r["share_lo"],
                        f"share_hi_{t}": r["share_hi"], f"ood_{t}": r["final_ood"]})
    counts = ", ".join(f"γ {r['gamma']:g}: {int(r['reasoning'])}/{int(r['seeds'])}" for r in by.values())
    rows = [{"claim": "C6", "statement": "the basin of the reasoning solution shrinks at small init",
             "paper": "γ 0.5: 8/12 seeds reach OOD > 0.5; γ 1.1: 12/12",
             "ours": f"{counts} (one-sided Fisher p {p:.2f}, γ 1.1 vs 0.5)", "profile": P.name,
             "seeds": len(seeds), "verdict": v6},
            {"claim": "C7", "statement": "a moderate init scale is best", "paper": "γ ∈ [0.7, 1.1]",
             "ours": f"most seeds reasoning at γ {best:g} ({counts})", "profile": P.name, "seeds": len(seeds),
             "verdict": v7}]
    curves = stats.mean_ci(history, ["gamma", "step"], "acc/test_ood")
    return ClaimResult(rows, numbers, {"basin": basin, "per_run": per_run, "curves": curves},
                       {"steps": P.steps, "window": wd.windows[0]})


# ----------------------------------------------------------------------------------------- C10
RATE_FRAC = 1000 / 6400  # the initial-rate runs: the first 1000 steps of a quick-length run


def rate_run(P: config.Profile, seed: int, gamma: float, protocol_name: str = protocol.DEFAULT_PROTOCOL
             ) -> config.RunConfig:
    """A short instrumented run without weight decay, evaluated ~50 times: the transformer's early rates."""
    steps = max(2, round(P.steps * RATE_FRAC))
    return protocol.anchor_run(P, seed, config.WDSchedule.none(), gamma=gamma, protocol=protocol_name,
                               steps=steps, eval_every=max(1, steps // 50), instrument=True)


def _check_theory_seeds(theory_seeds: Any) -> None:
    """The rate model's seed count is checked before any transformer run is loaded or trained."""
    if not isinstance(theory_seeds, int) or theory_seeds < 1:
        raise config.ConfigError(f"theory_seeds: must be a positive integer, got {theory_seeds!r}")


def _verdict_c10(mem: dict[str, float], rea: dict[str, float]) -> str:
    flat = not math.isnan(mem["lo"]) and -0.5 <= mem["lo"] and mem["hi"] <= 0.5  # Θ(1): |k| ≤ 0.5
    quadratic = not math.isnan(rea["lo"]) and rea["lo"] <= 2 <= rea["hi"] and rea["lo"] > 0  # Θ(γ²)
    return {2: "reproduced", 1: "partly reproduced", 0: "not reproduced"}[int(flat) + int(quadratic)]


def c10(*, profile: str, n_seeds: int, rate_gammas: list, c5_n_seeds: int, c5_gammas: list, onset_fracs: list,
        window_frac: float, theory_seeds: int, results_dir: str, train_missing: bool = True, workers: int = -1,
        protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """C10: the two-timescale rate model against the transformer: its rates' γ-exponents, and its onset
    edge (one time-scale constant fitted at γ = 1) against C5's measured edges."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    rate_gammas = gamma_list(rate_gammas, "rate_gammas")
    c5_gammas = gamma_list(c5_gammas, "c5_gammas")
    if 1.0 not in c5_gammas:
        raise config.ConfigError(f"c5_gammas: must include 1.0 (the theory's time scale is fitted there), "
                                 f"got {c5_gammas}")
    _check_theory_seeds(theory_seeds)
    protocol.get_protocol(protocol_name, "protocol_name")
    c5_seeds = protocol.seeds(P, c5_n_seeds)
    onsets = onset_grid(P, onset_fracs)
    rate_specs = [({"gamma": g, "seed": s}, rate_run(P, s, g, protocol_name)) for g in rate_gammas for s in seeds]
    _run_grid(rate_specs + _c05_specs(P, c5_seeds, c5_gammas, protocol_name, onsets, window_frac), results_dir,
              train_missing, workers)
    rate_hist, _ = _run_grid(rate_specs, results_dir, train_missing, workers)
    start = P.warmup_steps
    rates = pd.DataFrame([{"gamma": g, "seed": s, **theory.margin_rates(h, start)}
                          for (g, s), h in rate_hist.groupby(["gamma", "seed"])])
    fits = {k: theory.rate_exponent(rate_gammas, [rates.loc[rates["gamma"] == g, k].to_numpy()
                                                   for g in rate_gammas]) for k in ("memorization", "reasoning")}
    verdict = _verdict_c10(fits["memorization"], fits["reasoning"])
    model = theory.RateModel()
    th_rates = theory.initial_rates(model, rate_gammas)
    th_slopes = {k: theory.loglog_slope(rate_gammas, v) for k, v in th_rates.items()}

    with contextlib.redirect_stdout(io.StringIO()):
        c5 = c05(profile=profile, n_seeds=c5_n_seeds, gammas=c5_gammas, onset_fracs=onset_fracs,
                 window_frac=window_frac, results_dir=results_dir, train_missing=train_missing, workers=workers,
                 protocol_name=protocol_name)
    measured = c5.frames["edges"].set_index("gamma")
    fine = [i / 200 for i in range(0, round(200 * (1 - window_frac)) + 1)]  # onsets every 0.5 % of the run
    share = theory.window_shares(model, c5_gammas, fine, theory_seeds, window_frac)
    th_edge = np.array(theory.first_onset(fine, share))  # a fraction of the run, per γ
    i1 = c5_gammas.index(1.0)
    k = measured.loc[1.0, "edge"] / (th_edge[i1] * P.steps)  # the one fitted constant: a time scale
    overlay = measured[["edge", "edge_pm", "t_mem"]].reset_index().assign(
        theory_frac=th_edge, predicted=k * th_edge * P.steps, basin=share.max(axis=0))
    others = overlay[(overlay["gamma"] != 1.0)].dropna(subset=["edge", "predicted"])
    mae = float((others["predicted"] - others["edge"]).abs().mean()) if len(others) else math.nan
    inside = int(((others["predicted"] - others["edge"]).abs() <= others["edge_pm"]).sum())
    both = overlay.dropna(subset=["edge", "predicted"])  # does the theory order the edges as the runs do?
    rho = float(both["predicted"].corr(both["edge"], method="spearman")) if len(both) >= 3 else math.nan

    m, r = fits["memorization"], fits["reasoning"]
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict, "rate_start": start,
               "rate_steps": int(rate_specs[0][1].train.steps),
               "theory_slope_mem": th_slopes["memorization"], "theory_slope_rea": th_slopes["reasoning"],
               "exp_mem": m["exponent"], "exp_mem_lo": m["lo"], "exp_mem_hi": m["hi"], "exp_mem_n": m["n_gammas"],
               "exp_rea": r["exponent"], "exp_rea_lo": r["lo"], "exp_rea_hi": r["hi"], "exp_rea_n": r["n_gammas"],
               "time_scale": float(k), "overlay_mae": mae, "overlay_inside": inside, "overlay_n": int(len(others)),
               "overlay_rho": rho,
               "c5_verdict": c5.numbers["verdict"], "theory_seeds": theory_seeds}
    numbers.update({f"theory_edge_{_tag(g)}": float(f * P.steps) for g, f in zip(c5_gammas, th_edge, strict=True)})

    def fmt(f: dict[str, float]) -> str:
        return ("not measurable (fewer than 2 γ with a growing margin)" if math.isnan(f["exponent"])
                else f"{f['exponent']:.2f} [{f['lo']:.2f}, {f['hi']:.2f}] ({f['n_gammas']} γ)")

    numbers.update({"exp_mem_text": fmt(m), "exp_rea_text": fmt(r)})
    ours = (f"transformer's early rates ∝ γ^k: memorization k = {fmt(m)}, reasoning (OOD margin) k = {fmt(r)}; "
            f"theory's edge (time scale fitted at γ 1) vs measured: mean |Δ| {mae:.0f} steps, "
            f"{inside}/{len(others)} inside the measured bracket")
    row = {"claim": "C10", "statement": "two timescales: memorization rate Θ(1) in γ, reasoning rate Θ(γ²)",
           "paper": "μ_m = Θ(1), μ_r = Θ(γ²) (theory)", "ours": ours, "profile": P.name, "seeds": len(seeds),
           "verdict": verdict}
    placements = theory.placement_counts(model, rate_gammas, theory_seeds)
    place = pd.DataFrame([{"placement": n, "gamma": g, "reasoning": int(c), "seeds": theory_seeds}
                          for n, counts in placements.items() for g, c in zip(rate_gammas, counts, strict=True)])
    curves = stats.mean_ci(rate_hist.melt(id_vars=["gamma", "seed", "step"],
                                          value_vars=["margin/train", "margin/test_ood"], var_name="margin"),
                           ["gamma", "margin", "step"], "value")
    th_curve = pd.DataFrame([{"gamma": g, "onset_frac": f, "share": float(share[i, j])}
                             for i, f in enumerate(fine) for j, g in enumerate(c5_gammas)])
    return ClaimResult([row], numbers, {"rates": rates, "overlay": overlay, "placements": place,
                                        "margins": curves, "theory_onsets": th_curve,
                                        "theory_rates": pd.DataFrame({"gamma": rate_gammas, **th_rates})},
                       {"fits": fits, "c5": c5, "steps": P.steps})


# --------------------------------------------------------------------------------- the explorer page
def x01(*, profile: str, n_seeds: int, gammas: list, onset_fracs: list, window_frac: float, theory_seeds: int,
        results_dir: str, train_missing: bool = True, workers: int = -1,
        protocol_name: str = protocol.DEFAULT_PROTOCOL) -> ClaimResult:
    """The explorer's grid (C5's runs): OOD curves per (γ, window start), λ(t) per start, and the rate
    model's share of reasoning seeds for the same cell. No scoreboard row."""
    P = config.get_profile(profile)
    gammas = gamma_list(gammas)
    _check_theory_seeds(theory_seeds)
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    onsets = onset_grid(P, onset_fracs)
    c5 = c05(profile=profile, n_seeds=n_seeds, gammas=gammas, onset_fracs=onset_fracs, window_frac=window_frac,
             results_dir=results_dir, train_missing=train_missing, workers=workers, protocol_name=protocol_name)
    curves = c5.frames["curves"].copy()
    curves["condition"] = np.where(curves["onset"] < 0, "none", "window")
    curves["window_start"] = curves["onset"].where(curves["onset"] >= 0)
    length = protocol.window_steps(P, 0.0, window_frac)[1]
    sched = pd.concat([schedule_frame({"none": config.WDSchedule.none()}, P.steps).assign(window_start=math.nan)]
                      + [schedule_frame({"window": config.WDSchedule.window(o, length, pr.window_lambda)}, P.steps)
                         .assign(window_start=o) for o in onsets], ignore_index=True)
    share = theory.window_shares(theory.RateModel(), gammas, [o / P.steps for o in onsets], theory_seeds,
                                 window_frac)
    table = c5.frames["table"]
    notes = []
    for i, o in enumerate(onsets):
        for j, g in enumerate(gammas):
            cell = table[(table["gamma"] == g) & (table["onset"] == o)]
            k, n = int(cell["reasoning"].sum()), int(cell["seeds"].sum())
            notes.append({"gamma": g, "window_start": o,
                          "text": f"runs: {k}/{n} seeds reason · theory: {round(share[i, j] * theory_seeds)}/"
                                  f"{theory_seeds} seeds reason"})
    numbers = {"profile": P.name, "seeds": c5.numbers["seeds"], "n_cells": len(notes)}
    return ClaimResult([], numbers, {"curves": curves, "schedules": sched, "theory": pd.DataFrame(notes)},
                       {"c5": c5})


# ------------------------------------------------------------------------------- the scoreboard
CLAIM_FUNCTIONS = {"c00_calibration": c00, "c01_critical_window": c01, "c02_budget_placement": c02,
                   "c03_sharp_onset": c03, "c04_window_vs_fitting": c04, "c05_init_scale_window": c05,
                   "c06_basin": c06, "c08_grokking": specificity.c08, "c09_scan": specificity.c09,
                   "c11_depth": robustness.c11, "c12_optimizer": robustness.c12,
                   "c10_two_timescales": c10, "c13_instrumentation": c13, "x01_explorer": x01}


def planned_runs(stem: str, params: dict[str, Any]) -> list[config.RunConfig]:
    """The runs a claim notebook will need with these parameters (an edge finder may add more),
    without training or loading anything."""
    global _planning
    _planning = True
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            CLAIM_FUNCTIONS[stem](**params)
    except _Planned as planned:
        return planned.runs
    finally:
        _planning = False
    return []


def notebook_defaults(path: Path) -> dict[str, Any]:
    """The default values of a notebook's parameters cell."""
    import papermill as pm

    return {name: ast.literal_eval(p["default"]) for name, p in pm.inspect_notebook(str(path)).items()}


def scoreboard(profile: str, results_dir: str | Path) -> list[dict[str, Any]]:
    """Every claim's rows, recomputed from the stored results with the notebooks' default parameters."""
    from critwin_lib.notebooks import claim_notebooks

    rows = []
    for nb in claim_notebooks():
        params = {**notebook_defaults(nb), "profile": profile, "results_dir": str(results_dir),
                  "train_missing": False}
        rows += CLAIM_FUNCTIONS[nb.stem](**params).rows
    return rows


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CLAIMS_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    import argparse

    from critwin_lib.notebooks import REPO

    ap = argparse.ArgumentParser(prog="python -m critwin_lib.claims",
                                 description="write results/claims.csv from the stored results")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--results", type=Path, default=REPO / "results")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: <results>/claims.csv (quick) or claims_<profile>.csv; '-' for stdout")
    args = ap.parse_args(argv)
    with contextlib.redirect_stdout(sys.stderr):  # the claims' progress lines must not mix with `--out -`
        text = to_csv(scoreboard(args.profile, args.results))
    if str(args.out) == "-":
        sys.stdout.write(text)
    else:
        name = "claims.csv" if args.profile == "quick" else f"claims_{args.profile}.csv"
        (args.out or args.results / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
