"""The calibration page: under which protocol can a run go either way (no weight decay memorizes, full-run
weight decay reasons)? It fixes what the paper leaves open for every other page; it has no scoreboard row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, metrics, protocol, stats
from critwin_lib.claims import fates
from critwin_lib.claims.core import ClaimResult, Design, condition_table, fetch
from critwin_lib.protocol import WINDOW_VARIANTS
from critwin_lib.sizes import get_profile

MEMORIZED_OOD = 0.25  # this page's rule, fixed before its runs: memorizes = fitted and final OOD below this
# The fitted regime's part 2 at the paper length. First wording (2026-12-04): the window of full-run λ's budget (each
# of protocol.WINDOW_VARIANTS) must keep training accuracy at or above TRAIN_FLOOR while it is on, in most seeds.
# Revised (2026-12-06, after the four runs of each window had been seen): most seeds must end reasoning with the
# training set refitted by the end; the lowest training accuracy while the window is on is reported, not required
# (a dip that refits is part of the phenomenon; the floor was meant for windows that wipe the training set for
# good), and the paper's 25 % window is tried before the 50 % variant whatever the learning rate.
TRAIN_FLOOR = 0.5


def _with_rule(table: pd.DataFrame, runs: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """`table` with `memorizes`: the seeds that memorize by this page's rule (training accuracy ≥ 0.99 and final
    OOD < 0.25), which it keeps although the fates of the other pages read the OOD answers (setup page)."""
    rule = runs.assign(memorizes=metrics.fitted(runs["final_train"]) & (runs["final_ood"] < MEMORIZED_OOD))
    counts = rule.groupby(by, sort=False, dropna=False)["memorizes"].sum().astype(int).reset_index()
    return table.merge(counts, on=by, how="left")


def long_profile(profile: str) -> str:
    """The profile of the page's paper-length grid: the paper's 20,000 steps beside the quick profile, the page's
    own profile otherwise (at smoke the grid stays plumbing; at paper it is the paper grid again)."""
    return "paper" if profile == "quick" else profile


def _grid_design(profile: str, n_seeds: int, gamma: float, grid: Any, init_check: list,
                 field: str = "grid", seeds_field: str = "n_seeds") -> Design:
    P = get_profile(profile)
    seeds = P.seeds(n_seeds, seeds_field)
    if not isinstance(grid, dict) or not grid:
        raise config.ConfigError(f"{field}: must map protocol names to lists of λ, got {grid!r}")
    for name, lams in grid.items():
        protocol.get_protocol(name, field)
        if not isinstance(lams, list | tuple) or not lams:
            raise config.ConfigError(f"{field}: {name!r} must have a non-empty list of λ ≥ 0, got {lams!r}")
        for lam in lams:
            checks.non_negative(lam, field, f"a finite λ ≥ 0 in {name!r}'s list")
    specs = [({"protocol": name, "lambda": float(lam), "seed": s},
              protocol.anchor_run(P, s, protocol.full_run(lam), gamma=gamma, protocol=name))
             for name, lams in grid.items() for lam in lams for s in seeds]
    inits = [({"gamma": float(g), "seed": s}, protocol.anchor_run(P, s, config.WDSchedule.none(), gamma=g))
             for g in init_check for s in seeds]
    return Design(specs + inits, f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, "
                                 f"{len(specs) + len(inits)} runs", seeds)


def window_specs(profile: str, n_seeds: int, gamma: float, windows: Any) -> list:
    """The fitted regime's window runs: for each protocol and full-run λ of `windows` ({protocol: [λ, ...]}), each
    window of WINDOW_VARIANTS carrying that λ's budget, n_seeds each."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds, "paper_seeds")
    if not isinstance(windows, dict):
        raise config.ConfigError(f"paper_windows: must map protocol names to lists of full-run λ, got {windows!r}")
    for name, lams in windows.items():
        protocol.get_protocol(name, "paper_windows")
        checks.positive_numbers(lams, "paper_windows", "positive full-run λ")
    return [({"protocol": name, "lambda": float(lam), "variant": v, "seed": s},
             protocol.anchor_run(P, s, protocol.window(P, start, length, k * lam), gamma=gamma, protocol=name))
            for name, lams in windows.items() for lam in lams for v, (start, length, k) in WINDOW_VARIANTS.items()
            for s in seeds]


def c00_design(*, profile: str, n_seeds: int, gamma: float, grid: dict, init_check: list,
               paper_grid: dict | None = None, paper_seeds: int = 4, paper_windows: dict | None = None) -> Design:
    """For each protocol, no weight decay and constant λ over the whole run at each λ of `grid`
    ({protocol: [λ, ...]}); without weight decay, the init scales of `init_check` (γ on σ₀); the same for
    `paper_grid` at the paper's length (`long_profile`) with `paper_seeds` seeds; and there the fitted regime's
    windows for each λ of `paper_windows` (`window_specs`)."""
    d = _grid_design(profile, n_seeds, gamma, grid, init_check)
    if not paper_grid:
        return d
    long = _grid_design(long_profile(profile), paper_seeds, gamma, paper_grid, [], "paper_grid", "paper_seeds")
    wins = window_specs(long_profile(profile), paper_seeds, gamma, paper_windows or {})
    return Design(d.specs + long.specs + wins, f"{d.summary}; paper length: {long.summary}"
                  + (f", {len(wins)} window runs" if wins else ""), d.seeds)


@dataclass
class ProtocolCheck:
    """What the calibration rule reads of one protocol."""

    none_memorizes: bool
    full_reasons: bool
    best_lambda: float
    both_fates: bool
    t_mem_none: float
    fitted_lambda: float = math.nan  # the full-run λ with the most seeds that reason AND end with the training set
    fitted_reasons: bool = False  # ... fitted, and whether most of its seeds do (the fitted regime, 2026-12-04)


@dataclass
class CalibrationResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    init: pd.DataFrame
    verdicts: dict[str, ProtocolCheck]
    paper: CalibrationResult | None = None  # the same for the paper-length grid
    windows: pd.DataFrame | None = None  # the paper grid's fitted-regime windows (`window_table`), where run
    window_runs: pd.DataFrame | None = None  # ... one row per window run (`window_runs`)


def _most(k: Any, n: Any) -> bool:
    """"Most seeds", as this page's rules read it: more than half."""
    return bool(k > n / 2)


def _ranked(t: pd.DataFrame, count: str) -> pd.DataFrame:
    """One protocol's full-run rows (`t` indexed by λ, λ 0 dropped), best first by the seeds counted in `count`
    ("reasoning": the first rule's pick; "reasoning_fitted": the fitted regime's), ties to the higher final OOD."""
    return t.drop(index=0.0, errors="ignore").sort_values([count, "final_ood"], ascending=False)


def protocol_check(t: pd.DataFrame) -> ProtocolCheck:
    """The rule on one protocol's table (indexed by λ; `memorizes` by this page's rule): most none seeds memorize,
    and at the full-run λ with the most reasoning seeds (ties: higher OOD) most seeds reason."""
    none_ok = 0.0 in t.index and t.loc[0.0, "memorizes"] >= t.loc[0.0, "seeds"] / 2
    best = _ranked(t, "reasoning")
    full_ok = len(best) > 0 and _most(best["reasoning"].iloc[0], best["seeds"].iloc[0])
    fit = _ranked(t, "reasoning_fitted")
    return ProtocolCheck(bool(none_ok), bool(full_ok), float(best.index[0]) if len(best) else math.nan,
                         bool(none_ok and full_ok), float(t.loc[0.0, "t_mem"]) if 0.0 in t.index else math.nan,
                         float(fit.index[0]) if len(fit) else math.nan,
                         bool(len(fit) and _most(fit["reasoning_fitted"].iloc[0], fit["seeds"].iloc[0])))


def describe(verdicts: dict[str, ProtocolCheck], steps: int) -> str:
    """One Markdown bullet per protocol: whether it gives both fates, and why."""
    lines = []
    for name, v in verdicts.items():
        both = "gives both fates" if v.both_fates else "does **not** give both fates"
        full = ("no full-run λ was tried" if math.isnan(v.best_lambda) else
                f"the best full-run λ = {v.best_lambda:g} "
                f"{'makes most seeds reason' if v.full_reasons else 'does not make most seeds reason'}")
        lines.append(f"* **{protocol.plain(name)}** {both}: without weight decay t_mem = {v.t_mem_none:.0f} steps "
                     f"({v.t_mem_none / steps:.2f} of the run), the none seeds "
                     f"{'mostly memorize' if v.none_memorizes else 'do not mostly memorize'}; {full}.")
    return "\n".join(lines)


def c00(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> CalibrationResult:
    """Calibration: which protocol settings give both fates (rule in the notebook), σ₀'s check, and (in
    `.paper`) the same rule on the paper-length grid."""
    c00_design(**params)  # every parameter checked before anything trains
    paper_grid, paper_seeds = params.pop("paper_grid", None), params.pop("paper_seeds", 4)
    paper_windows = params.pop("paper_windows", None) or {}
    result = _grid_page(results_dir, train_missing, workers, params)
    if paper_grid:
        long = long_profile(params["profile"])
        result.paper = _grid_page(results_dir, train_missing, workers,
                                  {**params, "profile": long, "n_seeds": paper_seeds, "grid": paper_grid,
                                   "init_check": []})
        if paper_windows:
            history, runs = fetch(window_specs(long, paper_seeds, params["gamma"], paper_windows), results_dir,
                                  train_missing, workers)
            result.paper.window_runs = window_runs(history, runs)
            result.paper.windows = window_table(result.paper.window_runs)
            result.paper.numbers.update(fitted_regime(result.paper.table, result.paper.windows))
        result.paper.numbers.update(fitted_choice(result.paper.table, result.paper.windows, long))
    return result


def fitted_choice(full: pd.DataFrame, windows: pd.DataFrame | None, profile: str) -> dict[str, Any]:
    """The protocol the paper-length claims take under the fitted regime (part 2 as revised: most seeds of the window
    runs end reasoning with the training set refitted), in the revised order: the paper's 25 % window before the
    50 % variant, then the learning rate already in use, then the smallest full-run λ passing both parts. Keys
    `fitted_choice` (protocol name, "" when none passes), `fitted_choice_lambda` (full-run λ),
    `fitted_choice_variant`, `fitted_choice_window_lambda`, and `fitted_text` (Markdown sentences saying
    where the grid stands and, while nothing passes, what the claims keep)."""
    in_use = protocol.resolve("", profile)
    decayed = full[full["lambda"] > 0].sort_values("lambda", kind="stable")
    names = sorted(decayed["protocol"].unique(), key=lambda n: n != in_use)  # stable: grid order after it
    part1 = {n: [float(r["lambda"]) for _, r in decayed[decayed["protocol"] == n].iterrows()
                 if _most(r["reasoning_fitted"], r["seeds"])] for n in names}
    lr = {n: f"lr {protocol.get_protocol(n).lr:.0e}".replace("e-0", "e-") for n in names}
    none = {"fitted_choice": "", "fitted_choice_lambda": math.nan, "fitted_choice_variant": "",
            "fitted_choice_window_lambda": math.nan}
    if not any(part1.values()):
        best = {n: _ranked(decayed[decayed["protocol"] == n].set_index("lambda"), "reasoning_fitted").iloc[0]
                for n in names}  # as `protocol_check` picks the fitted λ
        return {**none, "fitted_text": "No protocol of the grid passes part 1: at its best full-run λ "
                + "; ".join(f"{lr[n]} (λ {b.name:g}) has {int(b['reasoning_fitted'])} of {int(b['seeds'])} "
                            "seeds reasoning with the training set fitted" for n, b in best.items()) + "."
                + _kept(in_use, decayed)}
    passes = "; ".join(f"{lr[n]} at λ " + ", ".join(f"{lam:g}" for lam in lams) for n, lams in part1.items() if lams)
    text = f"Part 1 passes (most seeds reason with the training set fitted) at {passes}."
    rows = [] if windows is None else [
        (n, lam, v, r) for v in WINDOW_VARIANTS for n, lams in part1.items() for lam in lams
        for _, r in windows[(windows["protocol"] == n) & (windows["lambda"] == lam)
                            & (windows["variant"] == v)].iterrows()]
    if not rows:
        return {**none, "fitted_text": text + " Part 2's window runs for those λ are not run yet."
                + _kept(in_use, decayed)}
    held = [(n, lam, v, r) for n, lam, v, r in rows if _most(r["reasoning_fitted"], r["seeds"])]
    seen = "; ".join(f"{lr[n]}, λ {lam:g}, {v} window (λ {WINDOW_VARIANTS[v][2] * lam:g}): "
                     f"{int(r['reasoning_fitted'])} of {int(r['seeds'])} seeds end reasoning with the training set "
                     f"refitted (lowest training accuracy while the window is on {r['lowest_train']:.2f} on average; "
                     f"≥ {TRAIN_FLOOR:g} throughout in {int(r['floor_held'])})" for n, lam, v, r in rows)
    if not held:
        return {**none, "fitted_text": text + f" **No window passes part 2**: {seen}." + _kept(in_use, decayed)}
    n, lam, v, _ = held[0]  # rows are in the revised order: 25 % before 50 %, protocol in use first, smallest λ
    moved = protocol.FITTED_CHOICES.get(profile) == protocol.FittedChoice(n, lam, v)  # the claims run under it
    return {"fitted_choice": n, "fitted_choice_lambda": lam, "fitted_choice_variant": v,
            "fitted_choice_window_lambda": WINDOW_VARIANTS[v][2] * lam,
            "fitted_text": text + f" Part 2: {seen}. **{protocol.plain(n)} ({lr[n]}) with full-run λ {lam:g} and the "
                                  f"{v} window "
                                  f"(λ {WINDOW_VARIANTS[v][2] * lam:g}) passes both parts**."
                           + (" The paper-length claims (C1–C4) run under it." if moved else
                              " The paper-length claims move to it once their runs under it are trained."
                              + _kept(in_use, decayed, "Until then"))}


def _kept(in_use: str, decayed: pd.DataFrame, until: str = "Until a choice passes both parts") -> str:
    """While the claims do not run under a fitted choice: what they keep (the protocol the page's first rule fixed,
    with its window's budget), and where the first rule, read on the grid as it now stands, would point instead."""
    ladder = protocol.get_protocol(in_use).window_lambda / 4
    text = (f" {until}, the paper-length claims keep {protocol.plain(in_use)} as the first rule fixed it "
            f"(full-run λ {ladder:g}, window λ {4 * ladder:g}), read both ways")
    t = decayed[decayed["protocol"] == in_use].set_index("lambda")
    if not len(t) or ladder not in t.index:
        return text + "."
    best = _ranked(t, "reasoning").index[0]  # the first rule's pick, as `protocol_check` makes it
    if best == ladder:
        return text + "."
    return text + (f"; on this finer grid the first rule (OOD answers alone) would name λ {best:g} instead "
                   f"({int(t.loc[best, 'reasoning'])} of {int(t.loc[best, 'seeds'])} seeds reasoning, final OOD "
                   f"{t.loc[best, 'final_ood']:.2f}, against λ {ladder:g}'s {int(t.loc[ladder, 'reasoning'])} and "
                   f"{t.loc[ladder, 'final_ood']:.2f}), which would not bring the claims into the fitted regime "
                   "unless its windows pass part 2.")


def window_runs(history: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per window run of the fitted regime: its protocol, full-run λ, variant and seed, the lowest training
    accuracy while the window is on (up to the first evaluation after it closes), final training and OOD accuracy,
    and whether it ends reasoning with the training set refitted (part 2 as revised)."""
    by_key, lowest = dict(tuple(history.groupby("key"))), []
    for key, v in zip(runs["key"], runs["variant"], strict=True):
        h = by_key[key]
        steps = int(h["step"].max())
        start, length, _ = WINDOW_VARIANTS[v]
        end = h.loc[h["step"] >= round((start + length) * steps), "step"].min()  # the first evaluation after it
        on = h[(h["step"] >= round(start * steps)) & (h["step"] <= end)]
        lowest.append(float(on["acc/train"].min()) if len(on) else math.nan)
    runs = fates.with_fates(runs.assign(lowest_train=lowest), require_fit=True).assign(
        fitted_reasoning=lambda r: r["fate"] == "reasoning", floor=lambda r: r["lowest_train"] >= TRAIN_FLOOR)
    return runs[["protocol", "lambda", "variant", "seed", "lowest_train", "floor", "final_train", "final_ood",
                 "fitted_reasoning"]].reset_index(drop=True)


def window_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per protocol, full-run λ and window variant (`window_runs` aggregated): seeds, seeds that reason with the
    training set refitted, the mean lowest training accuracy while the window is on, and the seeds whose training
    accuracy stays ≥ TRAIN_FLOOR there (the first wording of part 2)."""
    return runs.groupby(["protocol", "lambda", "variant"], sort=False).agg(
        seeds=("seed", "count"), reasoning_fitted=("fitted_reasoning", "sum"), lowest_train=("lowest_train", "mean"),
        floor_held=("floor", "sum"), final_train=("final_train", "mean"), final_ood=("final_ood", "mean")).reset_index()


def fitted_regime(full: pd.DataFrame, windows: pd.DataFrame) -> dict[str, Any]:
    """The fitted regime at the paper length, per protocol and window variant: some full-run λ at which most seeds
    reason with the training set fitted (part 1) and whose window, carrying its budget, ends most seeds reasoning
    with the training set refitted (part 2 as revised; the first wording's floor is reported beside it). Glue keys
    `<protocol>_fitted_regime_<variant>` and `..._lambda_<variant>`."""
    out: dict[str, Any] = {"train_floor": TRAIN_FLOOR}
    for (name, variant), w in windows.groupby(["protocol", "variant"], sort=False):
        f = full[full["protocol"] == name].set_index("lambda")
        ok = [lam for lam, r in w.set_index("lambda").iterrows() if lam in f.index
              and _most(f.loc[lam, "reasoning_fitted"], f.loc[lam, "seeds"])
              and _most(r["reasoning_fitted"], r["seeds"])]
        tag = f"{name.replace('-', '_')}_{variant.replace(' %', 'pc')}"
        out.update({f"{tag}_fitted_regime": bool(ok), f"{tag}_fitted_regime_lambda": min(ok) if ok else math.nan})
        for _, r in w.iterrows():  # per λ: λ 2.25 -> "2p25", glue keys without dots
            key = f"{r['lambda']:g}".replace(".", "p")
            out.update({f"{tag}_lowest_train_{key}": float(r["lowest_train"]),
                        f"{tag}_floor_held_{key}": int(r["floor_held"]),
                        f"{tag}_reasoning_fitted_{key}": int(r["reasoning_fitted"])})
    return out


def _grid_page(results_dir: str, train_missing: bool, workers: int, params: dict[str, Any]) -> CalibrationResult:
    d = c00_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run = fates.with_fates(per_run, require_fit=False)  # this page's first rule reads OOD answers alone
    is_check = per_run["protocol"].isna() if "gamma" in per_run else pd.Series(False, index=per_run.index)
    init_runs, per_run = per_run[is_check], per_run[~is_check]
    history = history[history["protocol"].notna()] if "gamma" in history else history
    init_table = _with_rule(condition_table(init_runs, ["gamma"]), init_runs, ["gamma"]) if len(init_runs) \
        else pd.DataFrame()
    if len(init_table):
        init_table.insert(1, "init std", init_table["gamma"] * protocol.SIGMA0)
    table = _with_rule(condition_table(per_run, ["protocol", "lambda"]), per_run, ["protocol", "lambda"])
    table = table.merge(per_run.groupby(["protocol", "lambda"], sort=False)["final_train"].mean().reset_index(),
                        on=["protocol", "lambda"], how="left")  # a λ too strong to fit shows here
    table["t_mem_frac"] = table["t_mem"] / P.steps
    strict = fates.with_fates(per_run, require_fit=True)  # reasoning that also ends with the training set fitted
    fitted = (strict["fate"] == "reasoning").groupby([strict["protocol"], strict["lambda"]], sort=False).sum()
    table["reasoning_fitted"] = [int(fitted.get((p, lam), 0)) for p, lam in zip(table["protocol"], table["lambda"],
                                                                                strict=True)]
    numbers = {"profile": P.name, "seeds": len(d.seeds), "steps": P.steps, "sigma0": protocol.SIGMA0,
               "gamma": float(params["gamma"])}
    verdicts = {}
    for name in params["grid"]:
        t = table[table["protocol"] == name].set_index("lambda")
        v = verdicts[name] = protocol_check(t)
        tag = name.replace("-", "_")
        numbers.update({f"{tag}_both_fates": v.both_fates, f"{tag}_best_lambda": v.best_lambda,
                        f"{tag}_t_mem_none": v.t_mem_none, f"{tag}_t_mem_frac": v.t_mem_none / P.steps,
                        f"{tag}_fitted_regime": bool(v.none_memorizes and v.fitted_reasons),
                        f"{tag}_fitted_lambda": v.fitted_lambda,
                        f"{tag}_fitted_reasoning": int(t.loc[v.fitted_lambda, "reasoning_fitted"])
                        if not math.isnan(v.fitted_lambda) else 0})
        if not math.isnan(v.best_lambda):  # the best full-run cell, for text that outlives a growing grid
            numbers.update({f"{tag}_best_reasoning": int(t.loc[v.best_lambda, "reasoning"]),
                            f"{tag}_best_ood": float(t.loc[v.best_lambda, "final_ood"]),
                            f"{tag}_best_max_ood": float(t.loc[v.best_lambda, "max_ood"])})
        for lam in t.index:  # λ 2.25 -> "2p25": glue keys without dots
            key = f"{lam:g}".replace(".", "p")
            numbers[f"{tag}_ood_{key}"] = float(t.loc[lam, "final_ood"])
            numbers[f"{tag}_max_ood_{key}"] = float(t.loc[lam, "max_ood"])
            numbers[f"{tag}_reasoning_{key}"] = int(t.loc[lam, "reasoning"])
            numbers[f"{tag}_fitted_{key}"] = int(t.loc[lam, "reasoning_fitted"])
            numbers[f"{tag}_train_{key}"] = float(t.loc[lam, "final_train"])
    curves = []
    for name, v in verdicts.items():
        keep = (history["protocol"] == name) & history["lambda"].isin([0.0, v.best_lambda])
        for metric in ("acc/train", "acc/test_id", "acc/test_ood"):
            c = stats.mean_ci(history[keep], ["protocol", "lambda", "step"], metric)
            curves.append(c.assign(metric=metric.split("/")[1]))
    curves = pd.concat(curves, ignore_index=True)
    curves["condition"] = [("none" if lam == 0 else f"full λ = {lam:g}") for lam in curves["lambda"]]
    for _, r in init_table.iterrows():
        numbers[f"init_ood_{r['gamma']:g}"] = float(r["final_ood"])
        numbers[f"init_memorizing_{r['gamma']:g}"] = int(r["memorizes"])
    return CalibrationResult(rows=[], numbers=numbers, summary=d.summary, history=history, per_run=per_run, table=table,
                             curves=curves, init=init_table, verdicts=verdicts)
