"""Claims C6 and C7: is the basin of the reasoning solution smaller at a small init scale γ (C6: 8 of 12 seeds
reason at γ 0.5 against 12 of 12 at γ 1.1), and is a moderate γ, 0.7 to 1.1, best (C7)?

Why two designs. Until its runs were stored the rules read one fixed window (the C1 window), with a second placement
in the sensitivity table. But the window moves with γ (C5), so one window is early for one γ and late for another:
it measures timing as much as a basin. The design registered on 2026-12-06, before its runs, places three windows
(early, middle, late) at every γ and reads each seed's *basin share* at a γ, the share of the three in which it
reasons; C6 and C7 then compare seeds with themselves across γ (their rules are in `basin_share`). The one-window rules
(`c06_part`, `c07_parts`) stay: the earlier design was read by them (`EARLIER`, what it said is on the page), and
the pooled design's sensitivity table applies them to each window alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import checks, config, protocol, stats
from critwin_lib.claims import fates, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.basin_share import (
    C6_GAMMAS,
    C6_PAPER_SHARES,
    C7_PARTS,
    NONE,
    c06_pooled,
    c07_pooled,
    observed_power,
    pooled_power,
    pooled_table,
    seed_shares,
    unfitted,
)
from critwin_lib.claims.core import SUCCESS_OOD, ClaimResult, Design, condition_table, fetch, gamma_list, tag
from critwin_lib.sizes import get_profile

POWER_DRAWS = 10_000
# How a seed counts as reasoning, per sensitivity row: the rules' fate (fitted), OOD accuracy alone, or OOD accuracy
# at its best evaluation (columns `<key>_success` of the page's runs).
SUCCESS = {"final": fates.REASONS_FITTED, "any": "final OOD > 0.5, fitted or not", "max": "max OOD over training > 0.5"}
# The one-window design the page read before the pooled one: its first window, 12 seeds, these γ (its runs are
# part of the pooled design, so the page recomputes what it said).
EARLIER = {"n_seeds": 12, "gammas": (0.5, 0.7, 1.0, 1.1, 1.5)}


@dataclass
class BasinDesign(Design):
    gammas: list[float]
    windows: dict[str, config.WDSchedule]  # name: schedule; with `pooled` False the first is the rule's
    window_lambda: float
    pooled: bool = False  # the rules read each seed's share over all windows (the design of 2026-12-06)
    none: bool = False  # runs without weight decay at every γ, a reference the rules do not read


def c06_c07_design(*, profile: str, n_seeds: int, gammas: list, windows: dict, window_frac: float,
                   protocol_name: str = "", pooled: bool = False, none: bool = False) -> BasinDesign:
    """C6/C7's runs: each placed window ({name: start fraction}) at every γ, the same seeds; with `none`, also no
    weight decay at every γ. `pooled`: the rules read each seed's share of the windows in which it reasons
    (at least two windows); otherwise the first window's fates."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    gammas = gamma_list(gammas)
    missing = [g for g in C6_GAMMAS if g not in gammas]
    if missing:
        raise config.ConfigError(f"gammas: must include {list(C6_GAMMAS)} (the paper's comparison), missing {missing}")
    checks.flag(pooled, "pooled")
    checks.flag(none, "none")
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    places = checks.placements(windows, window_frac, field="windows")
    if NONE in places:
        raise config.ConfigError(f"windows: {NONE!r} names the runs without weight decay; call the window otherwise")
    if pooled and len(places) < 2:
        raise config.ConfigError(f"windows: pooling needs at least two windows, got {windows!r}")
    wds = {name: protocol.window(P, start, window_frac, pr.window_lambda) for name, start in places.items()}
    runs = {**wds, **({NONE: config.WDSchedule.none()} if none else {})}
    specs = [({"window": name, "gamma": g, "seed": s}, protocol.anchor_run(P, s, wd, gamma=g, protocol=protocol_name))
             for name, wd in runs.items() for g in gammas for s in seeds]
    where = ", ".join(f"{name} {wd.windows[0][:2]}" for name, wd in wds.items())
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds, γ {gammas}, "
        f"windows {where} at λ {pr.window_lambda:g}{' and no weight decay' if none else ''}, {len(specs)} runs"
        + ("; the rules read each seed's share over the windows" if pooled else ""))
    return BasinDesign(specs, summary, seeds, gammas, wds, pr.window_lambda, pooled=pooled, none=none,
                       protocol=protocol_name)


# ------------------------------------------------------------------------------ the one-window rules (until 12-06)
def c06_part(b: int, c: int, n: int) -> str:
    """C6's one part, "more seeds reason at γ 1.1 than at γ 0.5", on seeds shared by the two γ: b reason at 1.1
    only, c at 0.5 only. Holds on an exact one-sided McNemar test at α; rejected when the reverse is significant
    or when Tango's 95 % interval of the share difference lies below C6_GAP (the data exclude the paper's size)."""
    state = fates.beats_counts(b, c)[0]
    if state == rules.UNDECIDED and n and stats.tango_ci(b, c, n)[2] < rules.C6_GAP:
        return rules.REJECTED
    return state


def c07_parts(basin: pd.DataFrame) -> dict[str, str]:
    """C7's parts, "the moderate range [0.7, 1.1] beats the smallest γ" and "... the largest γ": the moderate γ's
    seeds pooled against each extreme's, one-sided Fisher exact tests (basin: gamma, reasoning, seeds)."""
    lo, hi = rules.C7_RANGE
    mid = basin[(basin["gamma"] >= lo) & (basin["gamma"] <= hi)]
    k, n = int(mid["reasoning"].sum()), int(mid["seeds"].sum())
    parts = {}
    for label, row in zip(C7_PARTS, (basin.iloc[0], basin.iloc[-1]), strict=True):
        if not n or lo <= row["gamma"] <= hi:  # no moderate γ, or the extreme is itself moderate
            parts[label] = rules.UNDECIDED
            continue
        ke, ne = int(row["reasoning"]), int(row["seeds"])
        parts[label] = rules.part_beats(stats.fisher_exact(k, n, ke, ne, "greater"),
                                        stats.fisher_exact(k, n, ke, ne, "less"))
    return parts


def c06_power(n: int, shares: tuple[float, float] = C6_PAPER_SHARES, draws: int = POWER_DRAWS) -> float:
    """The chance that C6's one-window rule says "reproduced" with n seeds per γ if the paper's shares were the
    truth (seeds independent across γ), by simulation through `c06_part`."""
    rng = np.random.default_rng(0)
    small, ref = rng.random((draws, n)) < shares[0], rng.random((draws, n)) < shares[1]
    b, c = (ref & ~small).sum(axis=1), (small & ~ref).sum(axis=1)
    counts = pd.Series(list(zip(b.tolist(), c.tolist(), strict=True))).value_counts()
    hits = sum(cnt for (bb, cc), cnt in counts.items() if c06_part(bb, cc, n) == rules.HOLDS)
    return float(hits / draws)


# ------------------------------------------------------------------------------------------------ the page
def _basin(per_run: pd.DataFrame, gammas: list[float]) -> pd.DataFrame:
    basin = condition_table(per_run, ["gamma"]).sort_values("gamma").reset_index(drop=True)
    basin["share"] = basin["reasoning"] / basin["seeds"]
    cis = [stats.binomial_ci(int(k), int(n)) for k, n in zip(basin["reasoning"], basin["seeds"], strict=True)]
    basin["share_lo"], basin["share_hi"] = [c[0] for c in cis], [c[1] for c in cis]
    return basin.merge(onsets.gamma_conventions(gammas), on="gamma")


def _basin_verdicts(per_run: pd.DataFrame, gammas: list[float], success: str) -> dict[str, Any]:
    """Both one-window rules on one window's runs, a seed reasoning when `success` (a per-run boolean column) is
    true."""
    runs = per_run.assign(fate=np.where(per_run[success], "reasoning", "other"))
    basin = _basin(runs, gammas)
    small, ref = (runs[runs["gamma"] == g].set_index("seed")["fate"] == "reasoning" for g in C6_GAMMAS)
    seeds = sorted(set(small.index) & set(ref.index))
    b = int((ref[seeds] & ~small[seeds]).sum())
    c = int((small[seeds] & ~ref[seeds]).sum())
    by = basin.set_index("gamma")
    k0, n0, k1, n1 = (int(by.loc[g, col]) for g in C6_GAMMAS for col in ("reasoning", "seeds"))
    p7 = c07_parts(basin)
    _, p_more, p_less = fates.beats_counts(b, c)
    return {"c6": rules.combine({"γ 1.1 above γ 0.5": c06_part(b, c, len(seeds))}), "c7": rules.combine(p7),
            "c7_parts": p7, "b": b, "c": c, "k0": k0, "n0": n0, "k1": k1, "n1": n1,
            "mcnemar_p": p_more, "mcnemar_p_reverse": p_less,
            "fisher_p": stats.fisher_exact(k1, n1, k0, n0, "greater"),
            "diff": stats.tango_ci(b, c, len(seeds)), "basin": basin}


@dataclass
class BasinResult(ClaimResult):
    basin: pd.DataFrame  # the rule's window
    per_run: pd.DataFrame
    curves: pd.DataFrame
    steps: int
    window: tuple[int, int, float]  # the rule's window
    basins: pd.DataFrame  # every window (column `window`)
    sensitivity: pd.DataFrame  # the verdicts under each window and success metric (the rule's row marked)
    pooled: pd.DataFrame | None = None  # with the pooled design: `pooled_table`, the rules' basin


def c06_c07(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> BasinResult:
    """C6 and C7: at each γ, the seeds that reason (training set fitted, final OOD > 0.5) under each placed window
    (the basin of the reasoning solution), with exact binomial intervals; the one-window rules read the first
    window, the pooled rules (with `pooled`) every window (rules in the notebook)."""
    d = c06_c07_design(**params)
    P = get_profile(params["profile"])
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run["final_success"] = per_run["fate"] == "reasoning"
    per_run["any_success"] = per_run["final_ood"] > SUCCESS_OOD
    per_run["max_success"] = per_run["max_ood"] > SUCCESS_OOD
    names = list(d.windows)
    rule_window = names[0]
    found = {(w, m): _basin_verdicts(per_run[per_run["window"] == w], d.gammas, f"{m}_success")
             for w in names for m in SUCCESS}
    v = found[(rule_window, "final")]
    basins = pd.concat([_basin(per_run[per_run["window"] == w], d.gammas).assign(window=w)
                        for w in names + ([NONE] if d.none else [])], ignore_index=True)
    basin = basins[basins["window"] == rule_window].drop(columns="window").reset_index(drop=True)
    old = found[("early" if "early" in names else rule_window, "final")]["basin"]  # the old rules read early
    v7 = rule_history.verdict_c07(old)[0]  # the old C7 rule: the γ with most reasoning seeds
    best = rule_history.verdict_c07(basin)[1]
    old_small, old_ref = (old.set_index("gamma").loc[g, "share"] for g in C6_GAMMAS)
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": v["c6"], "verdict_c7": v["c7"],
               "best_gamma": best, "protocol": d.protocol,
               "rule_window": rule_window, "window_start": d.windows[rule_window].windows[0][0],
               "window_end": d.windows[rule_window].windows[0][1], "window_lambda": d.window_lambda,
               "fisher_p": v["fisher_p"], "mcnemar_p": v["mcnemar_p"], "b": v["b"], "c": v["c"],
               "mcnemar_text": f"exact one-sided McNemar p {v['mcnemar_p']:.3f} for more reasoning seeds at γ 1.1, "
                               f"{v['mcnemar_p_reverse']:.3f} for more at γ 0.5",
               "diff": v["diff"][0], "diff_lo": v["diff"][1], "diff_hi": v["diff"][2], "gap": rules.C6_GAP,
               "power": c06_power(len(d.seeds)), "power_12": c06_power(12), "power_24": c06_power(24),
               "c7_smallest": v["c7_parts"][C7_PARTS[0]], "c7_largest": v["c7_parts"][C7_PARTS[1]],
               "old_rule_verdict": rule_history.verdict_c06(old_small, old_ref), "old_rule_verdict_c7": v7,
               "sigma0": protocol.SIGMA0,
               "pooled_power": pooled_power(len(d.seeds)),
               "pooled_power_agree": pooled_power(len(d.seeds), agree=True)}
    for r in basin.to_dict("records"):
        t = tag(r["gamma"])
        numbers.update({f"k_{t}": int(r["reasoning"]), f"n_{t}": int(r["seeds"]), f"share_lo_{t}": r["share_lo"],
                        f"share_hi_{t}": r["share_hi"], f"ood_{t}": r["final_ood"], f"std_{t}": r["std"]})
    for w in names[1:]:
        wt = w.replace(" ", "_")
        numbers.update({f"{wt}_verdict": found[(w, "final")]["c6"], f"{wt}_verdict_c7": found[(w, "final")]["c7"],
                        f"{wt}_k_g0p5": found[(w, "final")]["k0"], f"{wt}_k_g1p1": found[(w, "final")]["k1"],
                        f"{wt}_n": found[(w, "final")]["n0"]})
    sensitivity = pd.DataFrame([
        {"window": w, "a seed reasons when": SUCCESS[m],
         "γ 0.5": f"{f['k0']}/{f['n0']}", "γ 1.1": f"{f['k1']}/{f['n1']}", "McNemar p": round(f["mcnemar_p"], 3),
         "C6": f["c6"], "C7": f["c7"], "rule": w == rule_window and m == "final" and not d.pooled}
        for (w, m), f in found.items()])
    counts = ", ".join(f"γ {r['gamma']:g}: {int(r['reasoning'])}/{int(r['seeds'])}" for r in basin.to_dict("records"))
    rows = [{"claim": "C6", "statement": "the basin of the reasoning solution shrinks at small init",
             "paper": "γ 0.5: 8/12 seeds reach OOD > 0.5; γ 1.1: 12/12",
             "ours": f"{rule_window}: {counts} (γ 1.1 − γ 0.5 {v['diff'][0]:+.2f} [{v['diff'][1]:+.2f}, "
                     f"{v['diff'][2]:+.2f}], paired by seed; {numbers['mcnemar_text']})",
             "profile": P.name, "seeds": len(d.seeds), "verdict": v["c6"]},
            {"claim": "C7", "statement": "a moderate init scale is best", "paper": "γ ∈ [0.7, 1.1]",
             "ours": f"{rule_window}: γ 0.7-1.1 pooled vs γ {d.gammas[0]:g}: {v['c7_parts'][C7_PARTS[0]]}, "
                     f"vs γ {d.gammas[-1]:g}: {v['c7_parts'][C7_PARTS[1]]} ({counts})",
             "profile": P.name, "seeds": len(d.seeds), "verdict": v["c7"]}]
    pooled = None
    if d.pooled:
        pooled, rows, sensitivity = _pooled_reading(per_run, d, numbers, rows, sensitivity)
    curves = stats.mean_ci(history[history["window"] == rule_window], ["gamma", "step"], "acc/test_ood")
    return BasinResult(rows=rows, numbers=numbers, summary=d.summary, basin=basin, per_run=per_run, curves=curves,
                       steps=P.steps, window=d.windows[rule_window].windows[0], basins=basins, sensitivity=sensitivity,
                       pooled=pooled)


def earlier_reading(runs: pd.DataFrame, d: BasinDesign) -> dict[str, Any]:
    """What the one-window design read before the pooled one (`EARLIER`: its seeds and γ under the first window)
    says on the runs it shares with this design: `earlier_*` numbers (verdicts, reasoning seeds at γ 0.5 and 1.1,
    seeds); none when this design lacks its γ."""
    gammas = [g for g in EARLIER["gammas"] if g in d.gammas]
    if len(gammas) != len(EARLIER["gammas"]):
        return {}
    seeds = d.seeds[:EARLIER["n_seeds"]]
    mine = runs[(runs["window"] == next(iter(d.windows))) & runs["seed"].isin(seeds) & runs["gamma"].isin(gammas)]
    v = _basin_verdicts(mine, gammas, "final_success")
    return {"earlier_verdict": v["c6"], "earlier_verdict_c7": v["c7"], "earlier_k_g0p5": v["k0"],
            "earlier_k_g1p1": v["k1"], "earlier_n": v["n0"], "earlier_c7_smallest": v["c7_parts"][C7_PARTS[0]],
            "earlier_c7_largest": v["c7_parts"][C7_PARTS[1]]}


def _pooled_reading(per_run: pd.DataFrame, d: BasinDesign, numbers: dict[str, Any], rows: list[dict[str, Any]],
                    sensitivity: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]], pd.DataFrame]:
    """The pooled design's verdicts (they replace the one-window ones as the page's verdicts, which move to
    `one_window_...` numbers), its basin table, scoreboard rows and the sensitivity rows of each window alone."""
    windowed = per_run[per_run["window"] != NONE]
    shares = seed_shares(windowed)
    c6, c7 = c06_pooled(shares), c07_pooled(shares)
    verdict_c7 = rules.combine({k: v["state"] for k, v in c7.items()})
    seen = observed_power(windowed)
    numbers.update({"one_window_verdict": numbers["verdict"], "one_window_verdict_c7": numbers["verdict_c7"],
                    "verdict": rules.combine({"γ 1.1 above γ 0.5": c6["state"]}), "verdict_c7": verdict_c7,
                    "pooled_diff": c6["diff"], "pooled_lo": c6["lo"], "pooled_hi": c6["hi"], "pooled_p": c6["p"],
                    "pooled_p_other": c6["p_other"], "pooled_n": c6["n"], "observed_power": seen["c6"],
                    "observed_power_c7": seen["c7"], "c7_smallest": c7[C7_PARTS[0]]["state"],
                    "c7_largest": c7[C7_PARTS[1]]["state"]})
    for key, part in zip(("smallest", "largest"), C7_PARTS, strict=True):
        numbers.update({f"c7_{key}_{k}": c7[part][k] for k in ("diff", "lo", "hi", "p_holm", "p_other_holm", "gamma")})
    table = pooled_table(per_run, d.gammas)
    for r in table.to_dict("records"):
        t = tag(r["gamma"])
        numbers.update({f"basin_{t}": r["share"], f"basin_lo_{t}": r["share_lo"], f"basin_hi_{t}": r["share_hi"]})
    numbers.update(earlier_reading(windowed, d))
    text = ", ".join(f"γ {r.gamma:g}: {r.share:.2f}" for r in table.itertuples())
    rows[0].update(verdict=numbers["verdict"], ours=f"basin share over {len(d.windows)} windows: {text} (γ 1.1 − "
                   f"γ 0.5 per seed {c6['diff']:+.2f} [{c6['lo']:+.2f}, {c6['hi']:+.2f}], sign-flip p {c6['p']:.3f})")
    rows[1].update(verdict=verdict_c7, ours=f"basin share over {len(d.windows)} windows: {text} (moderate γ vs "
                   f"γ {c7[C7_PARTS[0]]['gamma']:g}: {c7[C7_PARTS[0]]['state']}, vs γ {c7[C7_PARTS[1]]['gamma']:g}: "
                   f"{c7[C7_PARTS[1]]['state']}, Holm)")
    alone = []
    for w, f in windowed.groupby("window", sort=False):
        s = seed_shares(f)
        alone.append(_shares_row(s, f"{w} alone", fates.REASONS_FITTED,
                                 (f"{int(s[g].sum())}/{len(s)}" for g in C6_GAMMAS)))
    pooled_rows = []
    for m, label in SUCCESS.items():  # the rules' metric first: its row is the verdict
        s = seed_shares(windowed.assign(fate=np.where(windowed[f"{m}_success"], "reasoning", "other")))
        pooled_rows.append(_shares_row(s, f"pooled over {len(d.windows)}", label,
                                       (f"{s[g].mean():.2f}" for g in C6_GAMMAS), rule=m == "final"))
        numbers.update({f"pooled_{m}_verdict": pooled_rows[-1]["C6"], f"pooled_{m}_verdict_c7": pooled_rows[-1]["C7"]})
    numbers.update(unfitted(windowed))
    if "unfitted_window" in numbers:
        numbers["unfitted_window_end"] = d.windows[numbers["unfitted_window"]].windows[-1][1]
    shares = pd.DataFrame(pooled_rows[:1] + alone + pooled_rows[1:]).assign(rules="basin share (sign-flip, Holm)")
    one = sensitivity.rename(columns={"McNemar p": "C6 p"}).assign(rules="one window (McNemar, Fisher)")
    sensitivity = pd.concat([shares, one], ignore_index=True)
    sensitivity = sensitivity[["window", "rules", *(c for c in sensitivity if c not in ("window", "rules"))]]
    return table, rows, sensitivity


def _shares_row(s: pd.DataFrame, window: str, label: str, at: Any, rule: bool = False) -> dict[str, Any]:
    """One basin-share row of the sensitivity table: both rules on the seed shares `s`, `at` the γ 0.5 and 1.1
    cells as shown."""
    a6, a7 = c06_pooled(s), c07_pooled(s)
    small, ref = at
    return {"window": window, "a seed reasons when": label, "γ 0.5": small, "γ 1.1": ref, "C6 p": round(a6["p"], 3),
            "C6": rules.combine({"c6": a6["state"]}), "C7": rules.combine({k: v["state"] for k, v in a7.items()}),
            "rule": rule}


def verdict_text(r: BasinResult) -> list[str]:
    """The page's two verdict paragraphs (Markdown), C6's and C7's, from a `c06_c07` result: over the pooled
    windows where the design pools them, otherwise under its one window."""
    n = r.numbers
    if r.pooled is not None:
        shares = ", ".join(f"γ {g.gamma:g}: {g.share:.2f} [{g.share_lo:.2f}, {g.share_hi:.2f}]"
                           for g in r.pooled.itertuples())
        c6 = (f"**C6 verdict: {n['verdict']}.** Basin share (the share of the three windows in which a seed reasons, "
              f"mean over seeds with its bootstrap 95 % interval): {shares}. Per seed, γ 1.1 minus γ 0.5: "
              f"{n['pooled_diff']:+.2f} [{n['pooled_lo']:+.2f}, {n['pooled_hi']:+.2f}] over {n['pooled_n']} seeds; "
              f"one-sided sign-flip p {n['pooled_p']:.3f} for γ 1.1 above, {n['pooled_p_other']:.3f} for γ 0.5 "
              f"above. (Paper: 8/12 at γ 0.5, 12/12 at γ 1.1.)")
        if "unfitted_window" in n:
            c6 += (f" A seed reasons only with its training set fitted at the end; under the {n['unfitted_window']} "
                   f"window {n['unfitted_k']} of {n['unfitted_n']} runs end unfitted (γ 0.5: {n['unfitted_k_g0p5']} "
                   f"of {n['unfitted_n_g0p5']}, γ 1.1: {n['unfitted_k_g1p1']} of {n['unfitted_n_g1p1']})"
                   + (", as it ends with the run and leaves no steps to refit," if n["unfitted_window_end"] >= r.steps
                      else "") + " and count as not reasoning. Read from OOD "
                   f"accuracy alone, fitted or not, the rules say C6 *{n['pooled_any_verdict']}* and C7 "
                   f"*{n['pooled_any_verdict_c7']}*.")
        c7 = (f"**C7 verdict: {n['verdict_c7']}.** Per seed, the mean share over γ 0.7–1.1 minus the share at "
              f"γ {n['c7_smallest_gamma']:g}: {n['c7_smallest_diff']:+.2f} [{n['c7_smallest_lo']:+.2f}, "
              f"{n['c7_smallest_hi']:+.2f}] (Holm-adjusted p {n['c7_smallest_p_holm']:.3f}, the reverse "
              f"{n['c7_smallest_p_other_holm']:.3f}): {n['c7_smallest']}; minus the share at γ "
              f"{n['c7_largest_gamma']:g}: {n['c7_largest_diff']:+.2f} [{n['c7_largest_lo']:+.2f}, "
              f"{n['c7_largest_hi']:+.2f}] (p {n['c7_largest_p_holm']:.3f}, the reverse "
              f"{n['c7_largest_p_other_holm']:.3f}): {n['c7_largest']}. (Paper: γ ∈ [0.7, 1.1] is best.)")
        return [c6, c7]
    counts = ", ".join(f"γ {g.gamma:g}: {g.reasoning}/{g.seeds} [{g.share_lo:.2f}, {g.share_hi:.2f}]"
                       for g in r.basin.itertuples())
    c6 = (f"**C6 verdict: {n['verdict']}.** Under the {n['rule_window']}, reasoning seeds (exact 95 % interval of "
          f"the share): {counts}. γ 1.1 − γ 0.5: {n['diff']:+.2f} [{n['diff_lo']:+.2f}, {n['diff_hi']:+.2f}] "
          f"(Tango, paired by seed); {n['b']} seeds reason at γ 1.1 only and {n['c']} at γ 0.5 only: "
          f"{n['mcnemar_text']} (Fisher's unpaired p = {n['fisher_p']:.3f} for γ 1.1 above 0.5). (Paper: 8/12 at "
          "γ 0.5, 12/12 at γ 1.1.)")
    c7 = (f"**C7 verdict: {n['verdict_c7']}.** γ 0.7–1.1 pooled against γ {r.basin['gamma'].iloc[0]:g}: "
          f"{n['c7_smallest']}; against γ {r.basin['gamma'].iloc[-1]:g}: {n['c7_largest']}. The most reasoning "
          f"seeds are at γ {n['best_gamma']:g}. (Paper: γ ∈ [0.7, 1.1] is best.)")
    return [c6, c7]

