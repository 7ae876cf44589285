"""The book's tables in a reader's words: column names without code spelling, no row numbers, blanks for missing
numbers, yes/no for flags, "none" for the onset of a run without weight decay, nothing cut short."""

import numpy as np
import pandas as pd

from critwin_lib import tables


def test_a_frame_reads_in_words_without_row_numbers_or_code_values():
    df = pd.DataFrame({"condition": ["none", "window"], "share_lo": [0.0, np.nan], "fitted": [True, False],
                       "t_mem": [3250.0, 0.123456], "onset": [-1, 800]})
    html = tables.reader_html(df[df["condition"] != "x"])  # a filtered frame: its index is not a RangeIndex
    assert "<th>share, 95 % low</th>" in html and "share_lo" not in html
    assert "<td>yes</td>" in html and "True" not in html and "NaN" not in html and "nan" not in html
    assert "<td>3,250</td>" in html and "<td>0.1235</td>" in html
    assert "<td>none</td>" in html and "-1" not in html
    assert html.count("<tr>") == 2 and "<th></th>" not in html  # two rows, no index column


def test_a_pivot_keeps_its_row_labels_and_names_its_columns():
    runs = pd.DataFrame({"seed": [0, 0, 1, 1], "onset": [-1, 800, -1, 800], "fate": ["m", "r", "m", "m"]})
    html = tables.reader_html(runs.pivot(index="seed", columns="onset", values="fate"))
    assert "<th>seed</th>" in html and "<th>onset none</th>" in html and "<th>onset 800</th>" in html


def test_long_text_is_not_cut():
    tables.setup()
    text = "matches full-run weight decay at equal budget, " * 4
    assert text.strip() in tables.reader_html(pd.DataFrame({"parts": [text.strip()]}))
    assert pd.get_option("display.max_colwidth") is None


def test_a_protocol_id_in_a_cell_reads_as_its_name_in_the_book():
    html = tables.reader_html(pd.DataFrame({"protocol": ["mid-fit-matrices", "quarter-fit-matrices-20k"]}))
    assert "the quick protocol" in html and "the 20,000-step protocol" in html and "fit-matrices" not in html
