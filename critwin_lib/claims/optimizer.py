"""Claim C12: does the critical window survive another optimizer? The paper says that under SGD with momentum the
window reproduces while constant weight decay does much worse than the window, a difference AdamW partly masks.
The anchor comparisons (`anchors.anchor_specs`) under AdamW and under the "sgd-mid-fit-matrices" protocol.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats
from critwin_lib.claims import anchors, fates, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import SUCCESS_OOD, ClaimResult, Design, condition_table, fetch, score_row, window_text
from critwin_lib.config import ConfigError, WDSchedule
from critwin_lib.schedules import schedule_frame
from critwin_lib.sizes import Size, get_profile

# ------------------------------------------------------------------------------------------ C12
CONTRASTS = {"middle − none": ("middle", "none"), "middle − full": ("middle", "full"),
             "full − none": ("full", "none"), "early − none": ("early", "none"), "late − none": ("late", "none")}


def paired_contrasts(per_run: pd.DataFrame, by: str) -> pd.DataFrame:
    """Per group of `by` and contrast: the mean over seeds of the paired difference of final OOD between two
    conditions (same seed: same init and batch order) and its bootstrap interval."""
    rows = []
    for g, r in per_run.groupby(by, sort=False):
        wide = r.pivot_table(index="seed", columns="name", values="final_ood")
        for name, (a, b) in CONTRASTS.items():
            d = (wide[a] - wide[b]).dropna().to_numpy()
            lo, hi = stats.bootstrap_ci(d)
            rows.append({by: g, "contrast": name, "mean": float(np.mean(d)) if len(d) else math.nan,
                         "lo": lo, "hi": hi, "n": len(d)})
    return pd.DataFrame(rows)


C12_PARTS = ("the window works under SGD", "constant much worse than the window under SGD",
             "AdamW masks part of it")


def c12_parts(per_run: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """C12's three parts on fates, paired by seed (same init and batch order under both optimizers):
    under SGD, more seeds reason with the middle window than without weight decay, and than with constant λ
    (exact one-sided McNemar tests); and the window's edge over the constant, per seed 1[middle reasons] −
    1[constant reasons], is larger under SGD than under AdamW (sign-flip test on the per-seed differences of the
    two). The three parts are one Holm family (since 2026-12-06: one rejecting part decides the verdict): a part
    holds at a Holm-adjusted p < α in the paper's direction and is rejected at an adjusted p < α in the other
    (`unadjusted`: each part at α alone, the rule before); the two McNemar parts are also rejected when Tango's
    95 % interval of the difference of shares lies below the paper's size (`rules.SIZE_WORKS`: "works" and "much
    worse" read as the paper's reasoning regime against chance)."""
    r = per_run.assign(ok=per_run["fate"] == "reasoning").pivot_table(
        index="seed", columns=["optimizer", "name"], values="ok", aggfunc="first").dropna().astype(bool)

    def mcnemar(a: pd.Series, b: pd.Series) -> dict[str, Any]:
        c = fates.beats("", a, b)
        _, p_more, p_less = fates.beats_counts(c.b, c.c)
        size = fates.reaches("", c, rules.SIZE_WORKS)
        return {"p": p_more, "p_other": p_less, "b": c.b, "c": c.c, "diff": c.diff, "hi": c.hi,
                "size_rejects": size.state == rules.REJECTED}

    sgd = {k: r[("SGD", k)] for k in ("middle", "none", "full")}
    edge = {o: r[(o, "middle")].astype(int) - r[(o, "full")].astype(int) for o in ("SGD", "AdamW")}
    diff = (edge["SGD"] - edge["AdamW"]).to_numpy(float)
    pg, pl = ((stats.sign_flip_test(diff, "greater"), stats.sign_flip_test(diff, "less")) if len(diff)
              else (math.nan, math.nan))
    masked = {"p": pg, "p_other": pl, "sgd_edge": float(edge["SGD"].mean()), "adamw_edge": float(edge["AdamW"].mean()),
              "size_rejects": False}
    parts = dict(zip(C12_PARTS, (mcnemar(sgd["middle"], sgd["none"]), mcnemar(sgd["middle"], sgd["full"]), masked),
                     strict=True))
    family = rules.holm_family({k: (v["p"], v["p_other"]) for k, v in parts.items()})
    for k, v in parts.items():
        state, v["p_holm"], _ = family[k]
        alone = rules.part_beats(v["p"], v["p_other"]) if not math.isnan(v["p"]) else rules.UNDECIDED
        v["no_size"] = alone  # the rule of 2026-12-01 to 2026-12-04: each part at α alone, no size
        v["state"] = rules.REJECTED if v["size_rejects"] else state
        v["unadjusted"] = rules.REJECTED if v["size_rejects"] else alone
    return parts


def mid_fit_lr(t_mem_by_lr: dict[float, float], steps: int) -> float:
    """The calibration criterion the AdamW protocol was chosen by: the learning rate whose mean t_mem without
    weight decay is nearest the middle of the run (runs that never fit the training set are out; a tie goes to
    the lower rate)."""
    fitted = {lr: t for lr, t in t_mem_by_lr.items() if math.isfinite(t)}
    if not fitted:
        return math.nan
    return min(fitted, key=lambda lr: (abs(fitted[lr] - steps / 2), lr))


@dataclass
class OptimizerDesign(Design):
    protos: dict[str, protocol.Protocol]
    onsets: list[float]
    places: dict[str, float]


def c12_design(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float, lr_grid: list,
               calibration_seeds: int, sgd_protocol: str = "sgd-mid-fit-matrices",
               adamw_protocol: str = protocol.DEFAULT_PROTOCOL) -> OptimizerDesign:
    """C12's runs: none / constant λ (the window's budget) / early, middle and late 25 % windows under AdamW
    and under SGD with momentum (coupled L2); plus the SGD learning-rate calibration (no weight decay at each
    lr of `lr_grid`, `calibration_seeds` seeds)."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    protos = {"AdamW": protocol.get_protocol(adamw_protocol, "adamw_protocol"),
              "SGD": protocol.get_protocol(sgd_protocol, "sgd_protocol")}
    if protos["SGD"].optimizer != "sgd" or protos["AdamW"].optimizer != "adamw":
        raise ConfigError(f"sgd_protocol: {sgd_protocol!r} must be an SGD protocol and adamw_protocol "
                          f"{adamw_protocol!r} an AdamW one")
    places = checks.placements(placements, window_frac, anchors.PLACEMENTS)
    onsets = checks.onset_fracs(list(places.values()), window_frac)
    places = anchors.checked_placements(places, onsets, window_frac)
    checks.positive_numbers(lr_grid, "lr_grid", "positive learning rates")
    cal_seeds = list(range(checks.count(calibration_seeds, "calibration_seeds")))
    specs = []
    for opt, pr in protos.items():
        specs += anchors.anchor_specs(P, seeds, gamma, pr.name, onsets, window_frac,
                                         {"optimizer": opt, "part": "conditions"})
    specs += [({"optimizer": "SGD", "part": "calibration", "lr": float(lr), "condition": "none", "onset": math.nan,
                "seed": s}, protocol.anchor_run(P, s, WDSchedule.none(), gamma=gamma, protocol=sgd_protocol,
                                                lr=float(lr)))
              for lr in lr_grid for s in cal_seeds]
    sgd = protos["SGD"]
    summary = protocol.in_words(
        f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds; AdamW ({adamw_protocol}, window λ "
               f"{protos['AdamW'].window_lambda:g}) and SGD ({sgd_protocol}: lr {sgd.lr:g}, window λ "
               f"{sgd.window_lambda:g}); SGD lr calibration {list(lr_grid)} × {calibration_seeds} seeds: "
               f"{len(specs)} runs")
    return OptimizerDesign(specs, summary, seeds, protos, onsets, places)


@dataclass
class OptimizerResult(ClaimResult):
    per_run: pd.DataFrame
    table: pd.DataFrame
    contrasts: pd.DataFrame
    calibration: pd.DataFrame
    calibration_runs: pd.DataFrame
    calibration_curves: pd.DataFrame
    curves: pd.DataFrame
    schedules_sgd: pd.DataFrame
    schedules_adamw: pd.DataFrame
    order: list[str]
    steps: int
    success: float


@dataclass
class _SgdCalibration:
    t_mem_by_lr: dict[float, float]  # mean t_mem without weight decay per learning rate (inf: a seed never fits)
    chosen: float  # the learning rate the mid-run fitting criterion picks (`mid_fit_lr`)
    table: pd.DataFrame
    runs: pd.DataFrame
    curves: pd.DataFrame


def _sgd_calibration(runs: pd.DataFrame, history: pd.DataFrame, steps: int) -> _SgdCalibration:
    """The SGD learning-rate calibration's runs, table and training curves, and the rate its criterion picks."""
    cal = runs[runs["part"] == "calibration"]
    t_mem_by_lr = {lr: float(g["t_mem"].mean()) if g["t_mem"].notna().all() else math.inf
                   for lr, g in cal.groupby("lr")}
    table = cal.groupby("lr").agg(t_mem=("t_mem", "mean"), fitted=("t_mem", lambda t: int(t.notna().sum())),
                                  seeds=("seed", "count"), final_train=("final_train", "mean"),
                                  final_ood=("final_ood", "mean")).reset_index()
    hist = history[history["part"] == "calibration"]
    curves = stats.mean_ci(hist.assign(condition=hist["lr"].map(lambda v: f"lr {v:g}")), ["condition", "step"],
                           "acc/train")
    return _SgdCalibration(t_mem_by_lr, mid_fit_lr(t_mem_by_lr, steps), table, cal, curves)


def c12(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> OptimizerResult:
    """C12: the anchor comparisons under AdamW and under SGD with momentum, and the SGD lr calibration; the
    verdict combines `c12_parts` (the page states the rule before its runs)."""
    d = c12_design(**params)
    P = get_profile(params["profile"])
    history, runs = fetch(d.specs, results_dir, train_missing, workers)
    cal = _sgd_calibration(runs, history, P.steps)
    per_run = runs[runs["part"] == "conditions"].copy()
    per_run["name"] = anchors.name_placements(per_run, P, d.places)
    contrasts = paired_contrasts(per_run, "optimizer")
    parts = c12_parts(per_run)
    table = condition_table(per_run, ["optimizer", "name"])
    numbers = _c12_numbers(params, d, P, parts, contrasts, table, cal)
    row = _c12_row(numbers, table, parts, len(d.seeds))
    numbers["ours"] = row["ours"]
    hist = history[history["part"] == "conditions"].copy()
    hist["name"] = anchors.name_placements(hist, P, d.places)
    curves = stats.mean_ci(hist, ["optimizer", "name", "step"], "acc/test_ood").rename(columns={"name": "condition"})
    order = ["none", "full", "early", "middle", "late"]
    sched = {opt: schedule_frame(dict(zip(order, _ordered_schedules(P, pr, d.onsets, d.places, params["window_frac"]),
                                          strict=True)), P.steps) for opt, pr in d.protos.items()}
    return OptimizerResult(rows=[row], numbers=numbers, summary=d.summary, per_run=per_run, table=table,
                           contrasts=contrasts, calibration=cal.table, calibration_runs=cal.runs,
                           calibration_curves=cal.curves, curves=curves, schedules_sgd=sched["SGD"],
                           schedules_adamw=sched["AdamW"], order=order, steps=P.steps, success=SUCCESS_OOD)


def _c12_numbers(params: dict[str, Any], d: OptimizerDesign, P: Size, parts: dict[str, dict[str, Any]],
                 contrasts: pd.DataFrame, table: pd.DataFrame, cal: _SgdCalibration) -> dict[str, Any]:
    """C12's glued numbers: the parts, the rules before (means; no size), the calibration, per optimizer and
    condition."""
    sgd, protos = d.protos["SGD"], d.protos
    c = contrasts.set_index(["optimizer", "contrast"])
    works = float(c.loc[("SGD", "middle − none"), "mean"]) >= anchors.PERSISTS
    gap_sgd, gap_adamw = (float(c.loc[(o, "middle − full"), "mean"]) for o in ("SGD", "AdamW"))
    much_worse = gap_sgd >= anchors.PERSISTS and gap_sgd > gap_adamw
    works_p, worse_p, masked_p = (parts[k] for k in C12_PARTS)
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": rules.combine({k: v["state"]
                                                                                   for k, v in parts.items()}),
               "old_rule_verdict": rule_history.verdict_c12(works, much_worse),  # before 2026-12-01, on means
               "no_size_verdict": rules.combine({k: v["no_size"] for k, v in parts.items()}),
               "unadjusted_verdict": rules.combine({k: v["unadjusted"] for k, v in parts.items()}),
               "size": rules.SIZE_WORKS, "hi_works": works_p["hi"],
               "hi_worse": worse_p["hi"], "diff_works": works_p["diff"], "diff_worse": worse_p["diff"],
               "window_works": works, "constant_much_worse": much_worse,
               "part_works": works_p["state"], "p_works": works_p["p"], "b_works": works_p["b"],
               "c_works": works_p["c"], "part_worse": worse_p["state"], "p_worse": worse_p["p"],
               "b_worse": worse_p["b"], "c_worse": worse_p["c"], "part_masked": masked_p["state"],
               "p_masked": masked_p["p"], "p_works_holm": works_p["p_holm"], "p_worse_holm": worse_p["p_holm"],
               "p_masked_holm": masked_p["p_holm"],
               "sgd_edge": masked_p["sgd_edge"], "adamw_edge": masked_p["adamw_edge"],
               "sgd_lr": sgd.lr, "sgd_window_lambda": sgd.window_lambda,
               "sgd_full_lambda": sgd.window_lambda * params["window_frac"], "adamw_lr": protos["AdamW"].lr,
               "adamw_window_lambda": protos["AdamW"].window_lambda, "criterion_lr": cal.chosen,
               "calibration_agrees": bool(cal.chosen == sgd.lr),
               "lr_grid": ", ".join(f"{v:g}" for v in params["lr_grid"]),
               "calibration_seeds": params["calibration_seeds"], "momentum": config.SGD_MOMENTUM}
    for lr, t in cal.t_mem_by_lr.items():
        numbers[f"t_mem_lr_{lr:g}".replace(".", "p")] = t
    for (opt, name), v in c["mean"].items():
        tag = name.replace(" − ", "_minus_")
        numbers[f"{opt.lower()}_{tag}"] = float(v)
        numbers[f"{opt.lower()}_{tag}_lo"] = float(c.loc[(opt, name), "lo"])
        numbers[f"{opt.lower()}_{tag}_hi"] = float(c.loc[(opt, name), "hi"])
    for _, r in table.iterrows():
        numbers[f"{r['optimizer'].lower()}_ood_{r['name']}"] = float(r["final_ood"])
        numbers[f"{r['optimizer'].lower()}_t_mem_{r['name']}"] = float(r["t_mem"])
    start, end = protocol.window_steps(P, d.places["middle"], params["window_frac"])
    numbers["middle_window"] = window_text(start, end)
    return numbers


def _c12_row(numbers: dict[str, Any], table: pd.DataFrame, parts: dict[str, dict[str, Any]], n: int
             ) -> dict[str, Any]:
    works_p, worse_p, masked_p = (parts[k] for k in C12_PARTS)
    k = table.set_index(["optimizer", "name"])["reasoning"]
    fates = "; ".join(f"{o}: middle {int(k[(o, 'middle')])}, full {int(k[(o, 'full')])}, none "
                      f"{int(k[(o, 'none')])}" for o in ("SGD", "AdamW"))
    return score_row("C12", "the window reproduces under SGD with momentum; there constant WD is much worse than "
                     "windowed, which AdamW partly masks",
                     "SGD: window works, constant much worse; AdamW masks part of it",
                     f"reasoning seeds of {n}: {fates} (McNemar p: window vs none under SGD "
                     f"{works_p['p']:.2f}, vs constant {worse_p['p']:.2f}; masked by AdamW, sign-flip p "
                     f"{masked_p['p']:.2f}); SGD lr {numbers['sgd_lr']:g}", numbers["profile"], n, numbers["verdict"])


def _ordered_schedules(P: Size, pr: protocol.Protocol, onsets: list[float], places: dict[str, float],
                       window_frac: float) -> list[WDSchedule]:
    conds = anchors.anchor_conditions(P, onsets, window_frac, pr.window_lambda)
    by_onset = {o: wd for _, o, wd in conds[2:]}
    return [conds[0][2], conds[1][2], *(by_onset[float(P.step_at(places[k]))] for k in ("early", "middle", "late"))]
