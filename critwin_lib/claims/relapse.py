"""The relapse after the C1 window, tested: many runs of the mid-run window reason when it closes and
lose it a few hundred steps later, once the training set is fitted. What keeps the reasoning solution?

Each seed's window run is branched at the window's end into (a) decay off, as C1's window; (b) the full-run λ of
equal budget continued to the end; (c) λ ramped linearly to 0 over a quarter of the window's length; and, from
the window's start, (d) the same window decaying every parameter (LayerNorm and biases too). A branch is its own
run whose schedule agrees with (a) up to the branch point: training is deterministic, so each branch replays
the shared prefix (the page checks that the prefixes agree). No claim of the paper is decided here; the page
compares the branches' fates paired by seed.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, schedules, stats
from critwin_lib.claims import core, fates
from critwin_lib.claims.core import SUCCESS_OOD, ClaimResult, Design, fetch
from critwin_lib.metrics import ANSWER_PREFIX
from critwin_lib.sizes import get_profile
from critwin_lib.tasks.anchor import composite_shift, trained_label_shift, training_pairs

BRANCHES = ("decay off", "full λ continued", "λ ramped to 0", "all parameters")
BASE = BRANCHES[0]
C1_RUNS = "C1's window runs"  # the same schedule as (a), as the C1 page trained it (other kernels)


@dataclass
class RelapseDesign(Design):
    schedules: dict[str, config.WDSchedule]
    start: int  # the window's first step
    end: int  # its end: the branch point of (b) and (c)
    steps: int
    full_lambda: float
    ramp: int  # the ramp's length in steps


def c01_relapse_design(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
                       window_lambda: float = 0.0, ramp_frac: float = 0.25,
                       protocol_name: str = "") -> RelapseDesign:
    """The four branches of the C1 window at `n_seeds` seeds; every parameter is checked first."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    lam = core.window_lambda(protocol_name, window_lambda)
    if checks.fraction(ramp_frac, "ramp_frac") == 0:
        raise config.ConfigError("ramp_frac: must be in (0, 1], got 0")
    start, end = protocol.window_steps(P, window_start_frac, window_frac)
    if end >= P.steps:
        raise config.ConfigError(f"window_start_frac: the window must close before the run ends (step {P.steps}) "
                                 f"to branch after it, got [{start}, {end})")
    full = lam * (end - start) / P.steps  # equal budget over the whole run
    ramp = max(1, min(P.steps - end, round(ramp_frac * (end - start))))
    window = ((start, end, lam),)
    # (a) says λ = 0 after the window explicitly: the same schedule as C1's window run but its own key, so that it
    # is trained beside the other branches and shares their prefix bit for bit (C1's own runs came from other
    # kernels: `c01_gap` compares the two)
    scheds = {"decay off": config.WDSchedule(windows=(*window, (end, P.steps, 0.0))),
              "full λ continued": config.WDSchedule(windows=(*window, (end, P.steps, full))),
              "λ ramped to 0": config.WDSchedule(windows=window, ramps=((end, end + ramp, lam, 0.0),)),
              "all parameters": config.WDSchedule(windows=window)}
    seeds = P.seeds(n_seeds)
    specs = []
    for name, wd in scheds.items():
        extra = {"wd_params": "all"} if name == "all parameters" else {}
        for s in seeds:
            cfg = protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name)
            if extra:
                cfg = dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, **extra))
            specs.append(({"branch": name, "seed": s}, cfg))
    specs += [({"branch": C1_RUNS, "seed": s}, protocol.anchor_run(P, s, config.WDSchedule(windows=window), gamma=gamma,
                                                                    protocol=protocol_name)) for s in seeds]
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds; window "
               f"[{start}, {end}) at λ = {lam:g}; after it (a) λ = 0, (b) λ = {full:g} to the end, (c) λ from "
               f"{lam:g} to 0 over [{end}, {end + ramp}); (d) the window on every parameter")
    return RelapseDesign(specs, summary, seeds, scheds, start, end, P.steps, full, ramp, protocol=protocol_name)


@dataclass
class RelapseResult(ClaimResult):
    per_run: pd.DataFrame
    table: pd.DataFrame
    parts: dict[str, fates.Comparison]
    answers: pd.DataFrame  # the answers to (4, 3) over training of one relapsing and one surviving seed
    curves: pd.DataFrame  # per branch and step, the share of seeds that reason (OOD > 0.5), bootstrap band
    schedules: pd.DataFrame  # each branch's λ(t)
    start: int
    end: int


def answer_shares(history: pd.DataFrame, variant: str) -> pd.DataFrame:
    """Per evaluation of one run: the share of (4, 3) answers that are x − 10 (reasoning), each trained pair's
    shift, and the most common other shift at the end (the wrong rule), long format (step, answer, share)."""
    trained = sorted({trained_label_shift(p, variant) for p in training_pairs(variant)})
    right = composite_shift(4, 3)
    cols = [c for c in history.columns if c.startswith(ANSWER_PREFIX) and c != ANSWER_PREFIX + "other"]
    h = history.dropna(subset=cols).drop_duplicates("step").sort_values("step")
    if h.empty:
        return pd.DataFrame(columns=["step", "answer", "share"])
    last = h.iloc[-1]
    others = [c for c in cols if int(c[len(ANSWER_PREFIX):]) not in (*trained, right)]
    wrong = max(others, key=lambda c: float(last[c]))
    parts = {f"x − {-right} (reasoning)": h[f"{ANSWER_PREFIX}{right:+d}"],
             **{f"x {s:+d} (trained)": h[f"{ANSWER_PREFIX}{s:+d}"] for s in trained},
             f"x {int(wrong[len(ANSWER_PREFIX):]):+d} (other rule)": h[wrong]}
    return pd.concat([pd.DataFrame({"step": h["step"].to_numpy(), "answer": k, "share": v.to_numpy()})
                      for k, v in parts.items()], ignore_index=True)


def _examples(history: pd.DataFrame, per_run: pd.DataFrame, variant: str) -> pd.DataFrame:
    """The answers over training of the lowest decay-off seed that relapses and of the lowest that survives
    (among runs with the answer histogram)."""
    base = per_run[(per_run["branch"] == BASE) & per_run["close_reasons"]]
    has = set(history.dropna(subset=[ANSWER_PREFIX + "-10"])["key"]) if ANSWER_PREFIX + "-10" in history else set()
    out = []
    for role, mask in (("relapses", base["relapsed"]), ("survives", ~base["relapsed"])):
        pick = base[mask & base["key"].isin(has)].sort_values("seed")
        if len(pick):
            r = pick.iloc[0]
            a = answer_shares(history[history["key"] == r["key"]], variant)
            out.append(a.assign(run=f"seed {int(r['seed'])} ({role})"))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=["step", "answer", "share", "run"])


def c01_relapse(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> RelapseResult:
    """The relapse branches: fates per branch (exact intervals), each branch against decay off paired by seed
    (exact McNemar), how many seeds reason when the window closes and how many of those lose it, and the answers
    to (4, 3) over training of a relapsing and a surviving seed."""
    d = c01_relapse_design(**params)
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run["close_ood"] = fates.ood_at(history, per_run, [d.end] * len(per_run))
    per_run["close_reasons"] = per_run["close_ood"] > SUCCESS_OOD
    per_run["relapsed"] = per_run["close_reasons"] & (per_run["fate"] != "reasoning")
    table = fates.share_table(per_run, ["branch"]).set_index("branch").loc[list(BRANCHES)]
    g = per_run.groupby("branch")
    table = table.join(pd.DataFrame({"reason_at_close": g["close_reasons"].sum().astype(int),
                                     "relapsed": g["relapsed"].sum().astype(int),
                                     "close_ood": g["close_ood"].mean(), "max_ood": g["max_ood"].mean(),
                                     "t_mem": g["t_mem"].mean()})).reset_index()
    r = {b: fates.reasons(per_run, per_run["branch"] == b) for b in BRANCHES}
    parts = {b: fates.beats(f"{b} beats decay off", r[b], r[BASE]) for b in BRANCHES[1:]}
    prefix = _prefix_gap(history, d.end, ("full λ continued", "λ ramped to 0"))
    c1 = per_run[per_run["branch"] == C1_RUNS].set_index("seed")["fate"]
    same = per_run[per_run["branch"] == BASE].set_index("seed")["fate"].eq(c1.reindex(r[BASE].index))
    n = len(d.seeds)
    numbers: dict[str, Any] = {"profile": params["profile"], "seeds": n, "window_start": d.start,
                               "window_end": d.end, "ramp_end": d.end + d.ramp, "full_lambda": d.full_lambda,
                               "prefix_gap": prefix, "c1_gap": _prefix_gap(history, d.end, (C1_RUNS,)),
                               "c1_same_fate": int(same.sum()), "c1_k": int((c1 == "reasoning").sum())}
    t = table.set_index("branch")
    for b in BRANCHES:
        key = _key(b)
        numbers.update({f"k_{key}": int(t.loc[b, "reasoning"]), f"close_{key}": int(t.loc[b, "reason_at_close"]),
                        f"relapsed_{key}": int(t.loc[b, "relapsed"]), f"ood_{key}": float(t.loc[b, "final_ood"]),
                        f"memorizing_{key}": int(t.loc[b, "memorizing"]),
                        f"other_rule_{key}": int(t.loc[b, "other_rule"])})
        if b in parts:
            numbers[f"p_{key}"] = parts[b].p
            numbers[f"state_{key}"] = parts[b].state
    variant = d.specs[0][1].task.variant
    curves = reasoning_share(history[history["branch"].isin(BRANCHES)])
    sched = schedules.schedule_frame(d.schedules, d.steps).assign(window_start=float(d.start))
    return RelapseResult(rows=[], numbers=numbers, summary=d.summary, per_run=per_run, table=table, parts=parts,
                         answers=_examples(history, per_run, variant), curves=curves, schedules=sched, start=d.start,
                         end=d.end)


def reasoning_share(history: pd.DataFrame) -> pd.DataFrame:
    """Per branch (as `condition`) and evaluation step: the share of seeds whose OOD accuracy is above 0.5, with
    its exact 95 % interval (columns condition, step, n, mean, lo, hi)."""
    h = history.drop_duplicates(["key", "step"])
    rows = []
    for (b, step), g in h.groupby(["branch", "step"], sort=False):
        k, n = int((g["acc/test_ood"] > SUCCESS_OOD).sum()), len(g)
        lo, hi = stats.binomial_ci(k, n)
        rows.append({"condition": b, "step": int(step), "n": n, "mean": k / n, "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def _key(branch: str) -> str:
    return {"decay off": "off", "full λ continued": "full", "λ ramped to 0": "ramp", "all parameters": "all"}[branch]


def _prefix_gap(history: pd.DataFrame, end: int, others: tuple[str, ...]) -> float:
    """The largest difference in OOD accuracy between decay off and `others` (runs that share its schedule up to
    the window's end), at any evaluation up to it, same seed: 0 when the replay is exact."""
    h = history[history["step"] <= end].drop_duplicates(["key", "step"])
    wide = h.pivot_table(index=["seed", "step"], columns="branch", values="acc/test_ood")
    gaps = [(wide[b] - wide[BASE]).abs().max() for b in others if b in wide]
    return float(max(gaps)) if gaps else math.nan
