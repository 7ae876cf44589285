"""The book's answer at a glance: is there a critical window, and when does it open? One frame per layer of the
intro's figure, at both run lengths on one axis (the window's onset as a share of the run): the share of seeds that
reason at each onset of C4's sweeps (the coarse grid, and the fine grid around the edge where it was trained), no
weight decay and full-run weight decay at the window's budget (C1) as reference bands, and what the paper claims.

Read from stored runs only (the C4 page passes its results at both lengths; C1's are read through the registry),
so drawing it never trains; a length whose runs are not all stored is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from critwin_lib.claims import fates, registry
from critwin_lib.claims.window_onset import C4Result
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


def _shares(result: C4Result, profile: str) -> pd.DataFrame:
    cols = ["onset", "reasoning", "seeds", "share", "share_lo", "share_hi"]
    parts = [result.table[result.table["onset"] >= 0][cols].assign(grid="coarse")]
    if result.cliff_table is not None:
        parts.append(result.cliff_table[result.cliff_table["onset"] >= 0][cols].assign(grid="fine"))
    out = pd.concat(parts, ignore_index=True)
    return out.assign(length=length_name(profile, result.steps), frac=out["onset"] / result.steps)


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
    return pd.DataFrame(rows).assign(length=length_name(profile, result.steps))


def glance(results: dict[str, C4Result | None], results_dir: str | Path) -> Glance:
    """The figure's frames from C4's results by profile (None: that length's runs are not all stored)."""
    have = {p: r for p, r in results.items() if r is not None}
    shares = pd.concat([_shares(r, p) for p, r in have.items()], ignore_index=True)
    refs = pd.concat([_references(r, p, results_dir) for p, r in have.items()], ignore_index=True)
    paper = pd.DataFrame([{"frac": f, "share": fates.paper_share(ood), "claim": c, "label": "paper"}
                          for f, ood, c in PAPER_POINTS])
    return Glance(shares, refs, paper)
