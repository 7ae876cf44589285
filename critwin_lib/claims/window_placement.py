"""The window claim, decided on fates over seeds: does weight decay in one 25 % window match weight decay over the
whole run (C1), at equal budget and, as a second reading, at the full-run λ (a quarter of the budget)? The
placements of the same budget (C2, C3) are in `budget_placement`; both build on `placement_design`.

Each page states its rule as parts (fates.beats, fates.matches) combined by `rules.combine`, shows the power
of its design against the paper's effect, a sensitivity table (protocol × metric × onset) and the verdict
the rule used before fates (`rules.verdict_c01`, ...) gives on the same runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
from critwin_lib.sizes import get_profile, length_name

QUARTER = "window, quarter budget"  # C1's second reading: the C1 window at the full-run λ
PAPER_C1 = {"window": fates.paper_share(0.93), "full": fates.paper_share(0.91), "none": fates.paper_share(0.15)}

MEANS = ["final_train", "max_ood", "close_ood", "final_trained_shift", "t_mem"]  # the tables' per-condition means


def decide_c1(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C1: the window beats no weight decay, by the paper's size (since 2026-12-06 in its own metric: mean OOD at
    least 0.46 above none, its reasoning regime against chance), and matches full-run weight decay at equal budget;
    tests held to `levels` (a look of the sequential design)."""
    won = fates.beats("window beats none", r["window"], r["none"], levels)
    parts = {"beats none": won,
             "reaches size": size_part("window beats none by the paper's size", r, "window", "none", rules.C1_OOD_GAIN,
                                   "ood difference", levels),
             "matches full": fates.matches("window matches full (equal budget)", r["window"], r["full"],
                                           levels=levels)}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


def c01_design(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
               window_lambda: float, slider_starts: list, onset_seeds: int = 0, alt_protocol: str = "",
               alt_window_lambda: float = 0.0, alt_n_seeds: int = 0,
               protocol_name: str = "", looks: list | None = None, first_seed: int = 0,
               fitted_reasoning: bool = True, quarter_budget: bool = False,
               full_equal_lambda: bool = True, decay_protocol: str = "", decay_window_lambda: float = 0.0,
               decay_n_seeds: int = 0) -> PlacementDesign:
    """C1's runs: none, full-run weight decay at equal budget (and at equal λ unless `full_equal_lambda` is
    False) and the 25 % window at the C1 start (n_seeds from `first_seed`, one of the sequential design's
    `looks`), with `quarter_budget` the same window at the full-run λ (a quarter of the budget: the paper's
    second reading), the same window at every slider start (onset_seeds), and the C1 conditions under
    `alt_protocol` (alt_n_seeds) and, with `decay_protocol`, the window and full-run weight decay at equal budget
    under the paper's decay set (decay_n_seeds from `first_seed`; its no-weight-decay runs are the page's) for the
    sensitivity table. Every parameter is checked first."""
    P = get_profile(profile)
    planned = planned_looks(looks, n_seeds, P)
    protocol_name = protocol.resolve(protocol_name, P)
    lams = window_lambdas(protocol_name, alt_protocol, alt_window_lambda, window_lambda)
    lams |= decay_lambdas(decay_protocol, decay_window_lambda, protocol_name)
    fitted_reasoning = check_fitted(fitted_reasoning)
    checks.flag(quarter_budget, "quarter_budget")
    checks.flag(full_equal_lambda, "full_equal_lambda")
    seeds = {protocol_name: P.seeds(n_seeds, first=first_seed)}
    if alt_protocol:
        seeds[alt_protocol] = P.seeds(alt_n_seeds)
    if decay_protocol:
        seeds[decay_protocol] = P.seeds(decay_n_seeds, "decay_n_seeds", first=first_seed)
    onset = P.seeds(onset_seeds)
    checks.onset_fracs(list(slider_starts) or [window_start_frac], window_frac, "slider_starts")
    conditions, budget = {}, math.nan
    for proto, lam in lams.items():
        c1 = protocol.window(P, window_start_frac, window_frac, lam)
        b = schedules.budget(c1, P.steps)
        budget = b if proto == protocol_name else budget
        conds = {("none", math.nan): config.WDSchedule.none(),
                 ("full, equal budget", math.nan): protocol.full_run(b / P.steps),
                 ("full, equal λ", math.nan): protocol.full_run(lam), ("window", float(c1.windows[0][0])): c1}
        if not full_equal_lambda or proto == decay_protocol:
            del conds[("full, equal λ", math.nan)]
        if proto == decay_protocol:  # none is the page's own (`with_shared_none`)
            del conds[("none", math.nan)]
        if proto == protocol_name and quarter_budget:
            conds[(QUARTER, float(c1.windows[0][0]))] = protocol.window(P, window_start_frac, window_frac,
                                                                         b / P.steps)
        if proto == protocol_name:
            for f in slider_starts:
                wd = protocol.window(P, f, window_frac, lam)
                if float(wd.windows[0][0]) != float(c1.windows[0][0]):
                    conds[("onset", float(wd.windows[0][0]))] = wd
        conditions[proto] = conds
    c1_start, c1_end = protocol.window_steps(P, window_start_frac, window_frac)
    close = {"window": c1_end, QUARTER: c1_end, "onset": None}
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds[protocol_name])} seeds"
               + (f" ({seeds[protocol_name][0]}–{seeds[protocol_name][-1]})" if first_seed else "")
               + (f" (the slider's other starts: {len(onset)})" if len(slider_starts) else "")
               + f"; C1 window [{c1_start}, {c1_end}) ({100 * window_frac:g} % of the run) at λ = "
               f"{lams[protocol_name]:g}, full-run λ {budget / P.steps:g} at equal budget, budget Σλ = {budget:g}"
               + (f"; the same window at λ {budget / P.steps:g} (a quarter of the budget)" if quarter_budget else "")
               + ("" if fitted_reasoning else "; reasoning read from OOD accuracy alone (the rule before 2026-12-06)")
               + (f"; {alt_protocol}: {len(seeds[alt_protocol])} seeds" if alt_protocol else "")
               + (f"; {decay_protocol}: {len(seeds[decay_protocol])} seeds" if decay_protocol else ""))
    return build_design(P, seeds, gamma, conditions, summary, close, budget, lams[protocol_name], onset, planned,
                   fitted_reasoning, decay_protocol)


@dataclass
class C1Result(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    parts: dict[str, fates.Comparison]
    sensitivity: pd.DataFrame
    curves: pd.DataFrame
    schedules: pd.DataFrame
    c1_start: int
    steps: int
    sequence: looks.Progress  # the sequential design's looks

    def length_curves(self) -> pd.DataFrame:
        """The C1 comparison's curves: the C1 window (not the slider's other starts), full, none."""
        c = self.curves
        keep = (c["condition"] != "window") | (c["window_start"] == self.c1_start)
        return c[keep].drop(columns="window_start").reset_index(drop=True)


def _c1_select(start: float | None = None, window: str = "window") -> Callable[[pd.DataFrame], dict[str, pd.Series]]:
    """The C1 comparison's runs: the C1 window (condition `window`: the quarter-budget reading's is QUARTER; or the
    slider's window at `start`), full at equal budget, none."""
    def select(runs: pd.DataFrame) -> dict[str, pd.Series]:
        cond = runs["condition"]
        at = (cond == window) if start is None else ((cond == "onset") & (runs["window_start"] == start))
        return {"window": fates.reasons(runs, at),
                "full": fates.reasons(runs, cond == "full, equal budget"), "none": fates.reasons(runs, cond == "none"),
                "window_ood": fates.final_ood(runs, at), "none_ood": fates.final_ood(runs, cond == "none")}
    return select


def c01(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C1Result:
    """C1: none vs full-run weight decay (equal budget, equal λ) vs one 25 % window, decided on fates over seeds.
    `params` are the notebook's (see `c01_design`)."""
    d = c01_design(**params)
    main = d.protocol
    length = protocol.window_steps(get_profile(params["profile"]), 0.0, params["window_frac"])[1]
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run = with_rule_fates(per_run, d)
    per_run["close_ood"] = fates.ood_at(history, per_run, close_steps(per_run, d.close, d.close["window"], length))
    c1_start = next(s for (name, s) in d.conditions[main] if name == "window")
    runs = per_run[per_run["protocol"] == main]
    fixed_verdict, parts = decide_c1(_c1_select()(runs))
    seq = looks.run(decide_c1, _c1_select()(runs), d.looks)
    verdict = seq.verdict
    parts = seq.taken[-1].parts if seq.taken else parts
    c1_runs = runs[runs["condition"] != "onset"]
    present = set(c1_runs["condition"])
    order = [c for c in C1_ORDER if c in present]
    table = fates.share_table(c1_runs, ["condition"]).set_index("condition").loc[order].join(
        c1_runs.groupby("condition")[MEANS].mean()).reset_index()
    starts = sorted(runs.loc[runs["condition"] == "onset", "window_start"].unique().tolist() + [c1_start])
    onsets = {int(s): _c1_select(None if s == c1_start else s) for s in starts}
    sens = fates.sensitivity(with_shared_none(per_run, main, d.decay_protocol), main, _c1_select(), decide_c1,
                             onsets if len(onsets) > 1 else None, require_fit=d.fitted_reasoning)
    t = table.set_index("condition")
    strict = fates.with_fates(c1_runs, require_fit=True)  # reasoning that also ends with the training set fitted
    fitted = (strict["fate"] == "reasoning").groupby(strict["condition"]).sum()
    W, F, N = (float(t.loc[c, "final_ood"]) for c in ("window", "full, equal budget", "none"))
    n = len(d.seeds)
    seq_power = looks.power(decide_c1, PAPER_C1, d.looks)
    pw = seq_power["power"]
    pw_paired = looks.power(decide_c1, PAPER_C1, d.looks, paired=True)["power"]
    pw_observed = looks.power_observed(decide_c1, _c1_select()(runs), d.looks, draws=1000)
    quarter = _quarter_reading(runs, d) if QUARTER in present else {}
    numbers = {"verdict": verdict, "fixed_verdict": fixed_verdict, **looks.numbers("", seq, seq_power),
               "fitted_reasoning": d.fitted_reasoning, "first_seed": d.seeds[0], **quarter,
               "profile": params["profile"], "seeds": n, "gamma": float(params["gamma"]),
               "protocol": main, "window_lambda": d.window_lambda, "full_lambda": d.budget / d.steps,
               "power": pw, "power_paired": pw_paired, "power_observed": pw_observed,
               "seeds_for_80": fates.seeds_for_power(lambda r: decide_c1(r)[0], PAPER_C1),
               "old_rule_verdict": rule_history.verdict_c01(W, F, N), "headline": fates.headline(sens, verdict),
               "no_size_verdict": rule_history.without_size(parts),
               "fitted_verdict": fates.row_verdict(sens, main, fates.FITTED),
               "whatever_fit_verdict": fates.row_verdict(sens, main, fates.WHATEVER_FIT),
               **decay_numbers(sens, d.decay_protocol, verdict, ""),
               **decay_counts(per_run, main, d.decay_protocol, DECAY_WORDS, d.fitted_reasoning),
               **fates.part_numbers("", parts)}
    for c in C1_ORDER:
        key = C1_KEYS[c]
        if c not in present:  # a condition this design does not run: its numbers are blank
            numbers.update({f"{k}_{key}": math.nan for k in ("share", "ood", "max", "close", "train")}
                           | {f"share_{key}_lo": math.nan, f"share_{key}_hi": math.nan, f"k_{key}": 0, f"fit_{key}": 0})
            continue
        numbers.update({f"k_{key}": int(t.loc[c, "reasoning"]), f"share_{key}": float(t.loc[c, "share"]),
                        f"share_{key}_lo": float(t.loc[c, "share_lo"]), f"share_{key}_hi": float(t.loc[c, "share_hi"]),
                        f"ood_{key}": float(t.loc[c, "final_ood"]), f"max_{key}": float(t.loc[c, "max_ood"]),
                        f"close_{key}": float(t.loc[c, "close_ood"]), f"train_{key}": float(t.loc[c, "final_train"]),
                        f"fit_{key}": int(fitted.get(c, 0))})
    ours = (f"window {window_text(int(c1_start), d.close['window'], d.window_lambda)} against full-run λ "
            f"{numbers['full_lambda']:g}; reasoning seeds"
            + ("" if d.fitted_reasoning else " (OOD accuracy alone)")
            + f": window {numbers['k_window']}/{n}, full {numbers['k_full']}/{n} (equal budget), "
            + (f"{numbers['k_full_lambda']}/{n} (equal λ), " if "full, equal λ" in present else "")
            + f"none {numbers['k_none']}/{n}; window − full "
            f"{parts['matches full'].diff:+.2f} [{parts['matches full'].lo:+.2f}, {parts['matches full'].hi:+.2f}] "
            f"({100 * parts['matches full'].level:.4g} %, margin ± {rules.MARGIN:g}); window vs none McNemar p "
            f"{parts['beats none'].p:.3f}; mean OOD window {W:.2f}, full {F:.2f}, none {N:.2f}; sequential design: "
            f"{seq.status()}"
            + (f"; the same window at λ {numbers['full_lambda']:g} (a quarter of the budget): "
               f"{quarter['quarter_verdict']} (window {numbers['k_quarter']}/{n}; {quarter['quarter_seq_status']})"
               if quarter else ""))
    row = score_row("C1", "WD in one 25% window matches WD over the whole run", "OOD 0.93 (window) vs 0.91 (full)",
                    ours, params["profile"], n, verdict)
    main_hist = history[history["protocol"] == main].copy()
    main_hist.loc[main_hist["condition"] == "onset", "condition"] = "window"
    main_hist = main_hist[main_hist["condition"] != QUARTER]  # the slider draws the windows at the claim's λ
    curves = stats.mean_ci(main_hist, ["condition", "window_start", "step"], "acc/test_ood")
    sched = pd.concat([schedules.schedule_frame({("window" if name == "onset" else name): wd}, d.steps)
                       .assign(window_start=start) for (name, start), wd in d.conditions[main].items()],
                      ignore_index=True)
    return C1Result(rows=[row], numbers=numbers, summary=d.summary, history=history, per_run=per_run, table=table,
                    parts=parts, sensitivity=sens, curves=curves, schedules=sched, c1_start=int(c1_start),
                    steps=d.steps, sequence=seq)


C1_ORDER = ["none", "window", QUARTER, "full, equal budget", "full, equal λ"]
DECAY_WORDS = {"window": "window", "full, equal budget": "full-run", "none": "none"}  # the decay set's counts
C1_KEYS = {"none": "none", "window": "window", QUARTER: "quarter", "full, equal budget": "full",
           "full, equal λ": "full_lambda"}


def _quarter_reading(runs: pd.DataFrame, d: PlacementDesign) -> dict[str, Any]:
    """C1's second reading (the C1 window at the full-run λ, a quarter of the budget) under the same rule and
    looks: its verdict, the design's status and its parts' numbers, keyed 'quarter_...'."""
    select = _c1_select(window=QUARTER)(runs)
    seq = looks.run(decide_c1, select, d.looks)
    parts = seq.taken[-1].parts if seq.taken else decide_c1(select)[1]
    return {"quarter_verdict": seq.verdict, "quarter_seq_status": seq.status(),
            "quarter_fixed_verdict": decide_c1(select)[0], **fates.part_numbers("quarter_", parts)}


def c01_fitted_text(glue: dict[str, Any], profiles: list[str]) -> str:
    """What C1 reads at both lengths when reasoning is read from OOD accuracy alone, fitted or not (the rule before
    2026-12-06), beside the seeds that end fitted (`glue`: the side-by-side numbers, keys "<profile>_<key>"), in one
    paragraph; "" until both lengths are decided."""
    both = [p for p in profiles if f"{p}_train_window" in glue and f"{p}_whatever_fit_verdict" in glue]
    if len(both) < 2:
        return ""
    g = glue
    at = [f"{length_name(p)}: mean final training accuracy window {g[p + '_train_window']:.2f}, full at equal "
          f"budget {g[p + '_train_full']:.2f}, none {g[p + '_train_none']:.2f}; mean OOD when the window closes "
          f"{g[p + '_close_window']:.2f}" for p in both]
    loose = " and ".join(f"**{g[p + '_whatever_fit_verdict']}** at {length_name(p)}" for p in both)
    return (f"**Fitted or not?** A seed reasons only if its training set is fitted at the end. At {at[0]}; at "
            f"{at[1]}. Read from OOD accuracy alone, fitted or not (the rule before 2026-12-06, the sensitivity "
            f"tables' row *final (fitted or not)*), the verdict is {loose}.")
