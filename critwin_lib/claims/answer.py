"""The book's answer at a glance: is there a critical window, and when does it open? One frame per layer of the
intro's figure, at both run lengths on one axis (the window's onset as a share of the run): the share of seeds that
reason at each onset of C4's sweeps (the coarse grid, and the fine grid around the edge where it was trained), no
weight decay and full-run weight decay at the window's budget (C1) as reference bands, and what the paper claims.

Read from stored runs only (the C4 page passes its results at both lengths; C1's are read through the registry),
so drawing it never trains; a length whose runs are not all stored is left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from critwin_lib.claims import fates, registry
from critwin_lib.claims.placement_design import decay_differs
from critwin_lib.claims.window_onset import NOT_TESTED, C4Result
from critwin_lib.sizes import length_name

C1_STEM = "c01_critical_window"
# The paper's own numbers on this axis (onset as a share of the run): the C1 window in the middle reaches 0.93,
# the same budget early (onset 0) or late (0.75) stays at chance (C3), as reasoning shares (`fates.paper_share`).
PAPER_POINTS = ((0.0, 0.15, "C3: early, at chance"), (0.375, 0.93, "C1: the middle window"),
                (0.75, 0.15, "C3: late, at chance"))


@dataclass
class Glance:
    shares: pd.DataFrame  # length, grid (coarse / fine), onset, frac, reasoning, seeds, share, share_lo, share_hi
    references: pd.DataFrame  # length, reference, reasoning, seeds, share, share_lo, share_hi
    paper: pd.DataFrame  # frac, share, claim, label


def length_label(result: C4Result, profile: str) -> str:
    """A run length as the figure's legend names it, with its window's share of the run ('the quick length (6,400
    steps), windows 25 % of the run'), so the legend says what the two curves share."""
    return f"{length_name(profile, result.steps)}, windows {100 * result.window_steps / result.steps:g} % of the run"


def _shares(result: C4Result, profile: str) -> pd.DataFrame:
    cols = ["onset", "reasoning", "seeds", "share", "share_lo", "share_hi"]
    parts = [result.table[result.table["onset"] >= 0][cols].assign(grid="coarse")]
    if result.cliff_table is not None:
        parts.append(result.cliff_table[result.cliff_table["onset"] >= 0][cols].assign(grid="fine"))
    out = pd.concat(parts, ignore_index=True)
    return out.assign(length=length_label(result, profile), frac=out["onset"] / result.steps)


def _references(result: C4Result, profile: str, results_dir: str | Path) -> pd.DataFrame:
    """No weight decay (C4's own seeds) and full-run weight decay at equal budget (C1, where stored under C4's
    protocol: at a length where C1 has moved to another protocol its full-run runs are no reference for C4's)."""
    none = result.table[result.table["onset"] < 0].iloc[0]
    rows = [{"reference": "no weight decay", **{k: none[k] for k in ("reasoning", "seeds", "share", "share_lo",
                                                                      "share_hi")}}]
    c1 = registry.at_profile(C1_STEM, profile, results_dir).result
    if c1 is not None and c1.numbers["protocol"] == result.numbers["protocol"]:
        full = c1.table.set_index("condition").loc["full, equal budget"]
        rows.append({"reference": "full-run weight decay (C1, equal budget)",
                     **{k: full[k] for k in ("reasoning", "seeds", "share", "share_lo", "share_hi")}})
    return pd.DataFrame(rows).assign(length=length_label(result, profile))


def glance(results: dict[str, C4Result | None], results_dir: str | Path) -> Glance:
    """The figure's frames from C4's results by profile (None: that length's runs are not all stored)."""
    have = {p: r for p, r in results.items() if r is not None}
    shares = pd.concat([_shares(r, p) for p, r in have.items()], ignore_index=True)
    refs = pd.concat([_references(r, p, results_dir) for p, r in have.items()], ignore_index=True)
    paper = pd.DataFrame([{"frac": f, "share": fates.paper_share(ood), "claim": c, "label": "paper"}
                          for f, ood, c in PAPER_POINTS])
    return Glance(shares, refs, paper)


C23_STEM = "c02_c03_budget_placement"
C4_STEM = "c04_sharp_onset"


def plain_answer(c4: dict, profile: str, results_dir: str | Path) -> str:
    """The book's answer in at most five plain sentences (plain text: the intro pastes it from another page, where only
    text glue travels), read from the stored runs: does weight decay in one window
    work (C1), is the window critical (early and late windows at chance, C3), where and how sharply it opens (C4, its
    cliff), and what the paper's length shows so far. `c4`: the C4 page's numbers at `profile`."""
    c1 = registry.at_profile(C1_STEM, profile, results_dir).result
    c23 = registry.at_profile(C23_STEM, profile, results_dir).result
    name = length_name(profile, c4.get("steps")) if c4.get("steps") else length_name(profile)
    out = []
    if c1 is not None:
        n = c1.numbers
        out.append(f"At {name}, weight decay during one 25 % window makes {n['k_window']} of {n['seeds']} seeds "
                   f"reason, against {n['k_none']} without weight decay and {n['k_full']} with full-run weight decay "
                   f"of the same budget (C1: {n['verdict']}{decay_clause(n, ['C1'])}"
                   f"{quarter_clause(n)}).")
    if c23 is not None:
        n = c23.numbers
        counts = (f"early {n['k_early']}, middle {n['k_middle']}, late {n['k_late']} of {n['seeds']} seeds reason; "
                  f"C3: {n['verdict_c3']}{decay_clause(n, ['C2', 'C3'])}")
        out.append({"not reproduced": f"It is not a critical window in the paper's sense: the same budget placed early "
                                      f"or late works too ({counts}).",
                    "reproduced": f"It is critical in the paper's sense: the same budget placed early or late leaves "
                                  f"the model at chance ({counts})."}.get(
            n["verdict_c3"], f"Whether the same budget placed early or late leaves the model at chance is not decided "
                             f"({counts})."))
    edge = c4["edge_text"].split(" (")[0]  # its interval is on the C4 page
    # "at <length>, <the grid>": the grid alone (the first sentence names the length); the numbers follow the colon
    head = c4["cliff_short"].split(":")[0]
    _, sep, grid = head.partition(", ")
    out.append(f"Along the run, {c4['range_text']}; {edge} (C4: {c4['verdict']}), and the paper's 100-step cliff "
               f"is {c4['cliff_answer']}{', ' + grid if sep else ' ' + head}.")
    out.append(_paper_sentence(results_dir))
    return " ".join(out)


def decay_clause(numbers: dict, claims: Iterable[str]) -> str:
    """'; with the embeddings undecayed, as in the paper: <claim> <verdict>, ...' for each of `claims` whose verdict
    under the paper's decay set differs from the page's (`placement_design.decay_differs`); '' where none does or
    the decay set's runs are not read."""
    differs = decay_differs(numbers, claims)
    return (f"; with the embeddings undecayed, as in the paper: {', '.join(f'{c} {v}' for c, v in differs)}"
            if differs else "")


def quarter_clause(numbers: dict) -> str:
    """'; the same window at a quarter of the budget: <k> of <n>, <verdict>' where C1's page reads its second reading
    (the window at the full-run λ, the 'quarter_' numbers of `window_placement.c01`); '' where it does not."""
    if "quarter_verdict" not in numbers:
        return ""
    return (f"; the same window at a quarter of the budget makes {numbers['k_quarter']} of {numbers['seeds']} "
            f"reason, {numbers['quarter_verdict']}")


def _cliff_clause(numbers: dict) -> str:
    """', and the paper's 100-step cliff is <found, ruled out, ...>' where C4's fine grid at that length has been
    read; '' where it has not (no words for a grid that is still training)."""
    said = numbers.get("cliff_answer", NOT_TESTED)
    return "" if said == NOT_TESTED else f", and the paper's 100-step cliff is {said}"


def _paper_sentence(results_dir: str | Path) -> str:
    """What the paper's length (20,000 steps, the paper's 25 % windows) shows so far, with its seed counts where a
    page's runs are all stored (the design before it, windows half the run long, is on the pages)."""
    sides = {stem: registry.at_profile(stem, "paper", results_dir) for stem in (C1_STEM, C23_STEM, C4_STEM)}
    parts = []
    for stem, side in sides.items():
        if side.result is None:
            parts.append(f"{'/'.join(registry.page(stem).claims)} not read yet ({side.stored} of {side.needed} runs "
                         "trained)")
            continue
        n, says = side.result.numbers, ", ".join(f"{r['claim']}: {r['verdict']}" for r in side.result.rows)
        says += decay_clause(n, registry.page(stem).claims) + (quarter_clause(n) if stem == C1_STEM else "")
        if stem == C23_STEM and n.get("unfit_late"):  # a late window that ends with the run may leave no time to refit
            says = f"{n['unfit_late']} end with the training set unfitted; {says}"
        parts.append({C1_STEM: f"the middle window makes {n.get('k_window')} of {n.get('seeds')} seeds reason, "
                               f"full-run weight decay of the same budget {n.get('k_full')} and none "
                               f"{n.get('k_none')} ({says})",
                      C23_STEM: f"the same window at the start makes {n.get('k_early')}, in the middle "
                                f"{n.get('k_middle')} and in the last quarter {n.get('k_late')} of {n.get('seeds')} "
                                f"seeds reason ({says})",
                      C4_STEM: f"along the run, {str(n.get('edge_text')).split(' (')[0]} ({says})"
                               + _cliff_clause(n)}[stem])
    return f"At the paper's length (20,000 steps, 25 % windows, fresh seeds), {'; '.join(parts)}."
