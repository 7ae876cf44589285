"""The rate model, C10: the paper's two-timescale theory (memorization at a rate Θ(1) in γ, reasoning at
Θ(γ²)) against the transformer's early rates, and the model's onset edge against C5's measured edges.

The theory is a gradient flow, so the rule reads the transformer's rates in the regime closest to it: plain
SGD without momentum at a small learning rate. The same rates under the claims' AdamW protocol are shown
beside them, labelled: AdamW divides each step by a running gradient scale, which changes how rates scale
with γ, so its exponents say nothing about the theory's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats, theory
from critwin_lib.claims import history as rule_history
from critwin_lib.claims import onsets, rules
from critwin_lib.claims.core import ClaimResult, Design, fetch, gamma_list, onset_grid, tag
from critwin_lib.sizes import Size, get_profile

RATE_FRAC = 1000 / 6400  # the initial-rate runs: the first 1000 steps of a quick-length run
SGD, ADAMW = "plain SGD", "AdamW"  # the two regimes of the rate runs; the rule reads SGD's
REGIMES = (SGD, ADAMW)


def sgd_label(lr: float) -> str:
    """The regime label of plain SGD at a learning rate other than the rule's (the sensitivity table)."""
    return f"{SGD}, lr {lr:g}"


def rate_run(P: Size, seed: int, gamma: float, protocol_name: str = "",
             sgd_lr: float | None = None) -> config.RunConfig:
    """A short instrumented run without weight decay, evaluated ~50 times: the transformer's early rates, under
    the protocol's optimizer or, with `sgd_lr`, plain SGD (no momentum) at that learning rate."""
    steps = max(2, round(P.steps * RATE_FRAC))
    sgd = {} if sgd_lr is None else {"optimizer": "sgd", "momentum": 0.0, "lr": sgd_lr}
    return protocol.anchor_run(P, seed, config.WDSchedule.none(), gamma=gamma,
                               protocol=protocol.resolve(protocol_name, P), steps=steps,
                               eval_every=max(1, steps // 50), instrument=True, **sgd)


@dataclass
class RatesDesign(Design):
    rate_specs: list
    rate_gammas: list[float]
    c5_gammas: list[float]
    c5_seeds: list[int]
    onsets: list[int]
    sgd_lr: float  # the rule's regime: plain SGD at this learning rate
    check_lr: float = 0.0  # the rule's check (since 2026-12-06): plain SGD at a third of it; 0: no check


def c10_design(*, profile: str, n_seeds: int, rate_gammas: list, c5_n_seeds: int, c5_gammas: list,
               onset_fracs: list, window_frac: float, theory_seeds: int, sgd_lr: float = 0.01,
               adamw_n_seeds: int = 0, sensitivity_lrs: list | None = None, protocol_name: str = "",
               check_lr: float = 0.0, other_n_seeds: int = 0) -> RatesDesign:
    """C10's runs: the short rate runs at every γ of `rate_gammas` under plain SGD at `sgd_lr` and, with
    `check_lr`, at that smaller learning rate (the rule's check; n_seeds each), under the protocol's AdamW
    (adamw_n_seeds; 0: n_seeds), plain SGD at each of `sensitivity_lrs` (other_n_seeds; 0: adamw_n_seeds), and
    C5's onset sweep (its edges)."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    rate_gammas = gamma_list(rate_gammas, "rate_gammas")
    c5_gammas = gamma_list(c5_gammas, "c5_gammas")
    if 1.0 not in c5_gammas:
        raise config.ConfigError(f"c5_gammas: must include 1.0 (the theory's time scale is fitted there), "
                                 f"got {c5_gammas}")
    checks.count(theory_seeds, "theory_seeds")
    checks.positive_number(sgd_lr, "sgd_lr")
    if check_lr != 0.0:
        checks.positive_number(check_lr, "check_lr")
        if not check_lr < sgd_lr:
            raise config.ConfigError(f"check_lr: must be below sgd_lr {sgd_lr:g} (the rule's check is a smaller "
                                     f"learning rate), got {check_lr!r}")
    protocol.get_protocol(protocol_name, "protocol_name")
    c5_seeds = P.seeds(c5_n_seeds)
    grid = onset_grid(P, onset_fracs)
    few = P.seeds(adamw_n_seeds, "adamw_n_seeds") if adamw_n_seeds else seeds
    others = P.seeds(other_n_seeds, "other_n_seeds") if other_n_seeds else few
    other_lrs = (checks.positive_numbers(sensitivity_lrs, "sensitivity_lrs", "positive learning rates")
                 if sensitivity_lrs not in (None, []) else [])
    regimes = {SGD: (sgd_lr, seeds), **({sgd_label(check_lr): (check_lr, seeds)} if check_lr else {}),
               ADAMW: (None, few), **{sgd_label(lr): (lr, others) for lr in other_lrs if lr not in (sgd_lr, check_lr)}}
    rate_specs = [({"regime": r, "gamma": g, "seed": s}, rate_run(P, s, g, protocol_name, lr))
                  for r, (lr, rs) in regimes.items() for g in rate_gammas for s in rs]
    specs = rate_specs + onsets.gamma_specs(P, c5_seeds, c5_gammas, protocol_name, grid, window_frac)
    checked = f" and at lr {check_lr:g}, the rule's check" if check_lr else ""
    summary = (f"profile {P.name}: {len(rate_specs)} rate runs ({len(seeds)} seeds per γ under plain SGD at lr "
               f"{sgd_lr:g}{checked}, {len(few)} under AdamW, {len(others)} at each other lr), C5's sweep at "
               f"{len(c5_seeds)} seeds per cell")
    return RatesDesign(specs, summary, seeds, rate_specs, rate_gammas, c5_gammas, c5_seeds, grid, sgd_lr,
                       check_lr, protocol=protocol_name)


@dataclass
class RatesResult(ClaimResult):
    rates: pd.DataFrame
    overlay: pd.DataFrame
    placements: pd.DataFrame
    margins: pd.DataFrame
    theory_onsets: pd.DataFrame
    theory_rates: pd.DataFrame
    c5_table: pd.DataFrame
    fits: dict[str, dict[str, dict[str, float]]]  # regime -> pathway -> γ-exponent fit (`theory.rate_exponent`)
    parts: dict[str, str]  # the rule's parts (rules.C10_PARTS) on plain SGD's exponents
    sensitivity: pd.DataFrame  # the rule on every regime's exponents (`regime_table`)
    steps: int


def regime_table(by_regime: dict[str, dict[str, dict[str, float]]], rates: pd.DataFrame,
                 check: str | None = None) -> pd.DataFrame:
    """The rule's parts and verdict on each regime's exponents (plain SGD at the rule's and other learning
    rates, AdamW): does the regime or the learning rate decide the verdict? The rule's row is marked; with
    `check` (the regime at a third of the rule's learning rate) the rule's row applies the check
    (`rules.c10_parts`), the others read their exponents alone."""
    rows = []
    for regime, f in by_regime.items():
        smaller = (by_regime[check]["memorization"], by_regime[check]["reasoning"]) if check and regime == SGD else None
        parts = rules.c10_parts(f["memorization"], f["reasoning"], smaller)
        rows.append({"regime": regime, "the rule's": regime == SGD,
                     "seeds per γ": int(rates.loc[rates["regime"] == regime, "seed"].nunique()),
                     "memorization k": _fmt(f["memorization"]), "reasoning k": _fmt(f["reasoning"]),
                     **parts, "verdict": rules.combine(parts)})
    return pd.DataFrame(rows)


def _fmt(f: dict[str, float]) -> str:
    return ("not measurable (fewer than 2 γ with a growing margin)" if math.isnan(f["exponent"])
            else f"{f['exponent']:.2f} [{f['lo']:.2f}, {f['hi']:.2f}] ({f['n_gammas']} γ)")


def _measured_rates(rate_hist: pd.DataFrame, gammas: list[float], start: int
                    ) -> tuple[pd.DataFrame, dict[str, dict[str, dict[str, float]]]]:
    """Each rate run's early margin rates, and per regime the fitted γ-exponent of each pathway."""
    rates = pd.DataFrame([{"regime": r, "gamma": g, "seed": s, **theory.margin_rates(h, start)}
                          for (r, g, s), h in rate_hist.groupby(["regime", "gamma", "seed"], sort=False)])
    cell = {key: g for key, g in rates.groupby(["regime", "gamma"])}
    by_regime = {r: {k: theory.rate_exponent(gammas, [cell[(r, g)][k].to_numpy() for g in gammas])
                     for k in ("memorization", "reasoning")} for r in rates["regime"].unique()}
    return rates, by_regime


@dataclass
class _Overlay:
    """The rate model's onset edge against C5's measured edges, one time-scale constant fitted at γ = 1."""

    table: pd.DataFrame  # gamma, edge, edge_pm, t_mem, theory_frac, predicted, basin
    fine: list[float]  # the model's onsets (fractions of the run)
    share: np.ndarray  # the model's reasoning share per (onset, γ)
    time_scale: float
    mae: float  # mean |predicted − measured| at γ other than 1
    inside: int  # of those, within the measured bracket
    n: int
    rho: float  # Spearman ρ(predicted, measured), where both exist


def _overlay(model: theory.RateModel, edges: pd.DataFrame, gammas: list[float], window_frac: float, n_theory: int,
             steps: int) -> _Overlay:
    measured = edges.set_index("gamma")
    fine = [i / 200 for i in range(0, round(200 * (1 - window_frac)) + 1)]  # onsets every 0.5 % of the run
    share = theory.window_shares(model, gammas, fine, n_theory, window_frac)
    th_edge = np.array(theory.first_onset(fine, share))  # a fraction of the run, per γ
    k = measured.loc[1.0, "edge"] / (th_edge[gammas.index(1.0)] * steps)  # the one fitted constant
    overlay = measured[["edge", "edge_pm", "t_mem"]].reset_index().assign(
        theory_frac=th_edge, predicted=k * th_edge * steps, basin=share.max(axis=0))
    others = overlay[(overlay["gamma"] != 1.0)].dropna(subset=["edge", "predicted"])
    mae = float((others["predicted"] - others["edge"]).abs().mean()) if len(others) else math.nan
    inside = int(((others["predicted"] - others["edge"]).abs() <= others["edge_pm"]).sum())
    both = overlay.dropna(subset=["edge", "predicted"])  # does the theory order the edges as the runs do?
    rho = float(both["predicted"].corr(both["edge"], method="spearman")) if len(both) >= 3 else math.nan
    return _Overlay(overlay, fine, share, float(k), mae, inside, int(len(others)), rho)


def c10(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> RatesResult:
    """C10: the two-timescale rate model against the transformer: its rates' γ-exponents, and its onset
    edge (one time-scale constant fitted at γ = 1) against C5's measured edges."""
    d = c10_design(**params)
    P = get_profile(params["profile"])
    n_theory = params["theory_seeds"]
    fetch(d.specs, results_dir, train_missing, workers)  # every run at once (in parallel)
    rate_hist, _ = fetch(d.rate_specs, results_dir, train_missing, workers, fates=False)
    rates, by_regime = _measured_rates(rate_hist, d.rate_gammas, P.warmup_steps)
    check = sgd_label(d.check_lr) if d.check_lr else None
    sensitivity = regime_table(by_regime, rates, check)
    rule_row = sensitivity[sensitivity["the rule's"]].iloc[0]
    parts = {name: str(rule_row[name]) for name in rules.C10_PARTS}
    model = theory.RateModel()
    th_rates = theory.initial_rates(model, d.rate_gammas)
    c5 = onsets.gamma_sweep(P, d.c5_seeds, d.c5_gammas, d.protocol, d.onsets, params["window_frac"], results_dir,
                            train_missing, workers)
    ov = _overlay(model, c5.edges, d.c5_gammas, params["window_frac"], n_theory, P.steps)
    numbers = _c10_numbers(d, P, str(rule_row["verdict"]), parts, by_regime, sensitivity, th_rates, ov, n_theory)
    if check:  # where the check leaves each part (the exponent at a third of the learning rate inside the interval?)
        numbers.update({"check_lr": d.check_lr, **{f"check_{s}_stable": rules.c10_lr_stable(
            by_regime[SGD][k], by_regime[check][k]) for s, k in (("mem", "memorization"), ("rea", "reasoning"))},
            **{f"check_exp_{s}": by_regime[check][k]["exponent"] for s, k in (("mem", "memorization"),
                                                                               ("rea", "reasoning"))},
            "unchecked_verdict": rules.combine(rules.c10_parts(by_regime[SGD]["memorization"],
                                                               by_regime[SGD]["reasoning"]))})
    row = _c10_row(numbers, len(d.seeds))
    placements = theory.placement_counts(model, d.rate_gammas, n_theory)
    place = pd.DataFrame([{"placement": n, "gamma": g, "reasoning": int(c), "seeds": n_theory}
                          for n, counts in placements.items() for g, c in zip(d.rate_gammas, counts, strict=True)])
    margins = stats.mean_ci(rate_hist.melt(id_vars=["regime", "gamma", "seed", "step"],
                                           value_vars=["margin/train", "margin/test_ood"], var_name="margin"),
                            ["regime", "gamma", "margin", "step"], "value")
    th_curve = pd.DataFrame([{"gamma": g, "onset_frac": f, "share": float(ov.share[i, j])}
                             for i, f in enumerate(ov.fine) for j, g in enumerate(d.c5_gammas)])
    return RatesResult(rows=[row], numbers=numbers, summary=d.summary, rates=rates, overlay=ov.table,
                       placements=place, margins=margins, theory_onsets=th_curve,
                       theory_rates=pd.DataFrame({"gamma": d.rate_gammas, **th_rates}), c5_table=c5.table,
                       fits=by_regime, parts=parts, sensitivity=sensitivity, steps=P.steps)


def _c10_numbers(d: RatesDesign, P: Size, verdict: str, parts: dict[str, str],
                 by_regime: dict[str, dict[str, dict[str, float]]], sensitivity: pd.DataFrame,
                 th_rates: dict[str, Any], ov: _Overlay, n_theory: int) -> dict[str, Any]:
    """C10's glued numbers: the exponents under both regimes, the parts, the model's slopes and the overlay."""
    th_slopes = {k: theory.loglog_slope(d.rate_gammas, v) for k, v in th_rates.items()}
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "rate_start": P.warmup_steps,
               "rate_steps": int(d.rate_specs[0][1].train.steps), "sgd_lr": d.sgd_lr, "margin": rules.C10_FLAT,
               "theory_slope_mem": th_slopes["memorization"], "theory_slope_rea": th_slopes["reasoning"],
               "time_scale": ov.time_scale, "overlay_mae": ov.mae, "overlay_inside": ov.inside, "overlay_n": ov.n,
               "overlay_rho": ov.rho, "theory_seeds": n_theory,
               "old_verdict": rule_history.verdict_c10(by_regime[ADAMW]["memorization"], by_regime[ADAMW]["reasoning"])}
    for prefix, f in (("", by_regime[SGD]), ("adamw_", by_regime[ADAMW])):  # unprefixed: the rule's, plain SGD
        for short, key in (("mem", "memorization"), ("rea", "reasoning")):
            e = f[key]
            numbers.update({f"{prefix}exp_{short}": e["exponent"], f"{prefix}exp_{short}_lo": e["lo"],
                            f"{prefix}exp_{short}_hi": e["hi"], f"{prefix}exp_{short}_n": e["n_gammas"],
                            f"{prefix}exp_{short}_text": _fmt(e)})
    numbers.update({f"part_{short}": parts[name] for short, name in zip(("mem", "rea"), rules.C10_PARTS, strict=True)})
    rule = f"{sgd_label(d.sgd_lr)} (the rule's)"
    numbers["regime_verdicts_text"] = "; ".join(f"{rule if row.regime == SGD else row.regime}: {row.verdict}"
                                                for row in sensitivity.itertuples())
    flips = sensitivity[sensitivity["verdict"] != verdict]
    numbers["sensitivity_text"] = (
        f"the verdict is the same in all {len(sensitivity)} regimes of the sensitivity table" if flips.empty else
        "the verdict differs under " + "; ".join(f"{r.regime} ({r.verdict})" for r in flips.itertuples()))
    numbers.update({f"theory_edge_{tag(g)}": float(f * P.steps)
                    for g, f in zip(d.c5_gammas, ov.table["theory_frac"], strict=True)})
    return numbers


def _c10_row(n: dict[str, Any], seeds: int) -> dict[str, Any]:
    check = "" if "check_lr" not in n else (
        f"; at lr {n['check_lr']:g} memorization k = {n['check_exp_mem']:.2f}, reasoning k = {n['check_exp_rea']:.2f} "
        f"({'both inside' if n['check_mem_stable'] and n['check_rea_stable'] else 'not both inside'} the intervals)")
    ours = (f"early rates ∝ γ^k under plain SGD (lr {n['sgd_lr']:g}, the rule's regime): memorization "
            f"k = {n['exp_mem_text']}, reasoning (OOD margin) k = {n['exp_rea_text']}{check}; under AdamW: "
            f"{n['adamw_exp_mem_text']} and {n['adamw_exp_rea_text']}; theory's edge (time scale fitted "
            f"at γ 1) vs measured: mean |Δ| {n['overlay_mae']:.0f} steps, {n['overlay_inside']}/{n['overlay_n']} "
            f"inside the measured bracket")
    return {"claim": "C10", "statement": "two timescales: memorization rate Θ(1) in γ, reasoning rate Θ(γ²)",
            "paper": "μ_m = Θ(1), μ_r = Θ(γ²) (theory)", "ours": ours, "profile": n["profile"], "seeds": seeds,
            "verdict": n["verdict"]}


# ---------------------------------------------------------------------------------- the page's texts
def margin_lines(rates: pd.DataFrame) -> str:
    """Per regime, in words: the memorization rate at the smallest and largest γ, and at how many γ the OOD
    margin grows and how much of its growth the training margin shares (markdown bullets)."""
    lines = []
    for regime in REGIMES:
        mean = rates[rates["regime"] == regime].groupby("gamma")[["memorization", "reasoning", "train_margin"]].mean()
        g0, g1 = mean.index.min(), mean.index.max()
        grow = mean[mean["reasoning"] > 0]
        shared = ((grow["reasoning"] / grow["train_margin"]).mean() if len(grow) else float("nan"))
        m0, m1 = mean.loc[g0, "memorization"] * 1e3, mean.loc[g1, "memorization"] * 1e3
        text = (f"* **{regime}.** Memorization rate (training over OOD margin): {m0:.3f}·10⁻³ per step at γ {g0:g}, "
                f"{m1:.3f}·10⁻³ at γ {g1:g}. ")
        text += (f"The OOD margin grows at {len(grow)} of {len(mean)} γ ({', '.join(f'{g:g}' for g in grow.index)}); "
                 f"there its growth is on average {shared:.2f} of the training margin's (1: all of it shared)."
                 if len(grow) else "The OOD margin grows at no γ.")
        lines.append(text)
    return "\n".join(lines)


def exponent_text(n: dict[str, Any], name: str, prefix: str = "") -> str:
    """A fitted γ-exponent with its interval and the γ it used, from a page's numbers."""
    e, lo, hi, used = (n[f"{prefix}exp_{name}"], n[f"{prefix}exp_{name}_lo"], n[f"{prefix}exp_{name}_hi"],
                       n[f"{prefix}exp_{name}_n"])
    return "not measurable" if math.isnan(e) else f"{e:.2f} [{lo:.2f}, {hi:.2f}] over {used} γ"


def _width(n: dict[str, Any], name: str) -> str:
    lo, hi = n[f"exp_{name}_lo"], n[f"exp_{name}_hi"]
    return "no interval" if math.isnan(lo) else f"width {hi - lo:.2f}"


def verdict_text(n: dict[str, Any]) -> str:
    """The page's verdict paragraph from its numbers: the exponents under both regimes, and the overlay."""
    text = (f"Under plain SGD (lr {n['sgd_lr']:g}, the theory's regime) the transformer's early rates scale as γ^k "
            f"with k = {exponent_text(n, 'mem')} for memorization ({_width(n, 'mem')}: *{n['part_mem']}*) and k = "
            f"{exponent_text(n, 'rea')} for reasoning ({_width(n, 'rea')}: *{n['part_rea']}*); the model's slopes are "
            f"{n['theory_slope_mem']:.2f} and {n['theory_slope_rea']:.2f}. Under AdamW (no part of the verdict): "
            f"k = {exponent_text(n, 'mem', 'adamw_')} and {exponent_text(n, 'rea', 'adamw_')}. ")
    if "check_lr" in n:
        where = {True: "inside", False: "outside"}
        text += (f"At lr {n['check_lr']:g}, a third of it, the memorization exponent is {n['check_exp_mem']:.2f} "
                 f"({where[n['check_mem_stable']]} its interval) and the reasoning exponent {n['check_exp_rea']:.2f} "
                 f"({where[n['check_rea_stable']]} its interval); without that check the rule would say "
                 f"*{n['unchecked_verdict']}*. ")
    if math.isnan(n["overlay_mae"]):
        return text + "The overlay has no measured edge to compare at γ other than 1."
    return text + (f"The model's edge, scaled at γ = 1, differs from the measured edges by {n['overlay_mae']:.0f} "
                   f"steps on average at the other {n['overlay_n']} γ; {n['overlay_inside']} of {n['overlay_n']} fall "
                   f"inside the measured bracket; Spearman ρ(model, measured) = {n['overlay_rho']:.2f}.")


def lr_moves_text(fits: dict[str, dict[str, dict[str, float]]], sgd_lr: float) -> str:
    """Where another plain-SGD learning rate moves an exponent (95 % intervals disjoint from the rule's), in
    words; empty when none does."""
    rule = fits[SGD]
    moved = [(regime, path, f[path]) for regime, f in fits.items() if regime.startswith(f"{SGD}, lr")
             for path in ("memorization", "reasoning")
             if f[path]["hi"] < rule[path]["lo"] or f[path]["lo"] > rule[path]["hi"]]
    if not moved:
        return ""
    return ("**The learning rate moves the exponents**: " + "; ".join(
        f"{path} k = {e['exponent']:.2f} [{e['lo']:.2f}, {e['hi']:.2f}] under {regime} against "
        f"{rule[path]['exponent']:.2f} [{rule[path]['lo']:.2f}, {rule[path]['hi']:.2f}] at lr {sgd_lr:g}"
        for regime, path, e in moved)
        + ". Under a gradient flow the rates would scale with the learning rate and keep their exponents, so over "
          "these first steps the runs are not in the theory's regime at both rates, and a part that holds at one "
          "learning rate only is weak support for the theory.")


def model_vs_runs_text(result: RatesResult, theory_seeds: int) -> str:
    """Where the rate model and the runs part (early windows, the memorization rate, no weight decay, large γ),
    as markdown bullets."""
    c5 = result.c5_table
    early = c5[c5["onset"] == 0].set_index("gamma")
    none = c5[c5["onset"] < 0].set_index("gamma")
    place = result.placements.pivot(index="placement", columns="gamma", values="reasoning")
    lines = [
        f"* **Early windows.** The model: a window at onset 0 makes {int(place.loc['early'].max())} of "
        f"{theory_seeds} seeds reason at any γ (weight decay kills r while it is tiny). The runs: "
        + ", ".join(f"γ {g:g}: {int(r.reasoning)}/{int(r.seeds)}" for g, r in early.iterrows())
        + " seeds reason at onset 0.",
        f"* **Memorization rate.** The model's is flat in γ by construction; the transformer's k = "
        f"{exponent_text(result.numbers, 'mem')}.",
        f"* **No weight decay.** The model: {', '.join(str(int(v)) for v in place.loc['none'])} of {theory_seeds} "
        f"seeds reason at γ {', '.join(f'{g:g}' for g in place.columns)}; the runs (C5's no-weight-decay cells): "
        + ", ".join(f"γ {g:g}: {int(r.reasoning)}/{int(r.seeds)}" for g, r in none.iterrows()) + ".",
        "* **Large γ.** The model's basin only grows with γ (it has no lazy-regime slow-down), so it cannot "
        "show C7's decline at large γ; the [C6/C7 page](c06_c07_basin.html) measures it.",
    ]
    return "\n".join(lines)
