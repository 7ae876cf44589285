"""Tables as a reader sees them in the book: the frames the pages compute keep their code names (the CSVs a reader
downloads and the tests use them), and only their HTML is rewritten. `setup` installs it for every DataFrame a page
displays, so no page has to remember: column names in words (no underscores, which also lets a header wrap), no
running index, a blank for a missing number, yes/no for a flag, a protocol by its name in the book, "none" for the
−1 that marks no weight decay in an onset column, and no string cut to "…".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import protocol

# Column names whose words are not simply the name with its underscores as spaces.
WORDS = {
    "share": "share reasoning", "share_lo": "share, 95 % low", "share_hi": "share, 95 % high",
    "ood_lo": "OOD, 95 % low", "ood_hi": "OOD, 95 % high", "final_ood": "final OOD", "max_ood": "max OOD",
    "close_ood": "OOD when the window closes", "final_train": "final train", "t_mem": "t_mem (fitted at step)",
    "final_trained_shift": "OOD answers a trained shift", "other_rule": "other rule", "not_fitted": "not fitted",
    "onset_over_own_t_mem": "onset / own t_mem", "lambda": "λ", "gamma": "γ", "p": "p",
}
NONE_ONSET = -1  # the onset value the sweeps give a run without weight decay


def words(name: Any) -> str:
    """A column or index label in words."""
    if isinstance(name, tuple):
        return " ".join(words(n) for n in name if n != "")
    if isinstance(name, (int, float)) and not isinstance(name, bool) and name == NONE_ONSET:
        return "none"
    if not isinstance(name, str):
        return f"{name:g}" if isinstance(name, float) else str(name)
    return WORDS.get(name, name.replace("_", " ").replace("t mem", "t_mem"))


def cell(value: Any) -> str:
    """One cell as text: a blank for a missing number, yes/no for a flag, numbers as pandas would print them."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:.4g}"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return protocol.plain(value) if isinstance(value, str) else str(value)


def reader_html(df: pd.DataFrame) -> str:
    """The frame as the book shows it (see the module docstring). A named index (a pivot's seed, an analysis)
    becomes a first column; an unnamed one is a row number and goes. Columns of a pivot keep their axis name
    ("onset 800", "onset none")."""
    show = df.copy()
    axis = show.columns.name
    labels = [words(c) for c in show.columns]
    if axis is not None and not isinstance(show.columns, pd.MultiIndex):
        labels = [lab if isinstance(c, str) else f"{words(axis)} {lab}"
                  for c, lab in zip(show.columns, labels, strict=True)]
    show.columns = labels
    if any(n is not None for n in show.index.names) or show.index.dtype == object:
        show = show.reset_index()
        show.columns = [words(c) if c != "index" else "" for c in show.columns]
    for col in show.columns:
        if col in ("onset", "window start") and pd.api.types.is_numeric_dtype(show[col]):
            show[col] = [("none" if v == NONE_ONSET else v) for v in show[col]]
    body = show.map(cell)
    return body.to_html(index=False, escape=True, classes="critwin-table", border=0)


def setup() -> None:
    """Show every DataFrame of the running kernel as `reader_html` (a no-op outside IPython)."""
    pd.set_option("display.max_colwidth", None)  # a cut string is a lost word
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython ships with the notebooks' environment
        return
    ip = get_ipython()
    if ip is not None:
        ip.display_formatter.formatters["text/html"].for_type(pd.DataFrame, reader_html)
