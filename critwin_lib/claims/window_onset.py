"""The window-onset claims: how sharply does the fate switch as the window's onset moves (C4), and (beyond the
paper) does that onset edge move with the end of fitting (C4b)?
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import config, protocol, stats
from critwin_lib.claims import core, fates, onsets, rules
from critwin_lib.claims import history as rule_history
from critwin_lib.claims.core import ClaimResult, Design, fetch, onset_grid, score_row
from critwin_lib.sizes import get_profile


# ------------------------------------------------------------------------------------------ C4
@dataclass
class SweepDesign(Design):
    grids: dict[str, list[int]]


def c04_design(*, profile: str, n_seeds: int, gamma: float, onset_fracs: list, window_frac: float,
               alt_protocol: str = "", alt_n_seeds: int = 0, protocol_name: str = ""
               ) -> SweepDesign:
    """C4's runs: the 25 % window at every onset of a coarse grid, and no weight decay (n_seeds); the same
    under `alt_protocol` (alt_n_seeds) for the sensitivity table."""
    P = get_profile(profile)
    protocol_name = protocol.resolve(protocol_name, P)
    seeds = P.seeds(n_seeds)
    grid = onset_grid(P, onset_fracs)
    protocol.get_protocol(protocol_name, "protocol_name")
    specs = onsets.sweep_specs(P, seeds, gamma, protocol_name, grid, window_frac)
    grids = {protocol_name: grid}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        specs += onsets.sweep_specs(P, P.seeds(alt_n_seeds), gamma, alt_protocol, grid, window_frac)
        grids[alt_protocol] = grid
    summary = (f"profile {P.name}, protocol {protocol_name}: {P.steps} steps, {len(seeds)} seeds, onsets {grid}"
               + (f"; {alt_protocol}: {len(P.seeds(alt_n_seeds))} seeds" if alt_protocol else ""))
    return SweepDesign(specs, summary, seeds, grids, protocol=protocol_name)


def decide_c4(runs: pd.DataFrame, grid_step: float, resolution: int) -> tuple[str, dict[str, str], onsets.ShareEdge]:
    """C4 on the window runs of a sweep (with fates): the reasoning share rises through one half as the onset
    moves later (bootstrap over seeds: in ≥ 95 % of resamples holds, ≤ 5 % rejected), and that rise is sharp
    (within 4 × the paper's resolution; a grid coarser than that cannot tell)."""
    edge = onsets.share_edge(runs)
    exists = rules.part_found(edge.found)
    sharp = rules.UNDECIDED  # the coarse grid cannot resolve a switch narrower than its spacing
    if grid_step <= rules.EDGE_WIDTH * resolution and exists == rules.HOLDS:
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
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    per_run["close_ood"] = fates.ood_at(history, per_run, [o + length if o >= 0 else P.steps
                                                           for o in per_run["onset"]])
    t_mem = per_run[per_run["onset"] < 0].set_index(["protocol", "seed"])["t_mem"]  # each seed's own, no decay
    per_run["onset_over_own_t_mem"] = [o / t_mem.get((p, s), math.nan) if o >= 0 else math.nan
                                       for p, s, o in zip(per_run["protocol"], per_run["seed"], per_run["onset"],
                                                          strict=True)]
    step = float(min(b - a for a, b in zip(grid, grid[1:], strict=False))) if len(grid) > 1 else math.inf
    main_runs = per_run[per_run["protocol"] == main]
    verdict, parts, edge = decide_c4(main_runs[main_runs["onset"] >= 0], step, resolution)
    fall = onsets.share_edge(main_runs[main_runs["onset"] >= 0], falling=True)  # reported beside the rule, not in it
    table = fates.share_table(main_runs, ["onset"]).sort_values("onset").merge(
        main_runs.groupby("onset")[["final_train", "max_ood", "close_ood", "t_mem", "onset_over_own_t_mem"]]
        .mean().reset_index(),
        on="onset")
    sens = []
    for proto, metric, runs in fates.by_protocol_and_metric(per_run[per_run["onset"] >= 0]):
        v, p, e = decide_c4(runs, step, resolution)
        sens.append({"protocol": proto, "metric": metric, "seeds": int(runs["seed"].nunique()), "verdict": v,
                     "edge": e.edge, "edge_lo": e.lo, "edge_hi": e.hi, "found": e.found,
                     "parts": "; ".join(f"{k}: {s}" for k, s in p.items())})
    sens = pd.DataFrame(sens)
    windows = table[table["onset"] >= 0]
    low = windows.loc[windows["share"].idxmin()]
    none = table[table["onset"] < 0].iloc[0]
    old = rule_history.c04_old_numbers(rule_history.old_onset_rule(P, d.seeds[:4], params["gamma"], main, grid,
                                                         params["window_frac"], results_dir), 4)
    n = len(d.seeds)
    numbers = {"profile": P.name, "seeds": n, "verdict": verdict, "protocol": main, "resolution": resolution,
               "grid_step": step, "edge": edge.edge, "edge_lo": edge.lo, "edge_hi": edge.hi, "edge_found": edge.found,
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
                    f"reasoning seeds by onset {shares} (none {int(none['reasoning'])}/{n}); {edge.text()}",
                    P.name, n, verdict)
    curves = stats.mean_ci(history[history["protocol"] == main], ["onset", "step"], "acc/test_ood")
    return C4Result([row], numbers, d.summary, table, per_run, curves, edge, parts, sens, P.steps)


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
    summary = (f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds; "
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
    mine = {(lab["protocol"], lab["onset"], lab["seed"]): (lab, cfg) for lab, cfg in d.specs
            if lab["seed"] in d.seeds and lab["protocol"] in d.pair and lab["onset"] in [-1, *d.grids[lab["protocol"]]]}
    _, per_run = fetch(list(mine.values()), results_dir, train_missing, workers)
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
    numbers["ours"] = ours
    row = score_row("C4b", "(beyond the paper) the window's onset edge moves with t_mem, the end of fitting",
                    "not studied", ours, P.name, n, verdict)
    return C4bResult([row], numbers, d.summary, table, per_run, edges, shift, parts, P.steps)
