"""The rate model, C10: the paper's two-timescale theory (memorization at a rate Θ(1) in γ, reasoning at
Θ(γ²)) against the transformer's early rates, and the model's onset edge against C5's measured edges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats, theory
from critwin_lib.claims import onsets, rules
from critwin_lib.claims.core import ClaimResult, Design, fetch, gamma_list, onset_grid, tag
from critwin_lib.sizes import Size, get_profile

RATE_FRAC = 1000 / 6400  # the initial-rate runs: the first 1000 steps of a quick-length run


def rate_run(P: Size, seed: int, gamma: float, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> config.RunConfig:
    """A short instrumented run without weight decay, evaluated ~50 times: the transformer's early rates."""
    steps = max(2, round(P.steps * RATE_FRAC))
    return protocol.anchor_run(P, seed, config.WDSchedule.none(), gamma=gamma, protocol=protocol_name,
                               steps=steps, eval_every=max(1, steps // 50), instrument=True)


@dataclass
class RatesDesign(Design):
    rate_specs: list
    rate_gammas: list[float]
    c5_gammas: list[float]
    c5_seeds: list[int]
    onsets: list[int]


def c10_design(*, profile: str, n_seeds: int, rate_gammas: list, c5_n_seeds: int, c5_gammas: list,
               onset_fracs: list, window_frac: float, theory_seeds: int,
               protocol_name: str = protocol.DEFAULT_PROTOCOL) -> RatesDesign:
    """C10's runs: the short rate runs at every γ of `rate_gammas`, and C5's onset sweep (its edges)."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    rate_gammas = gamma_list(rate_gammas, "rate_gammas")
    c5_gammas = gamma_list(c5_gammas, "c5_gammas")
    if 1.0 not in c5_gammas:
        raise config.ConfigError(f"c5_gammas: must include 1.0 (the theory's time scale is fitted there), "
                                 f"got {c5_gammas}")
    checks.count(theory_seeds, "theory_seeds")
    protocol.get_protocol(protocol_name, "protocol_name")
    c5_seeds = P.seeds(c5_n_seeds)
    grid = onset_grid(P, onset_fracs)
    rate_specs = [({"gamma": g, "seed": s}, rate_run(P, s, g, protocol_name)) for g in rate_gammas for s in seeds]
    specs = rate_specs + onsets.gamma_specs(P, c5_seeds, c5_gammas, protocol_name, grid, window_frac)
    summary = (f"profile {P.name}: {len(rate_specs)} rate runs ({len(seeds)} seeds per γ), C5's sweep at "
               f"{len(c5_seeds)} seeds per cell")
    return RatesDesign(specs, summary, seeds, rate_specs, rate_gammas, c5_gammas, c5_seeds, grid)


@dataclass
class RatesResult(ClaimResult):
    rates: pd.DataFrame
    overlay: pd.DataFrame
    placements: pd.DataFrame
    margins: pd.DataFrame
    theory_onsets: pd.DataFrame
    theory_rates: pd.DataFrame
    c5_table: pd.DataFrame
    fits: dict[str, dict[str, float]]
    steps: int


def _fmt(f: dict[str, float]) -> str:
    return ("not measurable (fewer than 2 γ with a growing margin)" if math.isnan(f["exponent"])
            else f"{f['exponent']:.2f} [{f['lo']:.2f}, {f['hi']:.2f}] ({f['n_gammas']} γ)")


def c10(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> RatesResult:
    """C10: the two-timescale rate model against the transformer: its rates' γ-exponents, and its onset
    edge (one time-scale constant fitted at γ = 1) against C5's measured edges."""
    d = c10_design(**params)
    P = get_profile(params["profile"])
    proto = params.get("protocol_name", protocol.DEFAULT_PROTOCOL)
    window_frac, n_theory = params["window_frac"], params["theory_seeds"]
    fetch(d.specs, results_dir, train_missing, workers)  # every run at once (in parallel)
    rate_hist, _ = fetch(d.rate_specs, results_dir, train_missing, workers, fates=False)
    start = P.warmup_steps
    rates = pd.DataFrame([{"gamma": g, "seed": s, **theory.margin_rates(h, start)}
                          for (g, s), h in rate_hist.groupby(["gamma", "seed"])])
    fits = {k: theory.rate_exponent(d.rate_gammas, [rates.loc[rates["gamma"] == g, k].to_numpy()
                                                     for g in d.rate_gammas]) for k in ("memorization", "reasoning")}
    verdict = rules.verdict_c10(fits["memorization"], fits["reasoning"])
    model = theory.RateModel()
    th_rates = theory.initial_rates(model, d.rate_gammas)
    th_slopes = {k: theory.loglog_slope(d.rate_gammas, v) for k, v in th_rates.items()}

    c5 = onsets.gamma_sweep(P, d.c5_seeds, d.c5_gammas, proto, d.onsets, window_frac, results_dir, train_missing,
                            workers)
    measured = c5.edges.set_index("gamma")
    fine = [i / 200 for i in range(0, round(200 * (1 - window_frac)) + 1)]  # onsets every 0.5 % of the run
    share = theory.window_shares(model, d.c5_gammas, fine, n_theory, window_frac)
    th_edge = np.array(theory.first_onset(fine, share))  # a fraction of the run, per γ
    k = measured.loc[1.0, "edge"] / (th_edge[d.c5_gammas.index(1.0)] * P.steps)  # the one fitted constant
    overlay = measured[["edge", "edge_pm", "t_mem"]].reset_index().assign(
        theory_frac=th_edge, predicted=k * th_edge * P.steps, basin=share.max(axis=0))
    others = overlay[(overlay["gamma"] != 1.0)].dropna(subset=["edge", "predicted"])
    mae = float((others["predicted"] - others["edge"]).abs().mean()) if len(others) else math.nan
    inside = int(((others["predicted"] - others["edge"]).abs() <= others["edge_pm"]).sum())
    both = overlay.dropna(subset=["edge", "predicted"])  # does the theory order the edges as the runs do?
    rho = float(both["predicted"].corr(both["edge"], method="spearman")) if len(both) >= 3 else math.nan

    m, r = fits["memorization"], fits["reasoning"]
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "rate_start": start,
               "rate_steps": int(d.rate_specs[0][1].train.steps),
               "theory_slope_mem": th_slopes["memorization"], "theory_slope_rea": th_slopes["reasoning"],
               "exp_mem": m["exponent"], "exp_mem_lo": m["lo"], "exp_mem_hi": m["hi"], "exp_mem_n": m["n_gammas"],
               "exp_rea": r["exponent"], "exp_rea_lo": r["lo"], "exp_rea_hi": r["hi"], "exp_rea_n": r["n_gammas"],
               "time_scale": float(k), "overlay_mae": mae, "overlay_inside": inside, "overlay_n": int(len(others)),
               "overlay_rho": rho, "theory_seeds": n_theory}
    numbers.update({f"theory_edge_{tag(g)}": float(f * P.steps) for g, f in zip(d.c5_gammas, th_edge, strict=True)})
    numbers.update({"exp_mem_text": _fmt(m), "exp_rea_text": _fmt(r)})
    ours = (f"transformer's early rates ∝ γ^k: memorization k = {_fmt(m)}, reasoning (OOD margin) k = {_fmt(r)}; "
            f"theory's edge (time scale fitted at γ 1) vs measured: mean |Δ| {mae:.0f} steps, "
            f"{inside}/{len(others)} inside the measured bracket")
    row = {"claim": "C10", "statement": "two timescales: memorization rate Θ(1) in γ, reasoning rate Θ(γ²)",
           "paper": "μ_m = Θ(1), μ_r = Θ(γ²) (theory)", "ours": ours, "profile": P.name, "seeds": len(d.seeds),
           "verdict": verdict}
    placements = theory.placement_counts(model, d.rate_gammas, n_theory)
    place = pd.DataFrame([{"placement": n, "gamma": g, "reasoning": int(c), "seeds": n_theory}
                          for n, counts in placements.items() for g, c in zip(d.rate_gammas, counts, strict=True)])
    margins = stats.mean_ci(rate_hist.melt(id_vars=["gamma", "seed", "step"],
                                           value_vars=["margin/train", "margin/test_ood"], var_name="margin"),
                            ["gamma", "margin", "step"], "value")
    th_curve = pd.DataFrame([{"gamma": g, "onset_frac": f, "share": float(share[i, j])}
                             for i, f in enumerate(fine) for j, g in enumerate(d.c5_gammas)])
    return RatesResult([row], numbers, d.summary, rates, overlay, place, margins, th_curve,
                       pd.DataFrame({"gamma": d.rate_gammas, **th_rates}), c5.table, fits, P.steps)
