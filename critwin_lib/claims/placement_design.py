"""What the window-placement pages (C1, C2/C3) share: their design type, its checks and its construction (the
page's protocol and the sensitivity table's, the seeds, the sequential design's looks), the fate rule a design
reads, and a size part in the paper's own metric, mean OOD over seeds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from critwin_lib import checks, config, protocol, sequential
from critwin_lib.claims import core, fates
from critwin_lib.claims.core import Design
from critwin_lib.sizes import Size


def ood_for(r: dict[str, pd.Series], name: str) -> tuple[Any, int]:
    """Condition `name`'s final OOD accuracy per seed (`<name>_ood`) and the bootstrap resamples to read a size with;
    inside a power simulation, which draws fates only, the OOD a bimodal seed has and fewer resamples."""
    key = f"{name}_ood"
    return (r[key], fates.SIZE_BOOT) if key in r else (fates.ood_of(r[name]), fates.SIM_BOOT)


def size_part(part: str, r: dict[str, pd.Series], a: str, b: str, least: float, kind: str, levels: fates.Levels
          ) -> fates.Comparison:
    """A size part in the paper's metric, mean OOD (`fates.mean_size`), at the look's interval level."""
    (x, boots), (y, _) = ood_for(r, a), ood_for(r, b)
    return fates.mean_size(part, x, y, least, kind, levels.interval, boots)


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
    decay_protocol: str = dataclasses.field(default="", kw_only=True)  # the paper's decay set's rows, if run


def check_fitted(flag: Any) -> bool:
    """The `fitted_reasoning` parameter: True (a seed reasons only if its training set is fitted at the end, the
    rule on every page since 2026-12-06) or False (OOD accuracy alone, the rule before)."""
    return checks.flag(flag, "fitted_reasoning")


def with_rule_fates(per_run: pd.DataFrame, d: PlacementDesign) -> pd.DataFrame:
    """The runs with the fates the design's rule reads (reasoning needs a fitted training set unless it says not)."""
    return per_run if d.fitted_reasoning else fates.with_fates(per_run, require_fit=False)


def planned_looks(looks: list | None, n_seeds: int, P: Size) -> list[int]:
    """The sequential design's looks (seed counts; default: this run's seeds alone), with n_seeds one of them."""
    n = len(P.seeds(n_seeds))
    planned = sequential.check_looks(looks) if looks else [n]
    if n not in planned:
        raise config.ConfigError(f"n_seeds: must be one of the sequential design's looks {planned}, got {n}")
    return planned


def build_design(P: Size, seeds: dict[str, list[int]], gamma: float, conditions: dict[str, dict], summary: str,
            close: dict[str, int | None], budget: float, lam: float, onset_seeds: list[int],
            planned: list[int], fitted_reasoning: bool, decay_protocol: str = "") -> PlacementDesign:
    specs = []
    for proto, conds in conditions.items():
        for (name, start), wd in conds.items():
            cell_seeds = onset_seeds if name == "onset" else seeds[proto]
            specs += [({"protocol": proto, "condition": name, "window_start": start, "seed": s},
                       protocol.anchor_run(P, s, wd, gamma=gamma, protocol=proto)) for s in cell_seeds]
    main = next(iter(conditions))  # the page's protocol comes first, the sensitivity table's after it
    return PlacementDesign(specs, summary, seeds[main], conditions, close, P.steps, budget, lam, list(conditions),
                           protocol=main, looks=planned, fitted_reasoning=fitted_reasoning,
                           decay_protocol=decay_protocol)


def window_lambdas(protocol_name: str, alt_protocol: str, alt_window_lambda: float, window_lambda: float
               ) -> dict[str, float]:
    """{protocol: its in-window λ} for the page's protocol and the sensitivity table's alternative (if any)."""
    out = {protocol_name: core.window_lambda(protocol_name, window_lambda)}
    if alt_protocol:
        protocol.get_protocol(alt_protocol, "alt_protocol")
        out[alt_protocol] = core.window_lambda(alt_protocol, alt_window_lambda)
    return out


def decay_lambdas(decay_protocol: str, decay_window_lambda: float, main: str) -> dict[str, float]:
    """{protocol: its in-window λ} for the sensitivity table's row under the paper's decay set (embeddings not
    decayed), if asked: a protocol whose decay set is the paper's, at its own λ unless `decay_window_lambda` says."""
    if not decay_protocol:
        return {}
    pr = protocol.get_protocol(decay_protocol, "decay_protocol")
    if pr.wd_params != config.PAPER_WD_PARAMS or decay_protocol == main:
        raise config.ConfigError(f"decay_protocol: must be a protocol with the paper's decay set "
                                 f"({config.PAPER_WD_PARAMS!r}) other than the page's, got {decay_protocol!r}")
    return {decay_protocol: core.window_lambda(decay_protocol, decay_window_lambda)}


def with_shared_none(per_run: pd.DataFrame, main: str, decay_protocol: str) -> pd.DataFrame:
    """The runs for the sensitivity table: with the decay set's row, the page's no-weight-decay runs of the decay
    set's seeds counted under it too (without weight decay the decay set changes nothing: the same training)."""
    if not decay_protocol:
        return per_run
    seeds = set(per_run.loc[per_run["protocol"] == decay_protocol, "seed"])
    none = per_run[(per_run["protocol"] == main) & (per_run["condition"] == "none") & per_run["seed"].isin(seeds)]
    return pd.concat([per_run, none.assign(protocol=decay_protocol)], ignore_index=True)


def decay_numbers(sens: pd.DataFrame, decay_protocol: str, verdict: str, prefix: str) -> dict[str, Any]:
    """The decay set's row of a sensitivity table as glued numbers, keyed '<prefix>decay_...': the verdict the page's
    rule gives there and whether it differs from the page's (nothing without the row)."""
    if not decay_protocol:
        return {}
    v = fates.row_verdict(sens, decay_protocol, fates.FITTED)
    return {f"{prefix}decay_verdict": v, f"{prefix}decay_differs": v != verdict}


# Each placement claim's key prefix for its decay-set numbers (`decay_numbers`: '<prefix>decay_verdict', ...).
DECAY_PREFIX = {"C1": "", "C2": "c2_", "C3": "c3_"}


def decay_differs(numbers: dict[str, Any], claims: Iterable[str]) -> list[tuple[str, str]]:
    """(claim, its verdict under the paper's decay set) for each of `claims` whose verdict there differs from the
    page's; empty where none does, the decay set's row is not read or the claim has none (not a placement claim)."""
    return [(c, numbers[f"{DECAY_PREFIX[c]}decay_verdict"]) for c in claims
            if c in DECAY_PREFIX and numbers.get(f"{DECAY_PREFIX[c]}decay_differs")]


def decay_sentence(numbers: dict[str, Any], claims: Iterable[str]) -> str:
    """One sentence with what the rules of `claims` say under the paper's decay set (embeddings not decayed), each
    against the verdict with every matrix decayed, and the seeds that reason there; '' where the decay set's row is
    not read (the pages name the length in a header above it)."""
    said = [(c, DECAY_PREFIX[c]) for c in claims if c in DECAY_PREFIX and f"{DECAY_PREFIX[c]}decay_verdict" in numbers]
    if not said:
        return ""
    says = "; ".join(f"{c} **{numbers[f'{k}decay_verdict']}**" + (
        ", not the verdict with every matrix decayed" if numbers[f"{k}decay_differs"] else
        ", as with every matrix decayed") for c, k in said)
    return ("Under the paper's decay set (embeddings not decayed) the "
            f"{'rule says' if len(said) == 1 else 'rules say'}: {says} (seeds that reason: "
            f"{numbers['decay_counts']}).")


def decay_counts(per_run: pd.DataFrame, main: str, decay_protocol: str, conditions: dict[str, str],
                 require_fit: bool = True) -> dict[str, Any]:
    """How many seeds reason per condition under the paper's decay set, as one glued phrase ('decay_counts':
    "window 26, full-run 19, none 0 of 32 seeds"; `conditions`: condition → its word there; the no-weight-decay
    runs are the page's own, `with_shared_none`); nothing without the decay set's row."""
    if not decay_protocol:
        return {}
    runs = with_shared_none(per_run, main, decay_protocol)
    runs = fates.with_fates(runs[runs["protocol"] == decay_protocol], require_fit=require_fit)
    k = (runs["fate"] == "reasoning").groupby(runs["condition"]).sum()
    return {"decay_counts": ", ".join(f"{w} {int(k.get(c, 0))}" for c, w in conditions.items())
            + f" of {runs['seed'].nunique()} seeds"}


def close_steps(per_run: pd.DataFrame, close: dict[str, int | None], default: int, length: int) -> list[int]:
    """The step each run's window closes: `close[condition]` (None: the run's own window, `window_start +
    length`); conditions not in `close` (no window) at `default`."""
    out = []
    for cond, start in zip(per_run["condition"], per_run["window_start"], strict=True):
        c = close.get(cond, default)
        out.append(int(start) + length if c is None else int(c))
    return out
