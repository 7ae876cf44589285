"""The quick and the paper length side by side on a page.

A page runs at one profile; the other length's verdict is read from stored runs only (`registry.at_profile`), so
opening a quick page never trains 20,000-step runs, and until the other length's runs are all stored the page
says how many are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from critwin_lib.claims import cliff, registry, scoreboard
from critwin_lib.claims.core import ClaimResult
from critwin_lib.sizes import length_name

OTHER = {"smoke": "paper", "quick": "paper", "paper": "quick"}  # the length a page at each profile is shown beside


@dataclass
class Lengths:
    other: str  # the profile shown beside the page's own
    table: pd.DataFrame  # one row per claim and profile: steps, seeds, runs stored of the design, ours, verdict
    numbers: dict[str, Any]  # the other profile's numbers, glued as <prefix><other>_<key>
    text: str  # one paragraph comparing the verdicts
    glue: dict[str, Any]  # what the page glues: both profiles' numbers, keys "<profile>_<key>" (the intro quotes
    # "paper_..." whichever length the page ran at)
    curves: pd.DataFrame  # mean OOD curves of both lengths where stored (columns length, profile, condition,
    # step, frac = step / the run's steps, mean, lo, hi, n): the page draws them side by side
    other_result: ClaimResult | None = None  # the page's result at the other length (None: not all stored)

    def glue_with_texts(self, keys: list[str], unread: dict[str, str] | None = None) -> dict[str, Any]:
        """`glue`, with each text number in `keys` present for the other length too: where its runs are not all
        stored the text says so (in the page's own words for the keys of `unread`), so the intro can quote
        "<profile>_<key>" whatever is stored."""
        missing = (f"not read yet ({self.numbers['stored']} of {self.numbers['needed']} runs of "
                   f"{length_name(self.other)} stored)")
        said = dict.fromkeys(keys, missing)
        if self.other_result is None:
            said |= unread or {}
        return {**{f"{self.other}_{k}": v for k, v in said.items()}, **self.glue}


def side_by_side(stem: str, here: ClaimResult, profile: str, results_dir: str | Path) -> Lengths:
    """Page `stem`'s rows at `profile` (`here`, just computed) beside its rows at the other length, read from
    the stored runs only; a paragraph that compares the verdicts, or says how many runs are still missing."""
    other = OTHER.get(profile, "paper")
    p = registry.page(stem)
    main = {r["claim"]: r for r in here.rows}
    side = registry.at_profile(stem, other, results_dir)
    rows, numbers = scoreboard.read_side(p, side, main)
    d = registry.design_at(p, profile)  # the page's own
    n_here = len(d.keys)
    mine = {"profile": profile, "steps": d.run_steps, "stored": n_here, "needed": n_here, "design": d.summary}
    table = pd.DataFrame([{**mine, **{k: r[k] for k in ("claim", "seeds", "ours", "verdict")}} for r in here.rows]
                         + [{"profile": other, "steps": numbers["steps"], "stored": numbers["stored"],
                             "needed": numbers["needed"], "design": numbers["design"],
                             **{k: r[k] for k in ("claim", "seeds", "ours", "verdict")}}
                            for r in rows])
    at = {r["claim"]: r for r in rows}
    head = f"At {length_name(profile, mine['steps'])}"
    there = f"at {length_name(other)} ({numbers['steps']:,} steps, {numbers['seeds']} seeds)"
    if rows and rows[0]["verdict"] == scoreboard.NOT_RUN:
        text = (head + ", " + "; ".join(f"{c} is **{r['verdict']}** ({r['seeds']} seeds)" for c, r in main.items())
                + f". {there[0].upper() + there[1:]} its runs are not all trained yet: {numbers['stored']} of "
                  f"{numbers['needed']} are stored (`make reproduce PROFILE={other} CLAIMS=\"{' '.join(p.claims)}\"` "
                  f"trains the rest, then this paragraph compares the verdicts).")
    else:
        text = (head + " and " + there + ": " + "; ".join(
            f"{c} is **{r['verdict']}** ({r['seeds']} seeds: {r['ours']}) and **{at[c]['verdict']}** "
            f"({at[c]['ours']})" for c, r in main.items() if c in at) + ".")
    text += f" The design at {length_name(other)}: {numbers['design']}."
    earlier = _earlier(p, other, results_dir)
    if earlier:
        text += " " + earlier.pop("text")
        numbers = {**numbers, **{f"earlier_{k}": v for k, v in earlier.items()}}
    own = {**mine, "seeds": int(here.rows[0]["seeds"]) if here.rows else 0, **here.numbers}
    glue = {**{f"{other}_{k}": v for k, v in numbers.items()}, **{f"{profile}_{k}": v for k, v in own.items()}}
    curves = pd.concat([_curves(here, profile, mine["steps"]), _curves(side.result, other, numbers["steps"])],
                       ignore_index=True)
    return Lengths(other, table, numbers, text, glue, curves, side.result)


def _earlier(p: registry.Page, profile: str, results_dir: str | Path) -> dict[str, Any]:
    """What page `p` read at `profile` under its design there before the last change (`Page.earlier`), from the
    stored runs: the verdicts, the design and one sentence; {} where the page declares none."""
    if profile not in p.earlier:
        return {}
    side = registry.at_profile(p.stem, profile, results_dir, earlier=True)
    name = length_name(profile)
    if side.result is None:  # the same keys as below, so a text can quote them whatever is stored
        keys = [*scoreboard.verdict_keys(p.claims), "fitted_verdict"]
        return {"design": side.design, **dict.fromkeys(keys, scoreboard.NOT_RUN),
                "text": f"The earlier design at {name} ({side.design}) has {side.stored} of {side.needed} runs stored."}
    verdicts = {r["claim"]: r for r in side.result.rows}
    said = "; ".join(f"{c} **{r['verdict']}** ({r['ours']})" for c, r in verdicts.items())
    strict = side.result.numbers.get("fitted_verdict", scoreboard.NOT_RUN)
    out = {"design": side.design, "text": f"Before {name} moved to this design it ran under an earlier one "
                                          f"({side.design}), where the same rule read: {said}"
                                          + (f"; counting only seeds that end fitted: **{strict}**"
                                             if strict != scoreboard.NOT_RUN else "")
                                          + ". That design took no runs after the page moved, so it stands as read"
                                            " here."}
    keys = dict(zip(p.claims, scoreboard.verdict_keys(p.claims), strict=True))
    return out | {keys[c]: r["verdict"] for c, r in verdicts.items()} | {"fitted_verdict": strict}


CURVE_COLUMNS = ["length", "profile", "condition", "step", "frac", "mean", "lo", "hi", "n"]


def _curves(result: ClaimResult | None, profile: str, steps: int) -> pd.DataFrame:
    """A result's `length_curves` tagged with its length, the step as a share of the run (none: no rows)."""
    c = result.length_curves() if result is not None else None
    if c is None:
        return pd.DataFrame(columns=CURVE_COLUMNS)
    name = length_name(profile, steps)
    return c.assign(length=name, profile=profile, frac=c["step"] / steps)[CURVE_COLUMNS]


def upcoming_cliff_power(stem: str, profile: str) -> float:
    """The power against the paper's cliff (`cliff.cliff_power`) of the fine onset grid that page `stem` registers
    at `profile` before its runs (`Page.upcoming`), with its onsets, seeds and direction; NaN where it registers
    none there."""
    p = registry.page(stem)
    if profile not in p.upcoming:
        return math.nan
    fine = getattr(p.design(**registry.design_params(registry.upcoming_defaults(p, profile))), "cliff", None)
    if fine is None:
        return math.nan
    return cliff.cliff_power(sorted(fine.grid), fine.resolution, len(fine.seeds), fine.falling)
