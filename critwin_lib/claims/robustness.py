"""Claims C11 and C12: does the critical window survive a deeper model and another optimizer? The paper says
that with 4 layers the phenomenon persists with a lower reasoning plateau and more variance across seeds
(C11), and that under SGD with momentum the window reproduces while constant weight decay does much worse
than the window, a difference AdamW partly masks (C12).

Both repeat the anchor comparisons (no weight decay, constant λ over the run with the window's budget, one
25 % window at several onsets) through `protocol.anchor_run`: C11 with `ModelConfig(n_layer=4)`, C12 under
the "sgd-mid-fit-matrices" protocol. The 2-layer AdamW runs are the ones the C1-C4 pages use (same keys).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, schedules, stats
from critwin_lib.claims import fates, onsets, rules
from critwin_lib.claims.core import SUCCESS_OOD, ClaimResult, Design, Spec, condition_table, fetch, score_row
from critwin_lib.config import ConfigError, ModelConfig, WDSchedule
from critwin_lib.schedules import schedule_frame
from critwin_lib.sizes import Size, get_profile

PERSISTS = rules.WORKS  # the window "works" when a window's mean final OOD is at least this above no weight decay
PLACEMENTS = ("early", "middle", "late")


def _placements(placements: Any, onsets: list[float], window_frac: float) -> dict[str, float]:
    """{name: onset fraction} for early / middle / late; each must be one of the swept onsets."""
    placements = checks.placements(placements, window_frac, PLACEMENTS)
    missing = [f"{k} {v!r}" for k, v in placements.items() if v not in onsets]
    if missing:
        raise ConfigError(f"placements: {', '.join(missing)} is not among onset_fracs {onsets}")
    return {k: float(v) for k, v in placements.items()}


def anchor_conditions(P: Size, onset_fracs: list[float], window_frac: float, window_lambda: float
                      ) -> list[tuple[str, float, WDSchedule]]:
    """(condition, onset step or NaN, schedule): no weight decay, constant λ with the windows' budget, and one
    window at λ `window_lambda` per onset."""
    windows = [(o, protocol.window(P, o, window_frac, window_lambda)) for o in onset_fracs]
    budget = schedules.budget(windows[0][1], P.steps)
    out = [("none", math.nan, WDSchedule.none()), ("full", math.nan, protocol.full_run(budget / P.steps))]
    return out + [("window", float(wd.windows[0][0]), wd) for _, wd in windows]


def _specs(P: Size, seeds: list[int], gamma: float, proto: str, onset_fracs: list[float],
           window_frac: float, label: dict[str, Any], model: ModelConfig | None = None) -> list[Spec]:
    pr = protocol.get_protocol(proto)
    return [({**label, "condition": c, "onset": o, "seed": s},
             protocol.anchor_run(P, s, wd, gamma=gamma, model=model, protocol=proto))
            for c, o, wd in anchor_conditions(P, onset_fracs, window_frac, pr.window_lambda) for s in seeds]


def name_placements(frame: pd.DataFrame, P: Size, placements: dict[str, float]) -> pd.Series:
    """'none', 'full', 'early' / 'middle' / 'late' or 'onset <step>' per row (runs or history rows)."""
    names = {P.step_at(f): k for k, f in placements.items()}
    out = frame["condition"].astype(object).copy()
    win = frame["condition"] == "window"
    out[win] = frame.loc[win, "onset"].map(lambda o: names.get(int(o), f"onset {int(o)}"))
    return out


def _pooled_sd(per_run: pd.DataFrame, seeds: np.ndarray | None = None) -> float:
    """Mean over windowed conditions of the across-seed standard deviation of final OOD (seeds: a resample)."""
    w = per_run[per_run["condition"] == "window"].pivot_table(index="seed", columns="onset", values="final_ood")
    if seeds is not None:
        w = w.iloc[seeds]
    return float(w.std(ddof=1).mean())


def spread_ci(per_run: pd.DataFrame, n_boot: int = stats.N_BOOT, seed: int = 0) -> tuple[float, float, float]:
    """Seed variance of the window's outcome: the pooled across-seed sd of final OOD over the onsets, and its
    bootstrap interval over seeds (a seed keeps its runs at every onset)."""
    n = per_run["seed"].nunique()
    rng = np.random.default_rng(seed)
    boots = [_pooled_sd(per_run, rng.integers(0, n, n)) for _ in range(n_boot)]
    alpha = (1 - stats.LEVEL) / 2
    return _pooled_sd(per_run), float(np.nanquantile(boots, alpha)), float(np.nanquantile(boots, 1 - alpha))


# ------------------------------------------------------------------------------------------ C11
C11_PARTS = ("the window persists (onset dependence)", "lower plateau", "more seed variance")


def c11_parts(per_run: pd.DataFrame, ref: int, deep: int, n_boot: int = stats.N_BOOT, seed: int = 0
              ) -> dict[str, dict[str, Any]]:
    """C11's parts at the deeper model, from the window runs (layers, onset, seed, fate, final_ood; seeds shared
    by both depths): onset dependence by the C4 rule (the reasoning share's edge in ≥ 95 % of resamples over
    seeds holds, ≤ 5 % rejected); a lower plateau (per seed, mean final OOD over onsets, deep − reference, below
    0 on a sign-flip test; above 0 rejects); more seed variance (pooled across-seed sd, deep − reference, its
    bootstrap over seeds above 0 holds, below 0 rejects)."""
    w = per_run[per_run["condition"] == "window"]
    deep_runs = w[w["layers"] == deep]
    edge = onsets.share_edge(deep_runs)
    level = w.pivot_table(index="seed", columns="layers", values="final_ood", aggfunc="mean").dropna()
    diff = (level[deep] - level[ref]).to_numpy(float)
    p_lower, p_higher = stats.sign_flip_test(diff, "less"), stats.sign_flip_test(diff, "greater")
    seeds = np.array(sorted(level.index))
    by = {d: w[w["layers"] == d].pivot_table(index="seed", columns="onset", values="final_ood").loc[seeds]
          for d in (ref, deep)}

    def sd_gap(idx: np.ndarray) -> float:
        return float(by[deep].iloc[idx].std(ddof=1).mean() - by[ref].iloc[idx].std(ddof=1).mean())

    rng = np.random.default_rng(seed)
    boots = np.array([sd_gap(rng.integers(0, len(seeds), len(seeds))) for _ in range(n_boot)])
    lo, hi = (float(np.nanquantile(boots, q)) for q in ((1 - stats.LEVEL) / 2, 1 - (1 - stats.LEVEL) / 2))
    spread = rules.HOLDS if lo > 0 else (rules.REJECTED if hi < 0 else rules.UNDECIDED)
    return dict(zip(C11_PARTS, (
        {"state": rules.part_found(edge.found), "found": edge.found, "edge": edge.edge},
        {"state": rules.part_beats(p_lower, p_higher), "diff": float(np.mean(diff)) if len(diff) else math.nan,
         "p": p_lower},
        {"state": spread, "diff": sd_gap(np.arange(len(seeds))), "lo": lo, "hi": hi}), strict=True))


@dataclass
class DepthDesign(Design):
    depths: list[int]
    places: dict[str, float]


def c11_design(*, profile: str, n_seeds: int, gamma: float, depths: list, onset_fracs: list, placements: dict,
               window_frac: float, protocol_name: str = "") -> DepthDesign:
    """C11's runs: none, constant λ with the windows' budget and a window at every onset, at each depth of
    `depths` (the first is the reference, the anchor's 2 layers)."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    protocol.get_protocol(protocol_name, "protocol_name")
    if (not isinstance(depths, list | tuple) or len(depths) != 2
            or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in depths)
            or depths[0] == depths[1]):
        raise ConfigError(f"depths: must be two different layer counts [reference, deeper], got {depths!r}")
    onsets = checks.onset_fracs(onset_fracs, window_frac)
    places = _placements(placements, onsets, window_frac)
    specs = []
    for d in depths:
        model = ModelConfig(n_layer=d, init_gamma=gamma, init_sigma0=protocol.SIGMA0)
        specs += _specs(P, seeds, gamma, protocol_name, onsets, window_frac, {"layers": d}, model)
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, layers "
               f"{' and '.join(map(str, depths))}, onsets {[P.step_at(f) for f in onsets]}: {len(specs)} runs")
    return DepthDesign(specs, summary, seeds, list(depths), places, protocol=protocol_name)


@dataclass
class DepthResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    onset_table: pd.DataFrame
    side_by_side: pd.DataFrame
    curves: pd.DataFrame
    steps: int
    depths: list[int]
    placements: dict[str, float]


def c11(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> DepthResult:
    """C11: the C1 and C2/C3 comparisons and an onset sweep at each depth. Plateau = the best onset's mean
    final OOD; seed variance = the pooled across-seed sd of final OOD over the onsets. Rule in the notebook."""
    design = c11_design(**params)
    P = get_profile(params["profile"])
    seeds, depths, places = design.seeds, design.depths, design.places
    protocol_name = design.protocol
    pr = protocol.get_protocol(protocol_name)
    history, per_run = fetch(design.specs, results_dir, train_missing, workers)
    per_run["name"] = name_placements(per_run, P, places)
    per_run["depth"] = per_run["layers"].map(lambda d: f"{d} layers")
    by_depth, numbers = {}, {"profile": P.name, "seeds": len(seeds), "protocol": protocol_name,
                             "window_lambda": pr.window_lambda, "depths": " and ".join(map(str, depths))}
    tables = []
    for d in depths:
        r = per_run[per_run["layers"] == d]
        t = condition_table(r, ["name"]).set_index("name")
        onset_t = condition_table(r[r["condition"] == "window"], ["onset"]).sort_values("onset")
        best = onset_t.loc[onset_t["final_ood"].idxmax()]
        sd, sd_lo, sd_hi = spread_ci(r)
        N, F = float(t.loc["none", "final_ood"]), float(t.loc["full", "final_ood"])
        E, M, L = (float(t.loc[k, "final_ood"]) for k in ("early", "middle", "late"))
        v = {"N": N, "F": F, "E": E, "M": M, "L": L, "plateau": float(best["final_ood"]),
             "plateau_lo": float(best["ood_lo"]), "plateau_hi": float(best["ood_hi"]),
             "plateau_onset": float(best["onset"]), "sd": sd, "sd_lo": sd_lo, "sd_hi": sd_hi,
             "reasoning": int(onset_t["reasoning"].sum()), "windowed": int(onset_t["seeds"].sum()),
             "c1": rules.verdict_c01(M, F, N), "c2": rules.verdict_c02(M, E, N),
             "c3": rules.verdict_c03(E, L, N, M)}
        by_depth[d] = v
        numbers.update({f"{k}_{d}": val for k, val in v.items()})
        tables.append(onset_t.assign(layers=d, depth=f"{d} layers"))
    ref, deep = (by_depth[d] for d in depths)
    persists = deep["plateau"] >= deep["N"] + PERSISTS
    lower, spread = deep["plateau"] < ref["plateau"], deep["sd"] > ref["sd"]
    old_verdict = rules.verdict_c11(persists, lower, spread)  # the rule before #10, on means
    parts = c11_parts(per_run, depths[0], depths[1])
    verdict = rules.combine({k: v["state"] for k, v in parts.items()})
    dep, low, var = (parts[k] for k in C11_PARTS)
    numbers.update({"verdict": verdict, "old_rule_verdict": old_verdict, "persists": persists,
                    "lower_plateau": lower, "more_spread": spread, "part_persists": dep["state"],
                    "edge_found": dep["found"], "part_lower": low["state"], "level_diff": low["diff"],
                    "p_lower": low["p"], "part_spread": var["state"], "sd_diff": var["diff"], "sd_diff_lo": var["lo"],
                    "sd_diff_hi": var["hi"]})

    def part(d: int) -> str:
        v = by_depth[d]
        return (f"{d} layers: plateau {v['plateau']:.2f} [{v['plateau_lo']:.2f}, {v['plateau_hi']:.2f}] "
                f"(onset {v['plateau_onset']:.0f}), none {v['N']:.2f}, seed sd {v['sd']:.2f} "
                f"[{v['sd_lo']:.2f}, {v['sd_hi']:.2f}]")
    row = score_row("C11", "with 4 layers the window persists, with a lower plateau and more variance across seeds",
                    "lower plateau, higher seed variance (no numbers)",
                    f"{part(depths[1])}; {part(depths[0])}; {depths[1]} layers: an onset edge in "
                    f"{dep['found']:.0%} of resamples; mean OOD over onsets {low['diff']:+.2f} (sign-flip p "
                    f"{low['p']:.2f}); seed sd {var['diff']:+.2f} [{var['lo']:+.2f}, {var['hi']:+.2f}]",
                    P.name, len(seeds), verdict)
    numbers["ours"] = row["ours"]
    side = pd.DataFrame([{"layers": d, **by_depth[d]} for d in depths])
    history["name"] = name_placements(history, P, places)
    curves = stats.mean_ci(history, ["layers", "name", "step"], "acc/test_ood").rename(columns={"name": "condition"})
    return DepthResult([row], numbers, design.summary, history, per_run, pd.concat(tables, ignore_index=True), side,
                       curves, P.steps, depths, places)


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
    two). Each part holds at p < α in the paper's direction and is rejected at p < α in the other."""
    r = per_run.assign(ok=per_run["fate"] == "reasoning").pivot_table(
        index="seed", columns=["optimizer", "name"], values="ok", aggfunc="first").dropna().astype(bool)

    def mcnemar(a: pd.Series, b: pd.Series) -> dict[str, Any]:
        c = fates.beats("", a, b)
        return {"state": c.state, "p": c.p, "b": c.b, "c": c.c}

    sgd = {k: r[("SGD", k)] for k in ("middle", "none", "full")}
    edge = {o: r[(o, "middle")].astype(int) - r[(o, "full")].astype(int) for o in ("SGD", "AdamW")}
    diff = (edge["SGD"] - edge["AdamW"]).to_numpy(float)
    pg, pl = stats.sign_flip_test(diff, "greater"), stats.sign_flip_test(diff, "less")
    masked = {"state": rules.part_beats(pg, pl) if len(diff) else rules.UNDECIDED, "p": pg,
              "sgd_edge": float(edge["SGD"].mean()), "adamw_edge": float(edge["AdamW"].mean())}
    return dict(zip(C12_PARTS, (mcnemar(sgd["middle"], sgd["none"]), mcnemar(sgd["middle"], sgd["full"]), masked),
                    strict=True))


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
    places = checks.placements(placements, window_frac, PLACEMENTS)
    onsets = checks.onset_fracs(list(places.values()), window_frac)
    places = _placements(places, onsets, window_frac)
    checks.positive_numbers(lr_grid, "lr_grid", "positive learning rates")
    cal_seeds = list(range(checks.count(calibration_seeds, "calibration_seeds")))
    specs = []
    for opt, pr in protos.items():
        specs += _specs(P, seeds, gamma, pr.name, onsets, window_frac, {"optimizer": opt, "part": "conditions"})
    specs += [({"optimizer": "SGD", "part": "calibration", "lr": float(lr), "condition": "none", "onset": math.nan,
                "seed": s}, protocol.anchor_run(P, s, WDSchedule.none(), gamma=gamma, protocol=sgd_protocol,
                                                lr=float(lr)))
              for lr in lr_grid for s in cal_seeds]
    sgd = protos["SGD"]
    summary = (f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds; AdamW ({adamw_protocol}, window λ "
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


def c12(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> OptimizerResult:
    """C12: the anchor comparisons under AdamW and under SGD with momentum, and the SGD lr calibration.
    Rule in the notebook."""
    d = c12_design(**params)
    P = get_profile(params["profile"])
    seeds, protos, onsets, places = d.seeds, d.protos, d.onsets, d.places
    window_frac, lr_grid, calibration_seeds = params["window_frac"], params["lr_grid"], params["calibration_seeds"]
    history, runs = fetch(d.specs, results_dir, train_missing, workers)
    sgd = protos["SGD"]
    cal = runs[runs["part"] == "calibration"]
    t_mem_by_lr = {lr: float(g["t_mem"].mean()) if g["t_mem"].notna().all() else math.inf
                   for lr, g in cal.groupby("lr")}
    chosen = mid_fit_lr(t_mem_by_lr, P.steps)
    cal_table = cal.groupby("lr").agg(t_mem=("t_mem", "mean"), fitted=("t_mem", lambda t: int(t.notna().sum())),
                                      seeds=("seed", "count"), final_train=("final_train", "mean"),
                                      final_ood=("final_ood", "mean")).reset_index()
    cal_hist = history[history["part"] == "calibration"]
    cal_curves = stats.mean_ci(cal_hist.assign(condition=cal_hist["lr"].map(lambda v: f"lr {v:g}")),
                               ["condition", "step"], "acc/train")
    per_run = runs[runs["part"] == "conditions"].copy()
    per_run["name"] = name_placements(per_run, P, places)
    contrasts = paired_contrasts(per_run, "optimizer")
    c = contrasts.set_index(["optimizer", "contrast"])
    works = float(c.loc[("SGD", "middle − none"), "mean"]) >= PERSISTS
    gap_sgd, gap_adamw = (float(c.loc[(o, "middle − full"), "mean"]) for o in ("SGD", "AdamW"))
    much_worse = gap_sgd >= PERSISTS and gap_sgd > gap_adamw
    old_verdict = rules.verdict_c12(works, much_worse)  # the rule before #10, on mean OOD differences
    parts = c12_parts(per_run)
    verdict = rules.combine({k: v["state"] for k, v in parts.items()})
    table = condition_table(per_run, ["optimizer", "name"])
    works_p, worse_p, masked_p = (parts[k] for k in C12_PARTS)
    numbers = {"profile": P.name, "seeds": len(seeds), "verdict": verdict, "old_rule_verdict": old_verdict,
               "window_works": works, "constant_much_worse": much_worse,
               "part_works": works_p["state"], "p_works": works_p["p"], "b_works": works_p["b"],
               "c_works": works_p["c"], "part_worse": worse_p["state"], "p_worse": worse_p["p"],
               "b_worse": worse_p["b"], "c_worse": worse_p["c"], "part_masked": masked_p["state"],
               "p_masked": masked_p["p"], "sgd_edge": masked_p["sgd_edge"], "adamw_edge": masked_p["adamw_edge"],
               "sgd_lr": sgd.lr, "sgd_window_lambda": sgd.window_lambda,
               "sgd_full_lambda": sgd.window_lambda * window_frac, "adamw_lr": protos["AdamW"].lr,
               "adamw_window_lambda": protos["AdamW"].window_lambda, "criterion_lr": chosen,
               "calibration_agrees": bool(chosen == sgd.lr), "lr_grid": ", ".join(f"{v:g}" for v in lr_grid),
               "calibration_seeds": calibration_seeds, "momentum": config.SGD_MOMENTUM}
    for lr, t in t_mem_by_lr.items():
        numbers[f"t_mem_lr_{lr:g}".replace(".", "p")] = t
    for (opt, name), v in c["mean"].items():
        tag = name.replace(" − ", "_minus_")
        numbers[f"{opt.lower()}_{tag}"] = float(v)
        numbers[f"{opt.lower()}_{tag}_lo"] = float(c.loc[(opt, name), "lo"])
        numbers[f"{opt.lower()}_{tag}_hi"] = float(c.loc[(opt, name), "hi"])
    for _, r in table.iterrows():
        numbers[f"{r['optimizer'].lower()}_ood_{r['name']}"] = float(r["final_ood"])
        numbers[f"{r['optimizer'].lower()}_t_mem_{r['name']}"] = float(r["t_mem"])
    start, end = protocol.window_steps(P, places["middle"], window_frac)
    numbers["middle_window"] = f"[{start:,}, {end:,})"

    def fmt(opt: str) -> str:
        o = opt.lower()
        return (f"{opt}: window {numbers[o + '_ood_middle']:.2f}, full {numbers[o + '_ood_full']:.2f}, none "
                f"{numbers[o + '_ood_none']:.2f} (window − full {numbers[o + '_middle_minus_full']:+.2f} "
                f"[{numbers[o + '_middle_minus_full_lo']:+.2f}, {numbers[o + '_middle_minus_full_hi']:+.2f}])")
    k = table.set_index(["optimizer", "name"])["reasoning"]
    fates = "; ".join(f"{o}: middle {int(k[(o, 'middle')])}, full {int(k[(o, 'full')])}, none "
                      f"{int(k[(o, 'none')])}" for o in ("SGD", "AdamW"))
    row = score_row("C12", "the window reproduces under SGD with momentum; there constant WD is much worse than "
                    "windowed, which AdamW partly masks",
                    "SGD: window works, constant much worse; AdamW masks part of it",
                    f"reasoning seeds of {len(seeds)}: {fates} (McNemar p: window vs none under SGD "
                    f"{works_p['p']:.2f}, vs constant {worse_p['p']:.2f}; masked by AdamW, sign-flip p "
                    f"{masked_p['p']:.2f}); SGD lr {sgd.lr:g}", P.name, len(seeds), verdict)
    numbers["ours"] = row["ours"]
    hist = history[history["part"] == "conditions"].copy()
    hist["name"] = name_placements(hist, P, places)
    curves = stats.mean_ci(hist, ["optimizer", "name", "step"], "acc/test_ood").rename(columns={"name": "condition"})
    order = ["none", "full", "early", "middle", "late"]
    sched = {opt: schedule_frame(dict(zip(order, _ordered_schedules(P, pr, onsets, places, window_frac),
                                          strict=True)), P.steps) for opt, pr in protos.items()}
    return OptimizerResult([row], numbers, d.summary, per_run, table, contrasts, cal_table, cal, cal_curves, curves,
                           sched["SGD"], sched["AdamW"], order, P.steps, SUCCESS_OOD)


def _ordered_schedules(P: Size, pr: protocol.Protocol, onsets: list[float], places: dict[str, float],
                       window_frac: float) -> list[WDSchedule]:
    conds = anchor_conditions(P, onsets, window_frac, pr.window_lambda)
    by_onset = {o: wd for _, o, wd in conds[2:]}
    return [conds[0][2], conds[1][2], *(by_onset[float(P.step_at(places[k]))] for k in ("early", "middle", "late"))]
