"""The four lines a claim page opens with, before its figure: the claim with the paper's numbers, what we find in one
sentence, the verdict, and the one caveat that matters. Written from the page's numbers (nothing here reads runs),
so the box says what the rule below says, in plain words.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from critwin_lib.sizes import length_name


def box(claim: str, finding: str, verdict: str, caveat: str) -> str:
    """The box as Markdown: a block quote of four lines."""
    return (f"> **The claim.** {claim}  \n> **What we find.** {finding}  \n> **Verdict: {verdict}.**  \n"
            f"> **The caveat.** {caveat}")


def _flips(sensitivity: pd.DataFrame, verdict: str) -> str:
    rows = len(sensitivity)
    flips = int((sensitivity["verdict"] != verdict).sum())
    return f"it flips in {flips} of {rows} rows of the sensitivity table" if flips else (
        f"it holds in all {rows} rows of the sensitivity table")


def c01_box(n: dict[str, Any], sensitivity: pd.DataFrame) -> str:
    """C1's box from its page numbers (`numbers` of `window_placement.c01`) and sensitivity table."""
    where = length_name(n["profile"])
    finding = (f"At {where}, weight decay during one 25 % window makes {n['k_window']} of {n['seeds']} seeds reason, "
               f"against {n['k_full']} with full-run weight decay of the same budget and {n['k_none']} without it "
               f"(mean OOD {n['ood_window']:.2f}, {n['ood_full']:.2f} and {n['ood_none']:.2f}).")
    caveat = (f"At the shares these seeds show, this design would end *reproduced* with probability "
              f"{n['power_observed']:.2f}, and {_flips(sensitivity, n['verdict'])}.")
    return box("Weight decay during a single window of 25 % of training matches weight decay over the whole run "
               "(OOD accuracy 0.93 against 0.91; without weight decay ≈ 0.15).", finding, n["verdict"], caveat)


def c02_c03_box(n: dict[str, Any]) -> str:
    """C2's and C3's box from their page numbers (`budget_placement.c02_c03`)."""
    where = length_name(n["profile"])
    finding = (f"At {where}, the same budget in the middle window makes {n['k_middle']} of {n['seeds']} seeds reason, "
               f"early {n['k_early']}, late {n['k_late']}, none without weight decay {n['k_none']}; mean OOD is "
               f"{n['ratio']:.1f}× higher in the middle than early.")
    ratio = f"the ratio's interval is [{n['c2_reaches_size_lo']:.2f}, {n['c2_reaches_size_hi']:.2f}]"
    won, size = n["c2_middle_beats_early_state"], n["c2_reaches_size_state"]
    c2 = (f"the middle beats the early window, but by less than 5–9× ({ratio})" if won == "holds" and
          size == "rejected" else f"{ratio}, which reaches 5×" if size == "holds" else
          f"the seeds cannot yet tell the middle from the early window ({ratio})")
    c3 = {"not reproduced": "early and late windows do not leave the model at chance",
          "reproduced": "early and late windows leave the model at chance, as no weight decay does"}.get(
        n["verdict_c3"], "whether early and late windows leave the model at chance is not decided")
    caveat = f"{c2[0].upper()}{c2[1:]}; {c3}."
    return box("At equal budget, weight decay placed mid-run gives 5–9× higher OOD accuracy than placed early (C2); "
               "early or late it leaves OOD at chance, ≈ 0.15, as no weight decay (C3).", finding,
               f"C2 {n['verdict_c2']}, C3 {n['verdict_c3']}", caveat)


def c04_box(n: dict[str, Any]) -> str:
    """C4's box from its page numbers (`window_onset.c04`)."""
    where = length_name(n["profile"])
    finding = f"At {where}, {n['range_text']}; {n['edge_text']}."
    caveat = (f"The paper's 100-step cliff is {n['cliff_answer']} on the fine grid: "
              f"{n.get('cliff_switch_text', 'no fine grid was trained')}.")
    return box("Moving the window's onset by 100 steps of 20,000 takes OOD accuracy from chance (0.15) to the "
               "reasoning regime (0.61); 400 steps reach the plateau (0.93).", finding, n["verdict"], caveat)
