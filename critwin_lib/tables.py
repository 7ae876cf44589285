"""Tables as a reader sees them in the book: the frames the pages compute keep their code names (the CSVs a reader
downloads and the tests use them), and only their HTML is rewritten. `setup` installs it for every DataFrame a page
displays, so no page has to remember: column names in words (no underscores, which also lets a header wrap), no
running index, a blank for a missing number, yes/no for a flag, a protocol by its name in the book, "none" for the
−1 that marks no weight decay in an onset column, and no string cut to "…".
"""

from __future__ import annotations

import html
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
    """One cell as text: a blank for a missing number, yes/no for a flag, three significant digits (whole numbers
    from 1,000 on, never 1.32e+03 beside 2,550 in one column)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (float, np.floating)):
        return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, (int, np.integer)):
        return f"{value:,}"
    return protocol.plain(value) if isinstance(value, str) else str(value)


# A pair of columns that bound an interval shows as one column "low to high" under the first name's words.
PAIRS = (("_lo", "_hi", ", 95 %"), ("lo", "hi", "95 %"), ("lo_90", "hi_90", "90 %"), ("lo90", "hi90", "90 %"))


def _intervals(show: pd.DataFrame) -> pd.DataFrame:
    """`show` with each interval's two columns as one text column "low to high" where the estimate's would go."""
    out = show.copy()
    for lo_end, hi_end, label in PAIRS:
        for lo in [c for c in out.columns if isinstance(c, str) and c.endswith(lo_end)]:
            hi = lo[:len(lo) - len(lo_end)] + hi_end
            if hi not in out.columns or lo == hi:
                continue
            base = lo[:len(lo) - len(lo_end)]
            name = (WORDS.get(base, base.replace("_", " ")) if base else "") + label
            text = [f"{cell(a)} to {cell(b)}" if cell(a) and cell(b) else "" for a, b in zip(out[lo], out[hi],
                                                                                            strict=True)]
            out.insert(out.columns.get_loc(lo), name, text)
            out = out.drop(columns=[lo, hi])
    return out


SHY = "\u00ad"  # a soft hyphen: where a long header word may break in a narrow column, with a hyphen shown


def header(label: str) -> str:
    """A column header that can wrap inside a narrow column: a soft hyphen in the middle of each long word."""
    return " ".join(w[:len(w) // 2] + SHY + w[len(w) // 2:] if len(w) > 8 and w.isalpha() else w
                    for w in label.split(" "))


def _html(show: pd.DataFrame) -> str:
    """The table's HTML: numbers right-aligned on one line (class "n"), words wrapping, long header words with a
    soft hyphen."""
    head = "".join(f"<th>{html.escape(header(str(c)))}</th>" for c in show.columns)
    rows = []
    for values in show.itertuples(index=False):
        cells = []
        for v in values:
            kind = "n" if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) else "t"
            cells.append(f'<td class="{kind}">{html.escape(cell(v))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (f'<table class="dataframe critwin-table"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table>")


def reader_html(df: pd.DataFrame) -> str:
    """The frame as the book shows it (see the module docstring). A named index (a pivot's seed, an analysis)
    becomes a first column; an unnamed one is a row number and goes. Columns of a pivot keep their axis name
    ("onset 800", "onset none"); an interval's two columns read as one."""
    show = df.copy()
    axis = show.columns.name
    if any(n is not None for n in show.index.names) or show.index.dtype == object:
        show = show.reset_index()
    show = _intervals(show)
    if "key" in show.columns and "metric" in show.columns:  # the metric in words says what its code key says
        show = show.drop(columns="key")
    labels = [words(c) if c != "index" else "" for c in show.columns]
    if axis is not None and not isinstance(show.columns, pd.MultiIndex):
        labels = [lab if isinstance(c, str) else f"{words(axis)} {lab}"
                  for c, lab in zip(show.columns, labels, strict=True)]
    show.columns = labels
    for col in show.columns:
        if col in ("onset", "window start") and pd.api.types.is_numeric_dtype(show[col]):
            show[col] = [("none" if v == NONE_ONSET else v) for v in show[col]]
    return _html(show)


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
