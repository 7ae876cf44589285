"""The window-onset claims: how sharply does the fate switch as the window's onset moves (C4), and (beyond the
paper) does that onset edge move with the end of fitting (C4b)?
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, stats
from critwin_lib.claims import cliff, core, fates, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, Design, fetch, onset_grid, score_row
from critwin_lib.sizes import get_profile, length_name


# ------------------------------------------------------------------------------------------ C4
@dataclass
class SweepDesign(Design):
    grids: dict[str, list[int]]
    # C4: the fine grid around the coarse edge (its specs are in `specs` too)
    cliff: cliff.CliffDesign | None = dataclasses.field(default=None, kw_only=True)
    fitted_reasoning: bool = dataclasses.field(default=True, kw_only=True)  # False: the rule before 2026-12-06


def c04_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: list, window_frac: float,
               alt_protocol: str = "", alt_n_seeds: int = 0, protocol_name: str = "", cliff_fracs: list | None = None,
               cliff_seeds: int = 8, cliff_falling: bool = False, window_lambda: float = 0.0, first_seed: int = 0,
               fitted_reasoning: bool = True) -> SweepDesign:
    """C4's runs: the 25 % window at every onset of a coarse grid, and no weight decay (n_seeds); the same
    under `alt_protocol` (alt_n_seeds) for the sensitivity table; and the fine grid of `cliff_fracs` ([lo, hi]
    as fractions of the run, onsets every 100 steps of 20,000; empty: none) with cliff_seeds, where the cliff's
    rule decides whether the switch is sharp (`cliff_falling`: the edge the coarse sweep found is a fall). The
    window carries `window_lambda` (0: the protocol's; the alternative protocol keeps its own). Seeds start at
    `first_seed`; a seed reasons only if its training set is fitted at the end (`fitted_reasoning` False: the rule
    before 2026-12-06, OOD accuracy alone)."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds, first=first_seed)
    checks.flag(fitted_reasoning, "fitted_reasoning")
    grid = onset_grid(P, onset_fracs)
    protocol.get_protocol(protocol_name, "protocol_name")
    specs = onsets.sweep_specs(P, seeds, gamma, protocol_name, grid, window_frac, window_lambda)
    grids = {protocol_name: grid}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        specs += onsets.sweep_specs(P, P.seeds(alt_n_seeds), gamma, alt_protocol, grid, window_frac)
        grids[alt_protocol] = grid
    fine = None
    if cliff_fracs:
        if not isinstance(cliff_fracs, list | tuple) or len(cliff_fracs) != 2:
            raise config.ConfigError(f"cliff_fracs: must be [lo_frac, hi_frac] or [], got {cliff_fracs!r}")
        if not isinstance(cliff_falling, bool):
            raise config.ConfigError(f"cliff_falling: must be True or False, got {cliff_falling!r}")
        fine = cliff.cliff_design(profile=profile, n_seeds=cliff_seeds, gamma=gamma, lo_frac=cliff_fracs[0],
                                  hi_frac=cliff_fracs[1], window_frac=window_frac, protocol_name=protocol_name,
                                  falling=cliff_falling, window_lambda=window_lambda, first_seed=first_seed)
        specs += fine.specs
    lam = core.window_lambda(protocol_name, window_lambda)
    summary = protocol.in_words(
        f"profile {P.name}, {protocol.plain(protocol_name)}: {P.steps} steps, {len(seeds)} seeds"
               + (f" ({seeds[0]}–{seeds[-1]})" if first_seed else "") + f", windows "
               f"{100 * window_frac:g} % of the run at λ = {lam:g}, onsets {grid}"
               + ("" if fitted_reasoning else "; reasoning read from OOD accuracy alone (the rule before 2026-12-06)")
               + (f"; {alt_protocol}: {len(P.seeds(alt_n_seeds))} seeds" if alt_protocol else "")
               + (f"; the cliff's fine grid: {fine.summary.split(': ', 1)[1]}" if fine else ""))
    return SweepDesign(specs, summary, seeds, grids, cliff=fine, protocol=protocol_name,
                       fitted_reasoning=fitted_reasoning)


def decide_c4(runs: pd.DataFrame, grid_step: float, resolution: int, fine: cliff.Cliff | None = None
              ) -> tuple[str, dict[str, str], onsets.ShareEdge]:
    """C4 on the window runs of a sweep (with fates): the reasoning share rises through one half as the onset
    moves later (bootstrap over seeds: in ≥ 95 % of resamples holds, ≤ 5 % rejected), and that rise is sharp:
    the cliff's rule on the fine grid around the edge (`fine`, `cliff.decide_cliff`); without a fine grid, the
    edge's interval within 4 × the paper's resolution on a grid that fine (a coarser grid cannot tell)."""
    edge = onsets.share_edge(runs)
    exists = rules.part_found(edge.found)
    sharp = rules.UNDECIDED  # the coarse grid cannot resolve a switch narrower than its spacing
    if fine is not None:
        sharp = fine.state
    elif grid_step <= rules.EDGE_WIDTH * resolution and exists == rules.HOLDS:
        sharp = rules.HOLDS if edge.hi - edge.lo <= rules.EDGE_WIDTH * resolution else rules.UNDECIDED
    parts = {"an edge exists": exists, "the switch is sharp": sharp}
    return rules.combine(parts), parts, edge


@dataclass
class C4Result(ClaimResult):
    table: pd.DataFrame
    per_run: pd.DataFrame
    curves: pd.DataFrame
    edge: onsets.ShareEdge
    parts: dict[str, str]
    sensitivity: pd.DataFrame
    steps: int
    cliff: cliff.Cliff | None = None  # the fine grid's reading (None: no fine grid at this profile)
    cliff_table: pd.DataFrame | None = None  # its share per onset (`fates.share_table`; -1: no weight decay)
    cliff_paper: pd.DataFrame | None = None  # the paper's cliff per onset in mean OOD accuracy (onset, ood)
    cliff_runs: pd.DataFrame | None = None  # the fine grid's window runs (onset, seed, fate, final_ood, switch onset)
    window_steps: int = 0  # the window's length in steps

    def length_curves(self) -> pd.DataFrame:
        """The curves by onset, named by the onset's share of the run (the two lengths' onsets in steps differ)."""
        names = ["none" if o < 0 else onset_name(o / self.steps) for o in self.curves["onset"]]
        return self.curves.assign(condition=names).drop(columns="onset")


def onset_name(frac: float) -> str:
    """A window onset as a share of the run: 'onset 0.25 T'."""
    return f"onset {frac:.3g} T"


def c04(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C4Result:
    """C4: sweep the 25 % window's onset across the run; where the reasoning share rises, and how sharply."""
    d = c04_design(**params)
    P = get_profile(params["profile"])
    main = d.protocol
    grid = d.grids[main]
    resolution = max(1, round(core.PAPER_RESOLUTION * P.steps / 20_000))
    length = protocol.window_steps(P, 0.0, params["window_frac"])[1]
    n_fine = len(d.cliff.specs) if d.cliff else 0
    history, per_run = fetch(d.specs[:len(d.specs) - n_fine], results_dir, train_missing, workers)
    if not d.fitted_reasoning:
        per_run = fates.with_fates(per_run, require_fit=False)
    per_run["close_ood"] = fates.ood_at(history, per_run, [o + length if o >= 0 else P.steps
                                                           for o in per_run["onset"]])
    fine_runs = _fine_runs(d.cliff, results_dir, train_missing, workers, length, P.steps)
    t_mem = per_run[per_run["onset"] < 0].set_index(["protocol", "seed"])["t_mem"]  # each seed's own, no decay
    per_run["onset_over_own_t_mem"] = [o / t_mem.get((p, s), math.nan) if o >= 0 else math.nan
                                       for p, s, o in zip(per_run["protocol"], per_run["seed"], per_run["onset"],
                                                          strict=True)]
    step = float(min(b - a for a, b in zip(grid, grid[1:], strict=False))) if len(grid) > 1 else math.inf
    main_runs = per_run[per_run["protocol"] == main]
    fine = cliff.read_cliff(fine_runs, resolution, d.cliff.falling) if d.cliff else None
    verdict, parts, edge = decide_c4(main_runs[main_runs["onset"] >= 0], step, resolution, fine)
    fall = onsets.share_edge(main_runs[main_runs["onset"] >= 0], falling=True)  # reported beside the rule, not in it
    table = fates.share_table(main_runs, ["onset"]).sort_values("onset").merge(
        main_runs.groupby("onset")[["final_train", "max_ood", "close_ood", "t_mem", "onset_over_own_t_mem"]]
        .mean().reset_index(),
        on="onset")
    sens = []
    fine_by_metric = {metric: runs for _, metric, runs in fates.by_protocol_and_metric(fine_runs)} if d.cliff else {}
    for proto, metric, runs in fates.by_protocol_and_metric(per_run[per_run["onset"] >= 0]):
        f = None
        if proto == main and metric in fine_by_metric:
            f = fine if metric == "final" else cliff.read_cliff(_in_metric(fine_by_metric[metric], metric),
                                                                 resolution, d.cliff.falling)
        v, p, e = decide_c4(runs, step, resolution, f)
        sens.append({"protocol": proto, "metric": metric, "seeds": int(runs["seed"].nunique()), "verdict": v,
                     "edge": e.edge, "edge_lo": e.lo, "edge_hi": e.hi, "found": e.found,
                     "parts": "; ".join(f"{k}: {s}" for k, s in p.items())})
    sens = pd.DataFrame(sens)
    windows = table[table["onset"] >= 0]
    low = windows.loc[windows["share"].idxmin()]
    none = table[table["onset"] < 0].iloc[0]
    old = rule_history.c04_old_numbers(rule_history.old_onset_rule(P, d.seeds[:4], params["gamma"], main, grid,
                                                         params["window_frac"], results_dir,
                                                         params.get("window_lambda", 0.0)), 4)
    n = len(d.seeds)
    numbers = {"profile": P.name, "seeds": n, "verdict": verdict, "protocol": main, "resolution": resolution,
               "window_lambda": core.window_lambda(main, params.get("window_lambda", 0.0)), "grid_step": step,
               "edge": edge.edge, "edge_lo": edge.lo, "edge_hi": edge.hi, "edge_found": edge.found,
               "edge_text": edge.text(), "edge_level": edge.level,
               "exists": parts["an edge exists"], "sharp": parts["the switch is sharp"],
               "k_none": int(none["reasoning"]), "share_none": float(none["share"]),
               "lowest_onset": int(low["onset"]), "lowest_share": float(low["share"]),
               "lowest_k": int(low["reasoning"]), "t_mem_none": float(none["t_mem"]), "n_onsets": int(len(windows)),
               "headline": fates.headline(sens.assign(onset="as the claim"), verdict),
               "fall_edge": fall.edge, "fall_lo": fall.lo, "fall_hi": fall.hi, "fall_found": fall.found,
               "fall_text": fall.text(), "rest_text": _rest_text(table), **old}
    for _, r in windows.iterrows():
        numbers[f"k_{int(r['onset'])}"] = int(r["reasoning"])
    shares = ", ".join(f"{int(r['onset'])}: {int(r['reasoning'])}/{int(r['seeds'])}" for _, r in windows.iterrows())
    row = score_row("C4", "moving the window onset by 100 steps moves OOD from chance to reasoning",
                    "+100 steps: 0.15 → 0.61; +400: 0.93",
                    f"windows of {length:,} steps at λ {numbers['window_lambda']:g}; reasoning seeds by onset "
                    f"{shares} (none {int(none['reasoning'])}/{n}); {edge.text()}"
                    + (f"; fine grid every {fine.resolution} steps over {min(fine.grid)}–{max(fine.grid)} "
                       f"({fine.seeds} seeds): {fine.text()}" if fine is not None and fine.grid else ""),
                    P.name, n, verdict)
    curves = stats.mean_ci(history[history["protocol"] == main], ["onset", "step"], "acc/test_ood")
    cliff_table = paper = seeds_grid = None
    numbers.update(_range_numbers(table, n), **cliff_texts(fine, P.name, P.steps, (edge, fall)),
                   length_name=length_name(P.name, P.steps))
    numbers["glance_text"] = f"{numbers['range_text']}, and {numbers['fall_text']}"
    if fine is not None:
        numbers.update(_cliff_numbers(fine, d.cliff),
                       **_old_cliff_numbers(cliff.read_cliff(fine_runs, resolution, d.cliff.falling,
                                                             value=cliff.SHARE)))
        cliff_table = fates.share_table(fine_runs, ["onset"]).sort_values("onset").reset_index(drop=True)
        grid = sorted(d.cliff.grid)
        paper = pd.DataFrame({"onset": grid, "ood": cliff.paper_curve(grid, resolution, d.cliff.falling)})
        seeds_grid = seed_grid(fine_runs, fine)
    return C4Result(rows=[row], numbers=numbers, summary=d.summary, table=table, per_run=per_run, curves=curves,
                    edge=edge, parts=parts, sensitivity=sens, steps=P.steps, cliff=fine, cliff_table=cliff_table,
                    cliff_paper=paper, cliff_runs=seeds_grid, window_steps=length)


def seed_grid(fine_runs: pd.DataFrame, fine: cliff.Cliff) -> pd.DataFrame:
    """The fine grid's window runs seed by seed (onset, seed, fate, final_ood) with each seed's own switch onset
    (NaN where it never switches, or where the grid is too small to read)."""
    runs = fine_runs[fine_runs["onset"] >= 0][["onset", "seed", "fate", "final_ood"]]
    switches = fine.switches if fine.switches is not None else pd.Series(dtype=float)
    return runs.merge(switches.rename("switch onset"), left_on="seed", right_index=True, how="left")


def _in_metric(runs: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Runs whose `final_ood` is the sensitivity row's OOD metric, so the cliff's rule (which reads mean final OOD)
    reads that metric's OOD as it reads that metric's fates."""
    return runs.assign(final_ood=runs[fates.METRICS.get(metric, "final_ood")])


def _fine_runs(fine: cliff.CliffDesign | None, results_dir: str, train_missing: bool, workers: int, length: int,
               steps: int) -> pd.DataFrame:
    """The cliff's runs (fine grid and no weight decay), with fates and the OOD accuracy when each window closes."""
    if fine is None:
        return pd.DataFrame(columns=["protocol", "onset", "seed", "fate", "final_ood"])
    history, runs = fetch(fine.specs, results_dir, train_missing, workers)
    runs["close_ood"] = fates.ood_at(history, runs, [o + length if o >= 0 else steps for o in runs["onset"]])
    return runs


CLIFF_ANSWER = {rules.HOLDS: "found", rules.REJECTED: "ruled out", rules.UNDECIDED: "neither found nor ruled out"}
NOT_TESTED = "not tested"  # the cliff's answer where no fine grid has been read


def cliff_texts(fine: cliff.Cliff | None, profile: str, steps: int,
                edges: tuple[onsets.ShareEdge, ...] = ()) -> dict[str, str]:
    """The cliff in words, at every profile (the intro quotes them): found, ruled out or neither, and why, the
    reason starting "at <the length>" so that it follows the answer in a sentence. Without a fine grid, `edges`
    (the coarse sweep's rise and fall) say whether there is a bracket for one to tile."""
    if fine is None:
        if edges and all(math.isnan(e.edge) for e in edges):
            why = "; ".join(e.text() for e in edges)
            return {"cliff_answer": NOT_TESTED,
                    "cliff_short": (f"at {length_name(profile, steps)}, where the coarse onset sweep finds no edge "
                                    f"for a fine grid at the paper's resolution to tile: {why}")}
        return {"cliff_answer": NOT_TESTED,
                "cliff_short": f"at {length_name(profile, steps)}, where no fine grid has been trained yet"}
    if math.isnan(fine.steepest):
        return {"cliff_answer": NOT_TESTED, "cliff_short": f"at {length_name(profile, steps)}: {fine.text()}"}
    way = "falls" if fine.falling else "rises"
    return {"cliff_answer": CLIFF_ANSWER[fine.state],
            "cliff_short": (f"at {length_name(profile, steps)}, onsets every {fine.resolution} steps from "
                            f"{min(fine.grid):,} to {max(fine.grid):,} with {fine.seeds} seeds each: {fine.what} "
                            f"{way} by {fine.bracket:+.2f} across that bracket (95 % interval "
                            f"{fine.bracket_lo:+.2f} to {fine.bracket_hi:+.2f}), at most {fine.steepest:+.2f} between "
                            f"neighbouring blocks {fine.span} steps apart (p {fine.p_steepest:.3f} against shifted "
                            f"seed sequences), against the paper's jump of at least {fine.jump:.2f} (0.15 to 0.61) "
                            f"within {fine.span} steps; {fine.switch_text()}; the paper's cliff gives a grid no "
                            f"steeper in {100 * fine.paper_p:.1f} % of simulations")}


def unread_texts(numbers: dict[str, Any], profile: str) -> dict[str, str]:
    """The texts the intro quotes for a length whose onset sweep is not all stored (`numbers`: that length's side,
    with "stored", "needed" and "steps"), so its sentences say so instead of quoting numbers that do not exist."""
    name = length_name(profile, numbers["steps"])
    note = f"its onset sweep is not read yet ({numbers['stored']} of {numbers['needed']} runs stored)"
    return {"length_name": name, "glance_text": note, "cliff_answer": NOT_TESTED,
            "cliff_short": f"at {name}, where {note}"}


def _range_numbers(table: pd.DataFrame, n: int) -> dict[str, Any]:
    """How many seeds reason at the best and the worst onset of the coarse sweep, in words."""
    w, none = table[table["onset"] >= 0], table[table["onset"] < 0].iloc[0]
    lo, hi = int(w["reasoning"].min()), int(w["reasoning"].max())
    k_none, n_none = int(none["reasoning"]), int(none["seeds"])
    return {"highest_k": hi, "range_text": (
        f"{lo} to {hi} of {n} seeds reason with the window across its {len(w)} onsets from 0 to "
        f"{int(w['onset'].max()):,} steps, against {k_none} of {n_none} without weight decay")}


def _cliff_numbers(fine: cliff.Cliff, design: cliff.CliffDesign) -> dict[str, Any]:
    """The cliff's glued numbers (`cliff_...`)."""
    grid = sorted(design.grid)
    return {"cliff_state": fine.state, "cliff_text": fine.text(), "cliff_falling": fine.falling,
            "cliff_seeds": fine.seeds, "cliff_onsets": len(grid), "cliff_lo": grid[0], "cliff_hi": grid[-1],
            "cliff_resolution": fine.resolution, "cliff_span": fine.span, "cliff_jump": fine.jump,
            "cliff_steepest": fine.steepest, "cliff_steepest_at": fine.steepest_at, "cliff_p": fine.p_steepest,
            "cliff_bracket": fine.bracket, "cliff_bracket_lo": fine.bracket_lo, "cliff_bracket_hi": fine.bracket_hi,
            "cliff_slope": fine.slope, "cliff_slope_lo": fine.slope_lo, "cliff_slope_hi": fine.slope_hi,
            "cliff_width": fine.width(fine.slope), "cliff_paper_p": fine.paper_p,
            "cliff_switch_text": fine.switch_text(),
            "cliff_power": cliff.cliff_power(grid, fine.resolution, fine.seeds, fine.falling)}


def _rest_text(table: pd.DataFrame) -> str:
    """How the seeds that do not reason end at each onset (no weight decay first): a window that wipes the
    model late in the run and one that leaves it memorizing both count as "not reasoning"."""
    named = table.sort_values("onset")
    named = named.assign(condition=["none" if o < 0 else f"onset {int(o)}" for o in named["onset"]])
    return fates.how_the_rest_end(named, list(named["condition"]))


# ----------------------------------------------------------------------------------------- C4b
@dataclass
class C4bDesign(SweepDesign):
    pair: tuple[str, str]  # the two protocols, the earlier-fitting one first as given
    old: dict[str, list[int]]  # the rule before fates: its protocols' onset grids (4 seeds, bisection)
    old_seeds: list[int]


def c04b_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: dict, window_frac: float,
                old_onset_fracs: dict | None = None, old_n_seeds: int = 4) -> C4bDesign:
    """C4b's runs: each of two protocols' onset sweeps (its own grid of onsets) with its no-weight-decay runs,
    same seeds; and the sweeps the rule before fates compared (`old_onset_fracs`, old_n_seeds; the onsets its
    bisection visited are read where stored, never trained: `rule_history.old_onset_rule`)."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    grids, old = {}, {}
    for field, fracs, out in (("onset_fracs", onset_fracs, grids), ("old_onset_fracs", old_onset_fracs or {}, old)):
        if not isinstance(fracs, dict) or (field == "onset_fracs" and len(fracs) != 2):
            raise config.ConfigError(f"{field}: must map {'two ' if field == 'onset_fracs' else ''}protocol names "
                                     f"to onset fractions, got {fracs!r}")
        for name, fr in fracs.items():
            protocol.get_protocol(name, field)
            out[name] = onset_grid(P, fr)
    old_seeds = P.seeds(old_n_seeds) if old else []
    specs = [sp for name, on in grids.items() for sp in onsets.sweep_specs(P, seeds, gamma, name, on, window_frac)]
    specs += [sp for name, on in old.items() for sp in onsets.sweep_specs(P, old_seeds, gamma, name, on, window_frac)]
    summary = protocol.in_words(
        f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds; "
               + "; ".join(f"{name}: onsets {on}" for name, on in grids.items()))
    return C4bDesign(specs, summary, seeds, grids, tuple(grids), old, old_seeds)


def differs_in_lr_only(a: str, b: str) -> bool:
    """Whether two protocols differ in the learning rate alone: same optimizer, same decayed parameters, the same
    per-step shrink lr·λ inside a window."""
    pa, pb = protocol.get_protocol(a), protocol.get_protocol(b)
    return (pa.optimizer, pa.wd_params) == (pb.optimizer, pb.wd_params) and math.isclose(
        pa.lr * pa.window_lambda, pb.lr * pb.window_lambda, rel_tol=1e-9)


def decide_c04b(shift: onsets.EdgeShift) -> tuple[str, dict[str, str]]:
    """C4b: given that fitting ends at different steps in the two protocols (else inconclusive), each protocol's
    reasoning share has an onset edge (in ≥ 95 % of bootstrap resamples over seeds; rejected at ≤ 5 %), and
    then the edge moves by at least half the shift of t_mem (95 % bootstrap interval of the ratio)."""
    premise = rules.HOLDS if shift.t_lo > 0 or shift.t_hi < 0 else rules.UNDECIDED  # NaN: undecided
    exists = rules.combine_found(shift.found)
    follows = rules.part_at_least(shift.ratio_lo, shift.ratio_hi, rules.C4B_FOLLOW) if exists == rules.HOLDS \
        else rules.UNDECIDED  # the ratio's interval is conditional on both edges; judged only when both exist
    parts = {"each protocol has an edge": exists, "the edge moves with t_mem": follows}
    if premise != rules.HOLDS:
        return "inconclusive", {"t_mem differs": premise, **parts}
    return rules.combine(parts), {"t_mem differs": premise, **parts}


@dataclass
class C4bResult(ClaimResult):
    table: pd.DataFrame
    per_run: pd.DataFrame
    edges: pd.DataFrame
    shift: onsets.EdgeShift
    parts: dict[str, str]
    steps: int


def c04b(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> C4bResult:
    """C4b (beyond the paper): in two protocols whose fitting phase ends at different steps, does the onset edge
    of the reasoning share move with t_mem?"""
    d = c04b_design(**params)
    P = get_profile(params["profile"])
    a, b = d.pair
    _, every = fetch(d.specs, results_dir, train_missing, workers)  # the old rule's sweeps too: all the design
    on_grid = [o in (-1, *d.grids.get(p, [])) for p, o in zip(every["protocol"], every["onset"], strict=True)]
    mine = every["seed"].isin(d.seeds) & every["protocol"].isin(d.pair) & pd.Series(on_grid, index=every.index)
    per_run = every[mine].drop_duplicates(["protocol", "onset", "seed"]).reset_index(drop=True)
    t_mem = per_run[per_run["onset"] < 0].groupby("protocol")["t_mem"].mean()
    per_run["onset_over_t_mem"] = [o / t_mem[p] if o >= 0 else math.nan
                                   for p, o in zip(per_run["protocol"], per_run["onset"], strict=True)]
    shift = onsets.edge_shift(per_run, a, b)
    verdict, parts = decide_c04b(shift)
    table = fates.share_table(per_run, ["protocol", "onset"]).merge(
        per_run.groupby(["protocol", "onset"])[["max_ood", "t_mem", "onset_over_t_mem"]].mean().reset_index(),
        on=["protocol", "onset"])
    boots = {p: onsets.share_edge(per_run[(per_run["protocol"] == p) & (per_run["onset"] >= 0)]) for p in d.pair}
    edges = pd.DataFrame([{"protocol": p, "t_mem": float(t_mem[p]), "edge": e.edge, "lo": e.lo, "hi": e.hi,
                           "found": e.found} for p, e in boots.items()])
    old = rule_history.c04b_old_numbers([rule_history.old_onset_rule(P, d.old_seeds, params["gamma"], name, on,
                                                           params["window_frac"], results_dir)
                                    for name, on in d.old.items()])
    n = len(d.seeds)
    numbers: dict[str, Any] = {
        "profile": P.name, "seeds": n, "verdict": verdict, "protocol_a": a, "protocol_b": b,
        "lr_only": differs_in_lr_only(a, b), "t_shift": shift.t_shift, "t_shift_lo": shift.t_lo,
        "t_shift_hi": shift.t_hi, "ratio": shift.ratio, "ratio_lo": shift.ratio_lo, "ratio_hi": shift.ratio_hi,
        "follow": rules.C4B_FOLLOW, **old, "old_seeds": len(d.old_seeds),
        **{f"part_{k.replace(' ', '_')}": v for k, v in parts.items()}}
    for p, e in boots.items():
        tag_ = p.replace("-", "_")
        counts = table[table["protocol"] == p].set_index("onset")["reasoning"]
        numbers.update({f"{tag_}_t_mem": float(t_mem[p]), f"{tag_}_edge": e.edge, f"{tag_}_edge_lo": e.lo,
                        f"{tag_}_edge_hi": e.hi, f"{tag_}_found": e.found, f"{tag_}_edge_text": e.text(),
                        f"{tag_}_none_reasoning": int(counts.get(-1, 0)),
                        f"{tag_}_window_reasoning_min": int(counts[counts.index >= 0].min()),
                        f"{tag_}_window_reasoning_max": int(counts[counts.index >= 0].max())})
    ours = "; ".join(f"{p}: t_mem {t_mem[p]:.0f}, " + (f"edge {e.edge:.0f} [{e.lo:.0f}, {e.hi:.0f}]"
                                                       if not math.isnan(e.edge) else "no edge")
                     + f" ({e.found:.0%} of resamples)" for p, e in boots.items())
    ours += (f"; edge shift / t_mem shift {shift.ratio:.2f} [{shift.ratio_lo:.2f}, {shift.ratio_hi:.2f}]"
             if not math.isnan(shift.ratio) else "; no edge shift to compare")
    numbers["ours"] = ours = protocol.in_words(ours)
    row = score_row("C4b", "(beyond the paper) the window's onset edge moves with t_mem, the end of fitting",
                    "not studied", ours, P.name, n, verdict)
    return C4bResult(rows=[row], numbers=numbers, summary=d.summary, table=table, per_run=per_run, edges=edges,
                     shift=shift, parts=parts, steps=P.steps)


def _old_cliff_numbers(old: cliff.Cliff) -> dict[str, Any]:
    """What the cliff's rule before 2026-12-07 (reasoning shares against a jump of 0.4) gives on the same grid
    (`cliff_old_...`), for the page's rule history."""
    return {"cliff_old_state": old.state, "cliff_old_steepest": old.steepest, "cliff_old_p": old.p_steepest,
            "cliff_old_paper_p": old.paper_p, "cliff_old_bracket_hi": old.bracket_hi}
