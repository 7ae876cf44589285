"""Instrumentation, C13: do reasoning and memorizing runs differ in condensation, stable rank, embedding
order and subspace alignment (the measurements of `metrics.instrument`, logged at every evaluation)?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats
from critwin_lib.claims import history as rule_history
from critwin_lib.claims import rules
from critwin_lib.claims.core import ClaimResult, Design, fetch
from critwin_lib.sizes import get_profile

C13_METRICS = {
    "acc/test_ood": "OOD accuracy",
    "ci/wq1": "condensation index of W_Q (layer 1)",
    "srank/embed": "stable rank of the key embeddings",
    "srank/wq1": "stable rank of W_Q (layer 1)",
    "order/embed": "embedding order |ρ(PC1, value)|",
    "align/embed_resid": "alignment: key embeddings vs OOD residual stream",
    "align/anchor_ov": "alignment: anchor differences vs layer-1 OV",
}


C13_MIN_RUNS = 12  # runs of each fate, among runs of one weight-decay exposure, before a contrast can decide
POOLED = "every window run, pooled (the rule)"  # the sensitivity table's rows that the numbers read by name
STRATIFIED = "every window run, fates permuted within placement"


def c13_design(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float,
               protocol_name: str = "") -> Design:
    """C13's runs, instrumented: no weight decay and a window at each placement ({name: start fraction}; all
    carry the same λ and length, so the same weight-decay exposure), same seeds."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    places = checks.placements(placements, window_frac)
    conds = {"none": config.WDSchedule.none(),
             **{name: protocol.window(P, start, window_frac, pr.window_lambda) for name, start in places.items()}}
    specs = [({"condition": c, "seed": s},
              protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name, instrument=True))
             for c, wd in conds.items() for s in seeds]
    return Design(specs, f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} instrumented runs",
                  seeds, protocol=protocol_name)


@dataclass
class InstrumentResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    by_fate: pd.DataFrame  # the rule's contrast: reasoning vs memorizing runs among the window runs
    fate_curves: pd.DataFrame  # the measurements over training, window runs grouped by fate (mean and band over runs)
    fate_counts: pd.DataFrame  # runs of each fate per condition
    sensitivity: pd.DataFrame  # the rule pooled, with fates permuted within placement, and per placement


def c13(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> InstrumentResult:
    """C13: the structural measurements over training, for no weight decay and a window at each placement
    (same seeds); the rule contrasts the window runs by fate, the rule before 2026-12-01 the first placement
    with none."""
    d = c13_design(**params)
    P = get_profile(params["profile"])
    proto = d.protocol
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    last = history[history["step"] == P.steps].merge(per_run[["condition", "seed", "fate"]],
                                                     on=["condition", "seed"])
    first = next(c for c in per_run["condition"].unique() if c != "none")
    diffs, rows = {}, []
    for k in C13_METRICS:  # the rule before 2026-12-01: the first window minus none, paired by seed
        w = last[last["condition"] == first].set_index("seed")[k]
        n = last[last["condition"] == "none"].set_index("seed")[k]
        diff = (w - n.reindex(w.index)).to_numpy()
        lo, hi = stats.bootstrap_ci(diff)
        diffs[k] = (float(np.mean(diff)), lo, hi)
        rows.append({"metric": C13_METRICS[k], "key": k, "window": float(w.mean()), "none": float(n.mean()),
                     "difference": float(np.mean(diff)), "lo": lo, "hi": hi,
                     "predicted sign": {1: "+", -1: "−"}.get(rules.C13_DIRECTION.get(k, 0), "")})
    agree = [C13_METRICS[k] for k in rules.agreeing_c13(diffs)]
    old_verdict = rule_history.verdict_c13(len(agree))
    windowed_end = last[last["condition"] != "none"]
    exposure = {k: m for k, (m, _, _) in diffs.items()}  # the first window minus none: what weight decay moves
    by_fate = fate_contrasts(windowed_end, exposure=exposure)
    parts = {C13_METRICS[k]: by_fate.loc[k, "part"] for k in rules.C13_DIRECTION}
    verdict = rules.combine(parts)
    sensitivity = c13_sensitivity(windowed_end, pooled=by_fate, exposure=exposure)
    flips = sensitivity[sensitivity["verdict"] != verdict]
    ood = {r["key"]: r for r in rows}["acc/test_ood"]
    n_r, n_m = int(by_fate["reasoning runs"].iloc[0]), int(by_fate["memorizing runs"].iloc[0])
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "old_rule_verdict": old_verdict,
               "n_agree": len(agree), "n_reasoning": n_r, "n_memorizing": n_m, "min_runs": C13_MIN_RUNS,
               "n_hold": sum(v == rules.HOLDS for v in parts.values()),
               "n_rejected": sum(v == rules.REJECTED for v in parts.values()),
               "protocol": proto, "window_lambda": protocol.get_protocol(proto).window_lambda,
               "ood_window": ood["window"], "ood_none": ood["none"],
               "stratified_verdict": sensitivity.set_index("analysis").at[STRATIFIED, "verdict"],
               "sensitivity_text": ("the verdict is the same under every analysis of the sensitivity table"
                                    if flips.empty else "the verdict differs: " + "; ".join(
                                        f"{r.analysis}: {r.verdict}" for r in flips.itertuples()))}
    for k, (m, lo, hi) in diffs.items():
        key = k.replace("/", "_")
        numbers.update({f"d_{key}": m, f"d_{key}_lo": lo, f"d_{key}_hi": hi})
    for k in rules.C13_DIRECTION:  # the rule's contrast, reasoning minus memorizing window runs
        f, key = by_fate.loc[k], k.replace("/", "_")
        numbers.update({f"fate_d_{key}": float(f["difference"]), f"fate_d_{key}_lo": float(f["lo"]),
                        f"fate_d_{key}_hi": float(f["hi"]), f"fate_p_{key}": float(f["p (predicted)"])})
    numbers.update({"n_window_runs": len(windowed_end), "n_other": len(windowed_end) - n_r - n_m,
                    "memorizing_share": n_m / len(windowed_end) if len(windowed_end) else math.nan,
                    "floor_text": floor_text(n_r, n_m, len(windowed_end))})
    row = {"claim": "C13", "statement": "reasoning and memorizing runs differ in condensation, stable rank, "
                                        "embedding order and subspace alignment",
           "paper": "metrics named, values not given",
           "ours": f"window runs by fate: {n_r} reasoning vs {n_m} memorizing (≥ {C13_MIN_RUNS} each needed); "
                   f"predicted differences that hold: {numbers['n_hold']} of {len(parts)}",
           "profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    long = history.melt(id_vars=["condition", "seed", "step"], value_vars=list(C13_METRICS),
                        var_name="key", value_name="value")
    curves = stats.mean_ci(long, ["condition", "key", "step"], "value")
    curves["metric"] = curves["key"].map(C13_METRICS)
    windowed = long[long["condition"] != "none"].merge(per_run[["condition", "seed", "fate"]], on=["condition", "seed"])
    fate_curves = stats.mean_ci(windowed, ["fate", "key", "step"], "value")
    fate_curves["metric"] = fate_curves["key"].map(C13_METRICS)
    counts = pd.crosstab(per_run["condition"], per_run["fate"]).reindex(list(dict.fromkeys(per_run["condition"])))
    return InstrumentResult(rows=[row], numbers=numbers, summary=d.summary, history=history, per_run=per_run,
                            table=pd.DataFrame(rows), curves=curves, by_fate=by_fate, fate_curves=fate_curves,
                            fate_counts=counts, sensitivity=sensitivity)


def floor_text(n_r: int, n_m: int, n_window: int) -> str:
    """The page's sentence on the floor of C13_MIN_RUNS runs per fate: reached, or how far away it is."""
    if min(n_r, n_m) >= C13_MIN_RUNS:
        return (f"both fates reach the floor of {C13_MIN_RUNS} runs on these runs, so each part is decided by its "
                "test")
    rare, n = ("memorizing", n_m) if n_m <= n_r else ("reasoning", n_r)
    if n == 0:
        return f"no window run is {rare}, so every part stays undecided"
    return (f"{rare} is the rarer fate under a window ({n} of {n_window} runs), so the floor is not reached and "
            f"every part stays undecided; at this share, reaching it would take about "
            f"{C13_MIN_RUNS / n:.1f} times as many window runs")


EXPOSURE_SHARE = 0.1  # a fate difference within a tenth of the window-vs-none difference counts as none (2026-12-06)


def fate_contrasts(end: pd.DataFrame, n_boot: int = stats.N_BOOT, seed: int = 0, strata: str | None = None,
                   exposure: dict[str, float] | None = None) -> pd.DataFrame:
    """Per measurement at the end of training (`end`: runs of one weight-decay exposure, with fate): mean over
    reasoning runs minus mean over memorizing runs, its bootstrap interval (resampling within each fate), and
    one-sided permutation tests (with `strata`, a column: fate labels permuted within each of its values only).
    Since 2026-12-06 the four predicted parts are one family, their p-values Holm-adjusted: a part holds at an
    adjusted p < α the predicted way, is rejected at an adjusted p < α the other way, and is also rejected when the
    90 % interval of the fate difference lies within ± EXPOSURE_SHARE of the metric's window-vs-none difference
    (`exposure`: the metric tracks weight decay, not fate); undecided with fewer than C13_MIN_RUNS runs of either
    fate."""
    end = end[end["fate"].isin(["reasoning", "memorizing"])]
    r, m = end[end["fate"] == "reasoning"], end[end["fate"] == "memorizing"]
    rng = np.random.default_rng(seed)
    rows = []
    for k, name in C13_METRICS.items():
        a, b = r[k].dropna().to_numpy(float), m[k].dropna().to_numpy(float)
        sign = rules.C13_DIRECTION.get(k, 0)
        if len(a) and len(b):
            boots = [rng.choice(a, len(a)).mean() - rng.choice(b, len(b)).mean() for _ in range(n_boot)]
            lo, hi, lo90, hi90 = (float(np.quantile(boots, q)) for q in (0.025, 0.975, 0.05, 0.95))
            if strata is None:
                p_up, p_down = stats.permutation_test(a, b, "greater"), stats.permutation_test(a, b, "less")
            else:
                ok = end[k].notna()
                v, lab, st = end.loc[ok, k], end.loc[ok, "fate"] == "reasoning", end.loc[ok, strata]
                p_up, p_down = (stats.stratified_permutation_test(v, lab, st, alt) for alt in ("greater", "less"))
        else:
            lo = hi = lo90 = hi90 = p_up = p_down = math.nan
        p_pred, p_other = (p_up, p_down) if sign > 0 else (p_down, p_up)
        margin = EXPOSURE_SHARE * abs(exposure[k]) if exposure and k in exposure else math.nan
        rows.append({"key": k, "metric": name, "reasoning runs": len(a), "memorizing runs": len(b),
                     "reasoning": float(a.mean()) if len(a) else math.nan,
                     "memorizing": float(b.mean()) if len(b) else math.nan,
                     "difference": float(a.mean() - b.mean()) if len(a) and len(b) else math.nan, "lo": lo, "hi": hi,
                     "lo90": lo90, "hi90": hi90, "exposure margin": margin,
                     "predicted sign": {1: "+", -1: "−"}.get(sign, ""),
                     "p (predicted)": p_pred if sign else math.nan, "p (other way)": p_other if sign else math.nan})
    out = pd.DataFrame(rows).set_index("key")
    family = [k for k in out.index if rules.C13_DIRECTION.get(k, 0)]
    adj_pred = dict(zip(family, stats.holm(out.loc[family, "p (predicted)"].tolist()), strict=True))
    adj_other = dict(zip(family, stats.holm(out.loc[family, "p (other way)"].tolist()), strict=True))
    out["p (predicted, Holm)"] = [adj_pred.get(k, math.nan) for k in out.index]
    out["part"] = [_part(r, adj_pred[k], adj_other[k]) if k in family else "" for k, r in out.iterrows()]
    return out


def _part(row: pd.Series, p_pred: float, p_other: float) -> str:
    """One predicted difference's state (see `fate_contrasts`)."""
    if min(row["reasoning runs"], row["memorizing runs"]) < C13_MIN_RUNS:
        return rules.UNDECIDED
    state = rules.part_beats(p_pred, p_other)
    m = row["exposure margin"]
    if state == rules.UNDECIDED and not math.isnan(m) and -m < row["lo90"] and row["hi90"] < m:
        return rules.REJECTED  # within a tenth of what weight decay itself moves: the metric tracks exposure
    return state


def c13_sensitivity(end: pd.DataFrame, n_boot: int = stats.N_BOOT, pooled: pd.DataFrame | None = None,
                    exposure: dict[str, float] | None = None) -> pd.DataFrame:
    """The rule under other analyses of the same window runs (`end`, with condition and fate): pooled over the
    placements (the rule; `pooled`: its `fate_contrasts` table when already computed); with the fate labels
    permuted within each placement only (a difference that comes from which placement a run had does not
    count); each placement alone (fewer runs: more often undecided)."""
    analyses = {POOLED: (end, None), STRATIFIED: (end, "condition"),
                **{f"{c} alone": (g, None) for c, g in end.groupby("condition", sort=False)}}
    rows = []
    for name, (frame, strata) in analyses.items():
        t = pooled if pooled is not None and name == POOLED else fate_contrasts(frame, n_boot=n_boot, strata=strata,
                                                                                exposure=exposure)
        parts = t[t["part"] != ""]
        rows.append({"analysis": name, "reasoning runs": int(t["reasoning runs"].iloc[0]),
                     "memorizing runs": int(t["memorizing runs"].iloc[0]),
                     **{r["metric"]: _part_text(r["part"], r["p (predicted)"]) for _, r in parts.iterrows()},
                     "verdict": rules.combine(dict(zip(parts["metric"], parts["part"], strict=True)))})
    return pd.DataFrame(rows)


def _part_text(part: str, p: float) -> str:
    return part if math.isnan(p) else f"{part} (p {p:.3f})"
