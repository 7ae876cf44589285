"""The book's tables in a reader's words: column names without code spelling, no row numbers, blanks for missing
numbers, yes/no for flags, "none" for the onset of a run without weight decay, nothing cut short."""

import numpy as np
import pandas as pd

from critwin_lib import tables


def test_a_frame_reads_in_words_without_row_numbers_or_code_values():
    df = pd.DataFrame({"condition": ["none", "window"], "share": [0.1, 0.5], "share_lo": [0.0, np.nan],
                       "share_hi": [0.25, 0.9], "fitted": [True, False], "t_mem": [3250.0, 0.123456],
                       "onset": [-1, 800]})
    html = tables.reader_html(df[df["condition"] != "x"]).replace(tables.SHY, "")  # a filtered frame: not a RangeIndex
    assert "<th>share reasoning, 95 %</th>" in html and "share_lo" not in html and "share_hi" not in html
    assert html.index("<th>share reasoning</th>") < html.index("<th>share reasoning, 95 %</th>")
    assert '<td class="t">0 to 0.25</td>' in html and '<td class="t"></td>' in html  # a missing end: blank
    assert '<td class="t">yes</td>' in html and "True" not in html and "NaN" not in html and "nan" not in html
    assert '<td class="n">3,250</td>' in html and '<td class="n">0.123</td>' in html
    assert '<td class="t">none</td>' in html and "-1" not in html
    assert html.count("<tr>") == 3 and "<th></th>" not in html  # a header and two rows, no index column


def test_a_pivot_keeps_its_row_labels_and_names_its_columns():
    runs = pd.DataFrame({"seed": [0, 0, 1, 1], "onset": [-1, 800, -1, 800], "fate": ["m", "r", "m", "m"]})
    html = tables.reader_html(runs.pivot(index="seed", columns="onset", values="fate")).replace(tables.SHY, "")
    assert "<th>seed</th>" in html and '<td class="t">m</td>' in html
    assert "<th>onset none</th>" in html and "<th>onset 800</th>" in html


def test_a_long_header_word_may_break_with_a_hyphen_and_a_short_one_not():
    assert tables.header("share reasoning") == f"share reas{tables.SHY}oning"
    assert tables.header("t_mem (fitted at step)") == "t_mem (fitted at step)"


def test_long_text_is_not_cut():
    tables.setup()
    text = "matches full-run weight decay at equal budget, " * 4
    assert text.strip() in tables.reader_html(pd.DataFrame({"parts": [text.strip()]}))
    assert pd.get_option("display.max_colwidth") is None


def test_a_protocol_id_in_a_cell_reads_as_its_name_in_the_book():
    html = tables.reader_html(pd.DataFrame({"protocol": ["mid-fit-matrices", "quarter-fit-matrices-20k"]}))
    assert "the quick protocol" in html and "the 20,000-step protocol" in html and "fit-matrices" not in html


def test_a_text_or_a_chart_names_each_protocol_in_words_whole_ids_only():
    from critwin_lib import plotting, protocol

    text = protocol.in_words("mid-fit-matrices vs early-fit; mid-fit: 4 seeds; c04b_mid_fit_matrices_edge")
    assert text == ("the quick protocol vs the early-fitting protocol, every parameter decayed; the first protocol "
                    "tried: 4 seeds; c04b_mid_fit_matrices_edge")
    data = plotting.plain_protocols(pd.DataFrame({"protocol": ["mid-fit-matrices", "sgd-mid-fit-matrices"]}))
    assert data["protocol"].tolist() == ["the quick protocol", "the SGD protocol"]
    assert plotting.plain_protocols(pd.DataFrame({"x": [1]})).columns.tolist() == ["x"]


def test_numbers_from_a_thousand_on_read_as_whole_numbers_with_separators():
    assert [tables.cell(v) for v in (1316.67, 2550.0, 0.7333, 12.5, float("nan"))] == ["1,317", "2,550", "0.733",
                                                                                       "12.5", ""]
