"""The window-placement claims, decided on fates over seeds: does weight decay in one 25 % window match
weight decay over the whole run (C1), and, at equal budget, does the middle placement beat the early one
(C2) while early and late placements stay at chance, as no weight decay (C3)?

Each page states its rule as parts (fates.beats, fates.matches) combined by `rules.combine`, shows the power
of its design against the paper's effect, a sensitivity table (protocol × metric × onset) and the verdict
the rule used before fates (`rules.verdict_c01`, ...) gives on the same runs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, schedules, sequential, stats
from critwin_lib.claims import core, fates, looks, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, Design, fetch, score_row, window_text
from critwin_lib.sizes import Size, get_profile, length_name

QUARTER = "window, quarter budget"  # C1's second reading: the C1 window at the full-run λ
PAPER_C1 = {"window": fates.paper_share(0.93), "full": fates.paper_share(0.91), "none": fates.paper_share(0.15)}
PAPER_C2 = {"middle": fates.paper_share(0.93), "early": fates.paper_share(0.15)}  # 5-9x: early at chance
PAPER_C3 = {"early": fates.paper_share(0.15), "late": fates.paper_share(0.15), "none": fates.paper_share(0.15)}

MEANS = ["final_train", "max_ood", "close_ood", "final_trained_shift", "t_mem"]  # the tables' per-condition means


def _ood(r: dict[str, pd.Series], name: str) -> tuple[Any, int]:
    """Condition `name`'s final OOD accuracy per seed (`<name>_ood`) and the bootstrap resamples to read a size with;
    inside a power simulation, which draws fates only, the OOD a bimodal seed has and fewer resamples."""
    key = f"{name}_ood"
    return (r[key], fates.SIZE_BOOT) if key in r else (fates.ood_of(r[name]), fates.SIM_BOOT)


def _size(part: str, r: dict[str, pd.Series], a: str, b: str, least: float, kind: str, levels: fates.Levels
          ) -> fates.Comparison:
    """A size part in the paper's metric, mean OOD (`fates.mean_size`), at the look's interval level."""
    (x, boots), (y, _) = _ood(r, a), _ood(r, b)
    return fates.mean_size(part, x, y, least, kind, levels.interval, boots)


def decide_c1(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C1: the window beats no weight decay, by the paper's size (since 2026-12-06 in its own metric: mean OOD at
    least 0.46 above none, its reasoning regime against chance), and matches full-run weight decay at equal budget;
    tests held to `levels` (a look of the sequential design)."""
    won = fates.beats("window beats none", r["window"], r["none"], levels)
    parts = {"beats none": won,
             "reaches size": _size("window beats none by the paper's size", r, "window", "none", rules.C1_OOD_GAIN,
                                   "ood difference", levels),
             "matches full": fates.matches("window matches full (equal budget)", r["window"], r["full"],
                                           levels=levels)}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


def decide_c2(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C2: at equal budget the middle window beats the early one, by the paper's size (since 2026-12-06 in its own
    metric: mean OOD at least 5 times the early one's, the lower end of its 5-9x); tests held to `levels` (a look of
    the sequential design)."""
    won = fates.beats("middle beats early", r["middle"], r["early"], levels)
    parts = {"middle beats early": won,
             "reaches size": _size("middle beats early by the paper's size", r, "middle", "early", rules.C2_RATIO,
                                   "ratio", levels)}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


def decide_c3(r: dict[str, pd.Series], levels: fates.Levels = fates.FIXED
              ) -> tuple[str, dict[str, fates.Comparison]]:
    """C3: early and late windows each match no weight decay (stay at chance); intervals held to `levels` (a look
    of the sequential design, where the page declares one for C3)."""
    parts = {name: fates.matches(f"{name} matches none", r[name], r["none"], levels=levels)
             for name in ("early", "late") if name in r}
    return rules.combine({k: c.state for k, c in parts.items()}), parts


@dataclass
class PlacementDesign(Design):
    """The runs of a placement page under its protocol and under the alternative one of the sensitivity table."""

    conditions: dict[str, dict[tuple[str, float], config.WDSchedule]]  # protocol → (condition, start) → λ(t)
    close: dict[str, int | None]  # condition → the step its window closes (None: its own window's end)
    steps: int
    budget: float
    window_lambda: float
    protocols: list[str]
    looks: list[int] = dataclasses.field(default_factory=list, kw_only=True)  # the sequential design's (C1, C2)
    fitted_reasoning: bool = dataclasses.field(default=True, kw_only=True)  # False: the rule before 2026-12-06
    sequential_c3: bool = dataclasses.field(default=False, kw_only=True)  # C3 looked at by the same design as C2


def _fitted(flag: Any) -> bool:
    """The `fitted_reasoning` parameter: True (a seed reasons only if its training set is fitted at the end, the
    rule on every page since 2026-12-06) or False (OOD accuracy alone, the rule before)."""
    if not isinstance(flag, bool):
        raise config.ConfigError(f"fitted_reasoning: must be True or False, got {flag!r}")
    return flag


def with_rule_fates(per_run: pd.DataFrame, d: PlacementDesign) -> pd.DataFrame:
    """The runs with the fates the design's rule reads (reasoning needs a fitted training set unless it says not)."""
    return per_run if d.fitted_reasoning else fates.with_fates(per_run, require_fit=False)


def _looks(looks: list | None, n_seeds: int, P: Size) -> list[int]:
    """The sequential design's looks (seed counts; default: this run's seeds alone), with n_seeds one of them."""
    n = len(P.seeds(n_seeds))
    planned = sequential.check_looks(looks) if looks else [n]
    if n not in planned:
        raise config.ConfigError(f"n_seeds: must be one of the sequential design's looks {planned}, got {n}")
    return planned


def _design(P: Size, seeds: dict[str, list[int]], gamma: float, conditions: dict[str, dict], summary: str,
            close: dict[str, int | None], budget: float, lam: float, onset_seeds: list[int],
            planned: list[int], fitted_reasoning: bool) -> PlacementDesign:
    specs = []
    for proto, conds in conditions.items():
        for (name, start), wd in conds.items():
            cell_seeds = onset_seeds if name == "onset" else seeds[proto]
            specs += [({"protocol": proto, "condition": name, "window_start": start, "seed": s},
                       protocol.anchor_run(P, s, wd, gamma=gamma, protocol=proto)) for s in cell_seeds]
    main = next(iter(conditions))  # the page's protocol comes first, the sensitivity table's after it
    return PlacementDesign(specs, summary, seeds[main], conditions, close, P.steps, budget, lam, list(conditions),
                           protocol=main, looks=planned, fitted_reasoning=fitted_reasoning)


def _protocols(protocol_name: str, alt_protocol: str, alt_window_lambda: float, window_lambda: float
               ) -> dict[str, float]:
    """{protocol: its in-window λ} for the page's protocol and the sensitivity table's alternative (if any)."""
    out = {protocol_name: core.window_lambda(protocol_name, window_lambda)}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        out[alt_protocol] = core.window_lambda(alt_protocol, alt_window_lambda)
    return out


def _close_steps(per_run: pd.DataFrame, close: dict[str, int | None], default: int, length: int) -> list[int]:
    """The step each run's window closes: `close[condition]` (None: the run's own window, `window_start +
    length`); conditions not in `close` (no window) at `default`."""
    out = []
    for cond, start in zip(per_run["condition"], per_run["window_start"], strict=True):
        c = close.get(cond, default)
        out.append(int(start) + length if c is None else int(c))
    return out


def c01_design(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
               window_lambda: float, slider_starts: list, onset_seeds: int = 0, alt_protocol: str = "",
               alt_window_lambda: float = 0.0, alt_n_seeds: int = 0,
               protocol_name: str = "", looks: list | None = None, first_seed: int = 0,
               fitted_reasoning: bool = True, quarter_budget: bool = False,
               full_equal_lambda: bool = True) -> PlacementDesign:
    """C1's runs: none, full-run weight decay at equal budget (and at equal λ unless `full_equal_lambda` is
    False) and the 25 % window at the C1 start (n_seeds from `first_seed`, one of the sequential design's
    `looks`), with `quarter_budget` the same window at the full-run λ (a quarter of the budget: the paper's
    second reading), the same window at every slider start (onset_seeds), and the C1 conditions under
    `alt_protocol` (alt_n_seeds) for the sensitivity table. Every parameter is checked first."""
    P = get_profile(profile)
    planned = _looks(looks, n_seeds, P)
    protocol_name = protocol.resolve(protocol_name, P)
    lams = _protocols(protocol_name, alt_protocol, alt_window_lambda, window_lambda)
    fitted_reasoning = _fitted(fitted_reasoning)
    for flag, name in ((quarter_budget, "quarter_budget"), (full_equal_lambda, "full_equal_lambda")):
        if not isinstance(flag, bool):
            raise config.ConfigError(f"{name}: must be True or False, got {flag!r}")
    seeds = {protocol_name: P.seeds(n_seeds, first=first_seed)}
    if alt_protocol:
        seeds[alt_protocol] = P.seeds(alt_n_seeds)
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
        if not full_equal_lambda:
            del conds[("full, equal λ", math.nan)]
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
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds[protocol_name])} seeds"
               + (f" ({seeds[protocol_name][0]}–{seeds[protocol_name][-1]})" if first_seed else "")
               + (f" (the slider's other starts: {len(onset)})" if len(slider_starts) else "")
               + f"; C1 window [{c1_start}, {c1_end}) ({100 * window_frac:g} % of the run) at λ = "
               f"{lams[protocol_name]:g}, full-run λ {budget / P.steps:g} at equal budget, budget Σλ = {budget:g}"
               + (f"; the same window at λ {budget / P.steps:g} (a quarter of the budget)" if quarter_budget else "")
               + ("" if fitted_reasoning else "; reasoning read from OOD accuracy alone (the rule before 2026-12-06)")
               + (f"; {alt_protocol}: {len(seeds[alt_protocol])} seeds" if alt_protocol else ""))
    return _design(P, seeds, gamma, conditions, summary, close, budget, lams[protocol_name], onset, planned,
                   fitted_reasoning)


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
    per_run["close_ood"] = fates.ood_at(history, per_run, _close_steps(per_run, d.close, d.close["window"], length))
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
    sens = fates.sensitivity(per_run, main, _c1_select(), decide_c1, onsets if len(onsets) > 1 else None,
                             require_fit=d.fitted_reasoning)
    t = table.set_index("condition")
    strict = fates.with_fates(c1_runs, require_fit=True)  # reasoning that also ends with the training set fitted
    fitted = (strict["fate"] == "reasoning").groupby(strict["condition"]).sum()
    W, F, N = (float(t.loc[c, "final_ood"]) for c in ("window", "full, equal budget", "none"))
    n = len(d.seeds)
    seq_power = looks.power(decide_c1, PAPER_C1, d.looks)
    pw = seq_power["power"]
    quarter = _quarter_reading(runs, d) if QUARTER in present else {}
    numbers = {"verdict": verdict, "fixed_verdict": fixed_verdict, **looks.numbers("", seq, seq_power),
               "fitted_reasoning": d.fitted_reasoning, "first_seed": d.seeds[0], **quarter,
               "profile": params["profile"], "seeds": n, "gamma": float(params["gamma"]),
               "protocol": main, "window_lambda": d.window_lambda, "full_lambda": d.budget / d.steps,
               "power": pw, "seeds_for_80": fates.seeds_for_power(lambda r: decide_c1(r)[0], PAPER_C1),
               "old_rule_verdict": rule_history.verdict_c01(W, F, N), "headline": fates.headline(sens, verdict),
               "no_size_verdict": rule_history.without_size(parts),
               "fitted_verdict": fates.row_verdict(sens, main, fates.FITTED),
               "whatever_fit_verdict": fates.row_verdict(sens, main, fates.WHATEVER_FIT),
               **fates.part_numbers("", parts)}
    for c in C1_ORDER:
        key = C1_KEYS[c]
        if c not in present:  # a condition this design does not run: its numbers are blank
            numbers.update({f"{k}_{key}": math.nan for k in ("share", "share_lo", "share_hi", "ood", "max", "close",
                                                              "train")} | {f"k_{key}": 0, f"fit_{key}": 0})
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
            f"tables' row *final, fitted or not*), the verdict is {loose}.")


# --------------------------------------------------------------------------------------- C2, C3
def c02_c03_design(*, profile: str, n_seeds: int, gamma: float, placements: dict, window_frac: float,
                   window_lambda: float, span: list, onset_seeds: int = 0, onset_fracs: list | None = None,
                   alt_protocol: str = "", alt_window_lambda: float = 0.0, alt_n_seeds: int = 0,
                   protocol_name: str = "", looks: list | None = None, first_seed: int = 0,
                   fitted_reasoning: bool = True, sequential_c3: bool = False) -> PlacementDesign:
    """C2/C3's runs: the same budget Σλ in an early, a middle and a late window and over the paper's
    2,500-17,500 span scaled (`span`; [] leaves it out), against no weight decay (n_seeds from `first_seed`);
    the same window at the other onsets of `onset_fracs` (onset_seeds) and the placements under `alt_protocol`
    (alt_n_seeds), for the sensitivity table. n_seeds is one of C2's sequential design's `looks` (and C3's, with
    `sequential_c3`)."""
    P = get_profile(profile)
    planned = _looks(looks, n_seeds, P)
    protocol_name = protocol.resolve(protocol_name, P)
    lams = _protocols(protocol_name, alt_protocol, alt_window_lambda, window_lambda)
    places = checks.placements(placements, window_frac, ("early", "middle", "late"))
    fitted_reasoning = _fitted(fitted_reasoning)
    if not isinstance(sequential_c3, bool):
        raise config.ConfigError(f"sequential_c3: must be True or False, got {sequential_c3!r}")
    if not isinstance(span, list | tuple) or len(span) not in (0, 2):
        raise config.ConfigError(f"span: must be [start_frac, end_frac] or [], got {span!r}")
    seeds = {protocol_name: P.seeds(n_seeds, first=first_seed)}
    if alt_protocol:
        seeds[alt_protocol] = P.seeds(alt_n_seeds)
    others = checks.onset_fracs(onset_fracs, window_frac) if onset_fracs else []
    conditions, budget = {}, math.nan
    for proto, lam in lams.items():
        placed = {(name, math.nan): protocol.window(P, f, window_frac, lam) for name, f in places.items()}
        b = schedules.budget(next(iter(placed.values())), P.steps)
        conds = {("none", math.nan): config.WDSchedule.none(), **placed}
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
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {n} seeds"
               + (f" ({seeds[protocol_name][0]}–{seeds[protocol_name][-1]})" if first_seed else "") + "; windows "
               f"{100 * window_frac:g} % of the run at λ = {lams[protocol_name]:g} (early, middle, late at "
               + ", ".join(f"{P.step_at(f):,}" for f in places.values()) + f"), budget Σλ = {budget:g}"
               + (f"; other onsets: {len(P.seeds(onset_seeds))} seeds" if others else "")
               + ("" if fitted_reasoning else "; reasoning read from OOD accuracy alone (the rule before 2026-12-06)")
               + (f"; {alt_protocol}: {len(seeds[alt_protocol])} seeds" if alt_protocol else ""))
    d = _design(P, seeds, gamma, conditions, summary, close, budget, lams[protocol_name], P.seeds(onset_seeds),
                planned, fitted_reasoning)
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
    per_run["close_ood"] = fates.ood_at(history, per_run, _close_steps(per_run, d.close, d.close["middle"], length))
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
    sens2 = fates.sensitivity(per_run, main, _placement_select, decide_c2,
                              dict(sorted(by_onset.items())) if onsets else None, require_fit=d.fitted_reasoning)
    sens3 = fates.sensitivity(per_run, main, _placement_select, decide_c3,
                              {int(o): (lambda r, o=o: {("early" if o < middle_start else "late"):
                                                         fates.reasons(r, (r["condition"] == "onset")
                                                                       & (r["window_start"] == o)),
                                                         "none": fates.reasons(r, r["condition"] == "none")})
                               for o in onsets} if onsets else None, require_fit=d.fitted_reasoning)
    E, M, L, N = (float(t.loc[c, "final_ood"]) for c in ("early", "middle", "late", "none"))
    n = len(d.seeds)
    power_c2 = looks.power(decide_c2, PAPER_C2, d.looks)
    span_name = next((c for c in order if c.startswith("span")), None)
    numbers = {"profile": params["profile"], "seeds": n, "protocol": main, "window_lambda": d.window_lambda,
               "budget": d.budget, "verdict_c2": v2, "verdict_c3": v3,
               **looks.numbers("c2_", seq2, power_c2), "power_c2": power_c2["power"], "fixed_c2": fixed_c2,
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
