"""Claim C11: does the critical window survive a deeper model? The paper says that with 4 layers the phenomenon
persists with a lower reasoning plateau and more variance across seeds. The anchor comparisons
(`anchors.anchor_specs`) at each depth, with `ModelConfig(n_layer=4)` for the deeper one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, protocol, stats
from critwin_lib.claims import anchors, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, Design, condition_table, fetch, score_row
from critwin_lib.config import ConfigError, ModelConfig
from critwin_lib.sizes import get_profile


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
    bootstrap over seeds above 0 holds, below 0 rejects). Since 2026-12-06 the three parts are one Holm family (one
    rejecting part decides the verdict), each read as a one-sided p per direction: the onset edge's 1 − (share of
    resamples finding it) and that share; the sign-flip p's; twice the share of resamples of the sd difference at
    or below 0 (at or above 0), so that p < α is the 95 % interval excluding 0. A part holds at a Holm-adjusted
    p < α the paper's way and is rejected at one the other way (`unadjusted`: each part alone, the rule before)."""
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
    ok = boots[~np.isnan(boots)]
    p_spread = ((min(1.0, 2 * float(np.mean(ok <= 0))), min(1.0, 2 * float(np.mean(ok >= 0)))) if len(ok)
                else (math.nan, math.nan))  # two-sided percentile interval excluding 0 ⇔ p < α
    parts = dict(zip(C11_PARTS, (
        {"unadjusted": rules.part_found(edge.found), "found": edge.found, "edge": edge.edge,
         "pair": (1.0 - edge.found, edge.found)},
        {"unadjusted": rules.part_beats(p_lower, p_higher), "diff": float(np.mean(diff)) if len(diff) else math.nan,
         "p": p_lower, "pair": (p_lower, p_higher)},
        {"unadjusted": spread, "diff": sd_gap(np.arange(len(seeds))), "lo": lo, "hi": hi, "pair": p_spread}),
        strict=True))
    family = rules.holm_family({k: v.pop("pair") for k, v in parts.items()})
    for k, v in parts.items():
        v["state"], v["p_holm"], v["p_holm_other"] = family[k]
    return parts


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
    places = anchors.checked_placements(placements, onsets, window_frac)
    specs = []
    for d in depths:
        model = ModelConfig(n_layer=d, init_gamma=gamma, init_sigma0=protocol.SIGMA0)
        specs += anchors.anchor_specs(P, seeds, gamma, protocol_name, onsets, window_frac, {"layers": d}, model)
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds, layers "
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
    final OOD; seed variance = the pooled across-seed sd of final OOD over the onsets. The verdict combines
    `c11_parts` (the page states the rule before its runs)."""
    design = c11_design(**params)
    P = get_profile(params["profile"])
    seeds, depths, places = design.seeds, design.depths, design.places
    protocol_name = design.protocol
    pr = protocol.get_protocol(protocol_name)
    history, per_run = fetch(design.specs, results_dir, train_missing, workers)
    per_run["name"] = anchors.name_placements(per_run, P, places)
    per_run["depth"] = per_run["layers"].map(lambda d: f"{d} layers")
    by_depth, numbers = {}, {"profile": P.name, "seeds": len(seeds), "protocol": protocol_name,
                             "window_lambda": pr.window_lambda, "depths": " and ".join(map(str, depths)),
                             "min_p": 2.0 ** -len(seeds)}  # the smallest one-sided sign-flip p over these seeds
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
             "c1": rule_history.verdict_c01(M, F, N), "c2": rule_history.verdict_c02(M, E, N),
             "c3": rule_history.verdict_c03(E, L, N, M)}
        by_depth[d] = v
        numbers.update({f"{k}_{d}": val for k, val in v.items()})
        tables.append(onset_t.assign(layers=d, depth=f"{d} layers"))
    ref, deep = (by_depth[d] for d in depths)
    persists = deep["plateau"] >= deep["N"] + anchors.PERSISTS
    lower, spread = deep["plateau"] < ref["plateau"], deep["sd"] > ref["sd"]
    old_verdict = rule_history.verdict_c11(persists, lower, spread)  # the rule before 2026-12-01, on means
    parts = c11_parts(per_run, depths[0], depths[1])
    verdict = rules.combine({k: v["state"] for k, v in parts.items()})
    unadjusted = rules.combine({k: v["unadjusted"] for k, v in parts.items()})  # each part at α alone (before)
    dep, low, var = (parts[k] for k in C11_PARTS)
    numbers.update({"verdict": verdict, "old_rule_verdict": old_verdict, "unadjusted_verdict": unadjusted,
                    "p_persists_holm": dep["p_holm"], "p_lower_holm": low["p_holm"], "p_spread_holm": var["p_holm"],
                    "persists": persists,
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
    history["name"] = anchors.name_placements(history, P, places)
    curves = stats.mean_ci(history, ["layers", "name", "step"], "acc/test_ood").rename(columns={"name": "condition"})
    return DepthResult(rows=[row], numbers=numbers, summary=design.summary, history=history, per_run=per_run,
                       onset_table=pd.concat(tables, ignore_index=True), side_by_side=side, curves=curves,
                       steps=P.steps, depths=depths, placements=places)
