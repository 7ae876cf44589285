"""Claim C8: is there a critical window on modular-arithmetic grokking? The paper says no: no window shows, and a
constant λ groks about 5× sooner than a window of the same budget (spec §6). The grokking reference run (Nanda et
al. 2023's setting) is `grok_reference`; the task's run sizes per profile are `sizes.GROK`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import schedules, stats
from critwin_lib.claims import fates, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, Design, fetch
from critwin_lib.claims.other_tasks import condition_tag, conditions
from critwin_lib.config import ModArithTask, RunConfig, WDSchedule
from critwin_lib.metrics import first_step_above, t_mem
from critwin_lib.schedules import schedule_frame
from critwin_lib.sizes import GROK, GROK_REFERENCE, Size, task_size

GROKKED_ACC = 0.99  # t_grok: the first evaluated step with test accuracy above this
GROK_REFERENCE_LAMBDA = 1.0


def grok_reference(profile: str) -> RunConfig:
    """The grokking reference run at a profile (quick and paper: the full reference)."""
    size = task_size(GROK_REFERENCE, profile, "the grokking reference")
    return size.run(ModArithTask(**size.task), 0, WDSchedule.constant(GROK_REFERENCE_LAMBDA))


def t_grok(history: pd.DataFrame, threshold: float = GROKKED_ACC, metric: str = "acc/test") -> float:
    """First evaluated step with test accuracy above `threshold` (NaN if never)."""
    return first_step_above(history, metric, threshold)


def censored_median(values: pd.Series, cap: float) -> float:
    """Median with 'never' (NaN) counted as later than anything: inf when half or more never got there."""
    v = np.sort(np.where(np.isnan(values.to_numpy(float)), np.inf, values.to_numpy(float)))
    med = float(np.median(v)) if len(v) else math.nan
    return med if med <= cap else math.inf


def fmt_steps(v: float) -> str:
    """A step count for text: 'never' when the threshold was not reached (NaN or inf)."""
    return "never" if not math.isfinite(v) else f"{v:.0f}"


# ------------------------------------------------------------------------------------------- C8
def grok_ratios(per_run: pd.DataFrame, window: str, constant: str, offset: int = 0) -> np.ndarray:
    """Per seed (paired): (t_grok of `window` − `offset`) / t_grok of `constant`. A seed that never groks counts
    as later than any step: inf when only the window never groks, 0 when only the constant never does, NaN
    (no information) when neither does."""
    w = per_run.loc[per_run["condition"] == window].set_index("seed")["t_grok"]
    c = per_run.loc[per_run["condition"] == constant].set_index("seed")["t_grok"]
    out = []
    for seed in sorted(set(w.index) & set(c.index)):
        tw, tc = float(w[seed]), float(c[seed])
        if math.isnan(tw) or math.isnan(tc):
            out.append(math.nan if math.isnan(tw) and math.isnan(tc) else (math.inf if math.isnan(tw) else 0.0))
        else:
            out.append(max(tw - offset, 0.0) / tc)
    return np.array(out, dtype=float)


def c08_speed(per_run: pd.DataFrame, windows: dict[str, int], constant: str, from_onset: bool,
              threshold: float = 1.0) -> tuple[str, dict[str, tuple[float, float, float]]]:
    """The part "the constant groks sooner than each window" (more than `threshold` times sooner): per window the
    median of the per-seed ratios with its bootstrap interval ((median, lo, hi)), and the part's state over all
    windows. Per window an exact sign test over seeds: holds when significantly more seeds have a ratio above
    `threshold` than below it, rejected when significantly more have one below. The rule's threshold is 1 since
    2026-12-06 (the paper's size is its own part, `c08_size`); it was rules.C8_FAST (2) before."""
    ratios = {w: grok_ratios(per_run, w, constant, onset if from_onset else 0) for w, onset in windows.items()}
    states = []
    for r in ratios.values():
        above, below = int((r > threshold).sum()), int((r < threshold).sum())
        states.append(fates.beats_counts(above, below)[0])
    return rules.all_of(states), {w: stats.median_ci(r) for w, r in ratios.items()}


def c08_size(cis: dict[str, tuple[float, float, float]]) -> str:
    """The part "the constant groks sooner by the paper's size", in the paper's own metric, the ratio of grokking
    times: for every window the 95 % interval of the median per-seed ratio reaches rules.C8_SIZE (holds), or for
    some window it lies below it (rejected: the data exclude the paper's ≈ 5×)."""
    return rules.all_of([rules.part_reaches(hi, rules.C8_SIZE) for _, _, hi in cis.values()])


POWER_SHARE = 0.9  # the paper's effect, per seed: a window's t_grok is above the constant's in 90 % of seeds


def c08_power(n: int, n_windows: int, share: float = POWER_SHARE) -> float:
    """The chance that the direction part holds with n seeds when every window groks in every seed and each seed's
    ratio exceeds 1 with probability `share`: each window's sign test must find it at α. (Were the paper's median
    ratio 5, its 95 % interval would reach 5 in about 97.5 % of designs: the size part costs little power.)"""
    from scipy.stats import binom

    k = next((k for k in range(n + 1) if fates.beats_counts(k, n - k)[1] < rules.ALPHA), None)
    if k is None or stats.binomial_ci(n, n)[0] < 0.5:  # even n of n cannot decide a part
        return 0.0
    return float(binom.sf(k - 1, n, share) ** n_windows)


def ratio_text(m: float, lo: float, hi: float) -> str:
    def f(v: float) -> str:
        return "never" if v == math.inf else ("n/a" if math.isnan(v) else f"{v:.2g}")

    return f"{f(m)}× [{f(lo)}, {f(hi)}]"


@dataclass
class GrokDesign(Design):
    size: Size
    task: ModArithTask
    conditions: dict[str, WDSchedule]
    reference: RunConfig


def c08_design(*, profile: str, n_seeds: int, constant_lambdas: list, budget_lambda: float, placements: dict,
               window_frac: float) -> GrokDesign:
    """C8's runs: no weight decay, constant λ (a small grid: the tuned one is the fastest) and 25 % windows
    carrying the budget of constant `budget_lambda`, every seed; plus the reference run."""
    size = task_size(GROK, profile, "C8")
    seeds = size.seeds(n_seeds)
    task = ModArithTask(**size.task)
    conds = conditions(size, constant_lambdas, budget_lambda, placements, window_frac)
    specs = [({"condition": name, "seed": s}, size.run(task, s, wd)) for name, wd in conds.items() for s in seeds]
    ref = grok_reference(profile)
    specs.append(({"condition": "reference", "seed": 0}, ref))
    summary = (f"profile {profile}: (a + b) mod {task.p}, {task.train_frac:.0%} training pairs, {size.steps} steps, "
               f"{len(seeds)} seeds, {len(specs)} runs (with the reference run, {ref.train.steps} steps)")
    return GrokDesign(specs, summary, seeds, size, task, conds, ref)


@dataclass
class GrokResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame
    schedules: pd.DataFrame
    reference: pd.DataFrame
    order: list[str]
    budget: float
    sensitivity: pd.DataFrame  # the speed part and the verdict under each way of counting (the rule's row marked)


def _grok_table(per_run: pd.DataFrame, conds: dict[str, WDSchedule], steps: int) -> pd.DataFrame:
    """Per condition (in design order): seeds, mean final test accuracy with its interval, seeds that grok, the
    censored median t_grok, mean t_mem and final training accuracy."""
    g = per_run.groupby("condition", sort=False)
    table = stats.mean_ci(per_run, ["condition"], "final_test").rename(
        columns={"mean": "final_test", "lo": "test_lo", "hi": "test_hi", "n": "seeds"})
    return table.merge(pd.DataFrame({
        "grokked": g["grokked"].sum().astype(int),
        "t_grok_median": g["t_grok"].apply(lambda v: censored_median(v, steps)),
        "t_mem": g["t_mem"].mean(),
        "final_train": g["final_train"].mean(),
    }).reset_index(), on="condition").set_index("condition").loc[list(conds)]


@dataclass
class _C8Decision:
    parts: dict[str, str]
    verdict: str
    shares: dict[str, tuple[float, float]]  # each window's share of seeds that grok, exact interval
    speed: dict[tuple[bool, str], tuple[str, dict]]  # (from onset, constant) → (part, ratio intervals)
    sensitivity: pd.DataFrame
    twice_verdict: str  # the rule before 2026-12-06: sign tests against a ratio of 2, no size part


def _c08_decide(table: pd.DataFrame, per_run: pd.DataFrame, conds: dict[str, WDSchedule], windows: list[str],
                same: str, best: str) -> _C8Decision:
    """The rule: every window groks in most seeds (exact intervals), and the constant with the windows' budget
    groks ≥ C8_FAST× sooner than each window, per seed, counted from step 0; and the same speed part under each
    way of counting (from the window's onset, against the best constant), for the sensitivity table."""
    shares = {w: stats.binomial_ci(int(table.loc[w, "grokked"]), int(table.loc[w, "seeds"])) for w in windows}
    part_none = rules.all_of([rules.part_at_least(lo, hi, 0.5) for lo, hi in shares.values()])
    onsets_ = {w: conds[w].windows[0][0] for w in windows}
    choices = [(f, c) for f in (False, True) for c in dict.fromkeys([same, best])]
    speed = {(f, c): c08_speed(per_run, onsets_, c, f) for f, c in choices}
    parts = {"no window": part_none, "constant sooner at the same budget": speed[(False, same)][0],
             "by the paper's size": c08_size(speed[(False, same)][1])}
    sensitivity = pd.DataFrame([
        {"time counted from": "the window's onset" if f else "step 0", "constant": c,
         **{w: ratio_text(*ci) for w, ci in cis.items()}, "sooner": st, "size": c08_size(cis),
         "verdict": rules.combine({**parts, "constant sooner at the same budget": st,
                                   "by the paper's size": c08_size(cis)}),
         "rule": not f and c == same} for (f, c), (st, cis) in speed.items()])
    old = c08_speed(per_run, onsets_, same, False, rules.C8_FAST)[0]  # the rule of 2026-12-01 to 2026-12-06
    unsized = rules.combine({"no window": part_none, "constant sooner at the same budget": old})
    return _C8Decision(parts, rules.combine(parts), shares, speed, sensitivity, unsized)


def c08(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> GrokResult:
    """C8: grokking under no weight decay, constant λ and 25 % windows of one budget; plus the reference run. The
    verdict combines "no window" (every window groks in most seeds) with `c08_speed` (the page states the rule)."""
    d = c08_design(**params)
    size, conds, seeds = d.size, d.conditions, d.seeds
    history, per_run = fetch(d.specs, results_dir, train_missing, workers, fates=False)
    history, ref_hist = history[history["condition"] != "reference"], history[history["condition"] == "reference"]
    per_run = per_run[per_run["condition"] != "reference"].copy()
    per_run["t_grok"] = [t_grok(history[history["key"] == k]) for k in per_run["key"]]
    per_run["grokked"] = per_run["final_test"] > GROKKED_ACC
    table = _grok_table(per_run, conds, size.steps)
    consts = [c for c in conds if c.startswith("constant")]
    best = sorted(consts, key=lambda c: (-table.loc[c, "grokked"], table.loc[c, "t_grok_median"]))[0]
    windows = list(params["placements"])
    same = f"constant λ={float(params['budget_lambda']):g}"  # the constant with the windows' budget, when run
    decision = _c08_decide(table, per_run, conds, windows, same, best)
    ref_row = ref_hist.sort_values("step")
    numbers = _c08_numbers(params, d, table, per_run, decision, windows, same, best, ref_row)
    rows = [_c08_row(numbers, table, windows, same, len(seeds), t_grok(ref_row), t_mem(ref_row))]
    numbers["ours"] = rows[0]["ours"]
    curves = stats.mean_ci(history, ["condition", "step"], "acc/test")
    ref_long = ref_row.melt(id_vars=["step"], value_vars=["acc/train", "acc/test"], var_name="split",
                            value_name="accuracy")
    ref_long["split"] = ref_long["split"].str.replace("acc/", "")
    sched = schedule_frame(conds, size.steps)
    return GrokResult(rows=rows, numbers=numbers, summary=d.summary, history=history, per_run=per_run,
                      table=table.reset_index(), curves=curves, schedules=sched, reference=ref_long, order=list(conds),
                      budget=schedules.budget(conds[windows[0]], size.steps), sensitivity=decision.sensitivity)


def _c08_numbers(params: dict[str, Any], d: GrokDesign, table: pd.DataFrame, per_run: pd.DataFrame,
                 decision: _C8Decision, windows: list[str], same: str, best: str, ref_row: pd.DataFrame
                 ) -> dict[str, Any]:
    """C8's glued numbers: the medians and their ratios, the parts, the power, the reference run, per condition."""
    size, conds, budget_lambda = d.size, d.conditions, params["budget_lambda"]
    win_median = censored_median(per_run[per_run["condition"].isin(windows)]["t_grok"], size.steps)
    t_best = float(table.loc[best, "t_grok_median"])
    ratio = win_median / t_best if math.isfinite(t_best) and t_best > 0 else math.nan
    lower_bound = not math.isfinite(win_median)
    if lower_bound and math.isfinite(t_best):
        ratio = size.steps / t_best  # at least: the windows' median is past the end of the run
    t_same = float(table.loc[same, "t_grok_median"]) if same in table.index else math.nan
    no_window = all(table.loc[w, "grokked"] >= table.loc[w, "seeds"] / 2 for w in windows)
    ref_grok, ref_mem = t_grok(ref_row), t_mem(ref_row)
    speed, cis = decision.speed, decision.speed[(False, same)][1]
    numbers = {"profile": params["profile"], "seeds": len(d.seeds), "steps": size.steps, "p": d.task.p,
               "train_frac": d.task.train_frac, "budget_lambda": float(budget_lambda),
               "window_lambda": float(budget_lambda) / params["window_frac"], "best_constant": best,
               "t_grok_best": t_best, "t_grok_windows": win_median, "ratio": ratio, "ratio_is_lower_bound": lower_bound,
               "t_grok_same_budget": t_same,
               "ratio_same_budget": win_median / t_same if math.isfinite(t_same) and t_same > 0 else math.nan,
               "no_window": bool(no_window), "verdict": decision.verdict,
               "old_rule_verdict": rule_history.verdict_c08(no_window, ratio),
               "part_no_window": decision.parts["no window"],
               "part_faster": decision.parts["constant sooner at the same budget"], "fast": rules.C8_FAST,
               "part_size": decision.parts["by the paper's size"], "size": rules.C8_SIZE,
               "twice_verdict": decision.twice_verdict,
               "power": c08_power(len(d.seeds), len(windows)), "power_share": POWER_SHARE,
               "power_16": c08_power(16, len(windows)),
               "ratios_text": "; ".join(f"{w} {ratio_text(*ci)}" for w, ci in cis.items()),
               "onset_ratios_text": "; ".join(f"{w} {ratio_text(*ci)}" for w, ci in speed[(True, same)][1].items()),
               "ref_steps": d.reference.train.steps, "ref_p": d.reference.task.p,
               "ref_train_frac": d.reference.task.train_frac, "ref_t_fit": ref_mem, "ref_t_grok": ref_grok,
               "ref_delay": ref_grok / ref_mem if ref_mem > 0 else math.nan,
               "ref_final_test": float(ref_row["acc/test"].iloc[-1])}
    for w in windows:  # how long after its window opens each placement groks
        start = conds[w].windows[0][0]
        numbers[f"after_onset_{w}"] = censored_median(per_run.loc[per_run["condition"] == w, "t_grok"] - start,
                                                       size.steps)
    for w, (lo, hi) in decision.shares.items():
        numbers[f"share_{w}_lo"], numbers[f"share_{w}_hi"] = lo, hi
    for c in conds:
        tag = condition_tag(c)
        numbers[f"grokked_{tag}"] = int(table.loc[c, "grokked"])
        numbers[f"test_{tag}"] = float(table.loc[c, "final_test"])
        numbers[f"t_grok_{tag}"] = float(table.loc[c, "t_grok_median"])
    return numbers


def _c08_row(numbers: dict[str, Any], table: pd.DataFrame, windows: list[str], same: str, n: int, ref_grok: float,
             ref_mem: float) -> dict[str, Any]:
    groks = ", ".join(f"{w} {int(table.loc[w, 'grokked'])}/{n}" for w in windows)
    return {"claim": "C8", "statement": "grokking (modular arithmetic) shows no critical window; constant WD "
                                        "groks faster than windowed",
            "paper": "no window; constant ≈ 5x faster",
            "ours": f"windows grok: {groks}; t_grok window / {same} (same budget, per seed, median "
                    f"[95 %]): {numbers['ratios_text']}; from the window's onset: {numbers['onset_ratios_text']}; "
                    f"reference run groks at {fmt_steps(ref_grok)} (fits at {fmt_steps(ref_mem)})",
            "profile": numbers["profile"], "seeds": n, "verdict": numbers["verdict"]}
