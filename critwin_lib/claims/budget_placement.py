"""Where the budget goes (C2, C3), decided on fates over seeds: at equal budget, does the middle window beat the
early one by the paper's size (C2), while early and late placements stay at chance, as no weight decay (C3)?

Each page states its rule as parts (fates.beats, fates.matches, a size in the paper's metric) combined by
`rules.combine`, shows the power of its design against the paper's effect, a sensitivity table (protocol × metric ×
onset) and the verdict the rule used before fates (`history.verdict_c02`, ...) gives on the same runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, schedules, stats
from critwin_lib.claims import fates, looks, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, fetch, score_row, window_text
from critwin_lib.claims.placement_design import (
    PlacementDesign,
    build_design,
    check_fitted,
    close_steps,
    decay_counts,
    decay_lambdas,
    decay_numbers,
    planned_looks,
    size_part,
    window_lambdas,
    with_rule_fates,
    with_shared_none,
)
from critwin_lib.sizes import get_profile

PAPER_C2 = {"middle": fates.paper_share(0.93), "early": fates.paper_share(0.15)}  # 5-9x: early at chance
PAPER_C3 = {"early": fates.paper_share(0.15), "late": fates.paper_share(0.15), "none": fates.paper_share(0.15)}
MEANS = ["final_train", "max_ood", "close_ood", "final_trained_shift", "t_mem"]  # the tables' per-condition means


def decide_c2(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C2: at equal budget the middle window beats the early one, by the paper's size (since 2026-12-06 in its own
    metric: mean OOD at least 5 times the early one's, the lower end of its 5-9x); tests held to `levels` (a look of
    the sequential design)."""
    won = fates.beats("middle beats early", r["middle"], r["early"], levels)
    parts = {"middle beats early": won,
             "reaches size": size_part("middle beats early by the paper's size", r, "middle", "early", rules.C2_RATIO,
                                   "ratio", levels)}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


def decide_c3(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C3: early and late windows each match no weight decay (stay at chance); intervals held to `levels` (a look
    of the sequential design, where the page declares one for C3)."""
    parts = {name: fates.matches(f"{name} matches none", r[name], r["none"], levels=levels)
             for name in ("early", "late") if name in r}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


def c02_c03_design(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float,
                   window_lambda: float, span: list, onset_seeds: int = 0, onset_fracs: list | None = None,
                   alt_protocol: str = "", alt_window_lambda: float = 0.0, alt_n_seeds: int = 0,
                   protocol_name: str = "", looks: list | None = None, first_seed: int = 0,
                   fitted_reasoning: bool = True, sequential_c3: bool = False, decay_protocol: str = "",
                   decay_window_lambda: float = 0.0, decay_n_seeds: int = 0) -> PlacementDesign:
    """C2/C3's runs: the same budget Σλ in an early, a middle and a late window and over the paper's
    2,500-17,500 span scaled (`span`; [] leaves it out), against no weight decay (n_seeds from `first_seed`);
    the same window at the other onsets of `onset_fracs` (onset_seeds) and the placements under `alt_protocol`
    (alt_n_seeds) and, with `decay_protocol`, the three placements under the paper's decay set (decay_n_seeds from
    `first_seed`; its no-weight-decay runs are the page's), for the sensitivity table. n_seeds is one of C2's
    sequential design's `looks` (and C3's, with `sequential_c3`)."""
    P = get_profile(profile)
    planned = planned_looks(looks, n_seeds, P)
    protocol_name = protocol.resolve(protocol_name, P)
    lams = window_lambdas(protocol_name, alt_protocol, alt_window_lambda, window_lambda)
    lams |= decay_lambdas(decay_protocol, decay_window_lambda, protocol_name)
    places = checks.placements(placements, window_frac, ("early", "middle", "late"))
    fitted_reasoning = check_fitted(fitted_reasoning)
    checks.flag(sequential_c3, "sequential_c3")
    if not isinstance(span, list | tuple) or len(span) not in (0, 2):
        raise config.ConfigError(f"span: must be [start_frac, end_frac] or [], got {span!r}")
    seeds = {protocol_name: P.seeds(n_seeds, first=first_seed)}
    if alt_protocol:
        seeds[alt_protocol] = P.seeds(alt_n_seeds)
    if decay_protocol:
        seeds[decay_protocol] = P.seeds(decay_n_seeds, "decay_n_seeds", first=first_seed)
    others = checks.onset_fracs(onset_fracs, window_frac) if onset_fracs else []
    conditions, budget = {}, math.nan
    for proto, lam in lams.items():
        placed = {(name, math.nan): protocol.window(P, f, window_frac, lam) for name, f in places.items()}
        b = schedules.budget(next(iter(placed.values())), P.steps)
        conds = {("none", math.nan): config.WDSchedule.none(), **placed}
        if proto == decay_protocol:  # the three placements; none is the page's own (`with_shared_none`)
            conditions[proto] = placed
            continue
        if span:
            s0, s1 = protocol.window_steps(P, span[0], span[1] - span[0], ("span", "span"))
            conds[(f"span {span[0]:g}–{span[1]:g}", math.nan)] = config.WDSchedule(windows=((s0, s1, b / (s1 - s0)),))
        if proto == protocol_name:
            budget = b
            starts = {P.step_at(f) for f in places.values()}
            for f in others:
                wd = protocol.window(P, f, window_frac, lam)
                if wd.windows[0][0] not in starts:
                    conds[("onset", float(wd.windows[0][0]))] = wd
        conditions[proto] = conds
    close = {name: P.step_at(f) + P.step_at(window_frac) for name, f in places.items()}
    close["onset"] = None
    n = len(seeds[protocol_name])
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {n} seeds"
               + (f" ({seeds[protocol_name][0]}–{seeds[protocol_name][-1]})" if first_seed else "") + "; windows "
               f"{100 * window_frac:g} % of the run at λ = {lams[protocol_name]:g} (early, middle, late at "
               + ", ".join(f"{P.step_at(f):,}" for f in places.values()) + f"), budget Σλ = {budget:g}"
               + (f"; other onsets: {len(P.seeds(onset_seeds))} seeds" if others else "")
               + ("" if fitted_reasoning else "; reasoning read from OOD accuracy alone (the rule before 2026-12-06)")
               + (f"; {alt_protocol}: {len(seeds[alt_protocol])} seeds" if alt_protocol else "")
               + (f"; {decay_protocol}: {len(seeds[decay_protocol])} seeds" if decay_protocol else ""))
    d = build_design(P, seeds, gamma, conditions, summary, close, budget, lams[protocol_name], P.seeds(onset_seeds),
                planned, fitted_reasoning, decay_protocol)
    d.sequential_c3 = sequential_c3
    return d


def _placement_select(runs: pd.DataFrame, middle: float | None = None) -> dict[str, pd.Series]:
    """early, middle (or the window at onset `middle`), late and none, per seed."""
    cond = runs["condition"]
    out = {k: fates.reasons(runs, cond == k) for k in ("early", "middle", "late", "none")}
    out |= {f"{k}_ood": fates.final_ood(runs, cond == k) for k in ("early", "middle")}
    if middle is not None:
        at = (cond == "onset") & (runs["window_start"] == middle)
        out["middle"], out["middle_ood"] = fates.reasons(runs, at), fates.final_ood(runs, at)
    return out


@dataclass
class PlacementResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    parts_c2: dict[str, fates.Comparison]
    parts_c3: dict[str, fates.Comparison]
    sensitivity_c2: pd.DataFrame
    sensitivity_c3: pd.DataFrame
    curves: pd.DataFrame
    schedules: pd.DataFrame
    order: list[str]
    sequence_c2: looks.Progress  # C2's sequential design's looks

    def length_curves(self) -> pd.DataFrame:
        return self.curves


def c02_c03(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> PlacementResult:
    """C2 (middle beats early at equal budget) and C3 (early and late stay at chance, as no weight decay),
    decided on fates over seeds."""
    d = c02_c03_design(**params)
    P = get_profile(params["profile"])
    main = d.protocol
    length = protocol.window_steps(P, 0.0, params["window_frac"])[1]
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run = with_rule_fates(per_run, d)
    per_run["close_ood"] = fates.ood_at(history, per_run, close_steps(per_run, d.close, d.close["middle"], length))
    runs = per_run[per_run["protocol"] == main]
    fixed_c2, parts2 = decide_c2(_placement_select(runs))
    seq2 = looks.run(decide_c2, {k: v for k, v in _placement_select(runs).items()
                                 if k in ("middle", "early", "middle_ood", "early_ood")}, d.looks)
    v2, parts2 = seq2.verdict, (seq2.taken[-1].parts if seq2.taken else parts2)
    fixed_c3, parts3 = decide_c3(_placement_select(runs))
    seq3 = looks.run(decide_c3, {k: v for k, v in _placement_select(runs).items() if k in ("early", "late", "none")},
                     d.looks) if d.sequential_c3 else None
    v3, parts3 = (seq3.verdict, seq3.taken[-1].parts if seq3.taken else parts3) if seq3 else (fixed_c3, parts3)
    fixed = runs[runs["condition"] != "onset"]
    order = list(dict.fromkeys(name for name, _ in d.conditions[main] if name != "onset"))
    table = fates.share_table(fixed, ["condition"]).set_index("condition").loc[order].join(
        fixed.groupby("condition")[MEANS].mean()).reset_index()
    t = table.set_index("condition")
    middle_start = float(P.step_at(params["placements"]["middle"]))
    onsets = sorted(runs.loc[runs["condition"] == "onset", "window_start"].unique().tolist())
    by_onset = {int(o): (lambda r, o=o: _placement_select(r, o)) for o in onsets} | {int(middle_start):
                                                                                      _placement_select}
    sens_runs = with_shared_none(per_run, main, d.decay_protocol)
    sens2 = fates.sensitivity(sens_runs, main, _placement_select, decide_c2,
                              dict(sorted(by_onset.items())) if onsets else None, require_fit=d.fitted_reasoning)
    sens3 = fates.sensitivity(sens_runs, main, _placement_select, decide_c3,
                              {int(o): (lambda r, o=o: {("early" if o < middle_start else "late"):
                                                         fates.reasons(r, (r["condition"] == "onset")
                                                                       & (r["window_start"] == o)),
                                                         "none": fates.reasons(r, r["condition"] == "none")})
                               for o in onsets} if onsets else None, require_fit=d.fitted_reasoning)
    E, M, L, N = (float(t.loc[c, "final_ood"]) for c in ("early", "middle", "late", "none"))
    n = len(d.seeds)
    power_c2 = looks.power(decide_c2, PAPER_C2, d.looks)
    power_c2_paired = looks.power(decide_c2, PAPER_C2, d.looks, paired=True)["power"]
    c2_arms = {k: v for k, v in _placement_select(runs).items() if k in ("middle", "early", "middle_ood", "early_ood")}
    span_name = next((c for c in order if c.startswith("span")), None)
    numbers = {"profile": params["profile"], "seeds": n, "protocol": main, "window_lambda": d.window_lambda,
               "budget": d.budget, "verdict_c2": v2, "verdict_c3": v3,
               **looks.numbers("c2_", seq2, power_c2), "power_c2": power_c2["power"], "fixed_c2": fixed_c2,
               "power_c2_paired": power_c2_paired,
               "power_c3_paired": fates.power(lambda r: decide_c3(r)[0], PAPER_C3, n, paired=True),
               "power_observed_c2": looks.power_observed(decide_c2, c2_arms, d.looks, draws=300),
               "power_c3": fates.power(lambda r: decide_c3(r)[0], PAPER_C3, n),
               "seeds_for_80_c2": fates.seeds_for_power(lambda r: decide_c2(r)[0], PAPER_C2),
               "seeds_for_80_c3": fates.seeds_for_power(lambda r: decide_c3(r)[0], PAPER_C3),
               "old_rule_c2": rule_history.verdict_c02(M, E, N), "old_rule_c3": rule_history.verdict_c03(E, L, N, M),
               "no_size_c2": rule_history.without_size(parts2),
               "headline_c2": fates.headline(sens2, v2), "headline_c3": fates.headline(sens3, v3),
               "ood_span": float(t.loc[span_name, "final_ood"]) if span_name else math.nan,
               "ratio": M / E if E > 0 else math.inf, "fitted_reasoning": d.fitted_reasoning,
               "fixed_c3": fixed_c3, **({"c3_seq_status": seq3.status()} if seq3 else {}),
               "c3_rest_text": fates.how_the_rest_end(table, ["early", "late", "none"]),
               **decay_numbers(sens2, d.decay_protocol, v2, "c2_"), **decay_numbers(sens3, d.decay_protocol, v3, "c3_"),
               **decay_counts(per_run, main, d.decay_protocol, {c: c for c in ("early", "middle", "late", "none")},
                              d.fitted_reasoning),
               **fates.part_numbers("c2_", parts2), **fates.part_numbers("c3_", parts3)}
    for c in ("early", "middle", "late", "none"):
        numbers.update({f"k_{c}": int(t.loc[c, "reasoning"]), f"share_{c}": float(t.loc[c, "share"]),
                        f"share_{c}_lo": float(t.loc[c, "share_lo"]), f"share_{c}_hi": float(t.loc[c, "share_hi"]),
                        f"ood_{c}": float(t.loc[c, "final_ood"]), f"max_{c}": float(t.loc[c, "max_ood"]),
                        f"train_{c}": float(t.loc[c, "final_train"]), f"mem_{c}": int(t.loc[c, "memorizing"]),
                        f"unfit_{c}": int(t.loc[c, "not_fitted"])})
    k = {c: numbers[f"k_{c}"] for c in ("early", "middle", "late", "none")}
    c2p, c2s = parts2["middle beats early"], parts2["reaches size"]
    at = {c: window_text(P.step_at(params["placements"][c]), d.close[c]) for c in ("early", "middle", "late")}
    rows = [score_row("C2", "at equal budget, WD mid-run beats WD early", "middle 5-9x early",
                      f"middle {at['middle']} vs early {at['early']} at λ {d.window_lambda:g}; reasoning seeds: "
                      f"middle {k['middle']}/{n} vs early {k['early']}/{n} (McNemar p {c2p.p:.3f}); "
                      f"mean OOD middle {M:.2f} vs early {E:.2f}, ratio {c2s.diff:.2f}× [{c2s.lo:.2f}, {c2s.hi:.2f}] "
                      f"({100 * c2s.level:.4g} %) against the paper's ≥ {rules.C2_RATIO:g}×; sequential design: "
                      f"{seq2.status()}", params["profile"], n, v2),
            score_row("C3", "the same budget early or late leaves OOD at chance, as no WD", "early, late ≈ 0.15 ≈ none",
                      f"early {at['early']}, late {at['late']} at λ {d.window_lambda:g}; reasoning seeds: "
                      f"early {k['early']}/{n}, late {k['late']}/{n}, none {k['none']}/{n}; "
                      + "; ".join(f"{c.part} {c.diff:+.2f} [{c.lo:+.2f}, {c.hi:+.2f}] ({100 * c.level:.4g} %)"
                                  for c in parts3.values())
                      + (f"; sequential design: {seq3.status()}" if seq3 else ""),
                      params["profile"], n, v3)]
    main_hist = history[(history["protocol"] == main) & (history["condition"] != "onset")]
    curves = stats.mean_ci(main_hist, ["condition", "step"], "acc/test_ood")
    sched = schedules.schedule_frame({name: wd for (name, _), wd in d.conditions[main].items() if name != "onset"},
                                     d.steps)
    return PlacementResult(rows=rows, numbers=numbers, summary=d.summary, history=history, per_run=per_run, table=table,
                           parts_c2=parts2, parts_c3=parts3, sensitivity_c2=sens2, sensitivity_c3=sens3, curves=curves,
                           schedules=sched, order=order, sequence_c2=seq2)
