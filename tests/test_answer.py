"""The book's answer at a glance: both lengths' onset sweeps on one axis (the share of the run), their reference
bands and the paper's numbers, drawn as a chart and as inline SVG with its data."""

from types import SimpleNamespace
from urllib.parse import unquote

import pandas as pd

from critwin_lib import length_charts
from critwin_lib.claims import answer, fates


def _table(onsets, k, n):
    return pd.DataFrame({"onset": onsets, "reasoning": k, "seeds": n, "share": [a / n for a in k],
                         "share_lo": 0.0, "share_hi": 1.0})


def test_shares_put_each_length_on_the_share_of_its_run_with_its_fine_grid():
    quick = SimpleNamespace(table=_table([-1, 0, 3200], [0, 6, 9], 12), steps=6400, window_steps=1600,
                            cliff_table=_table([-1, 800, 832], [0, 3, 5], 8))
    paper = SimpleNamespace(table=_table([-1, 0, 10000], [0, 6, 1], 8), steps=20000, window_steps=5000,
                            cliff_table=None)
    s = pd.concat([answer._shares(quick, "quick"), answer._shares(paper, "paper")], ignore_index=True)
    assert set(s["grid"]) == {"coarse", "fine"} and (s["onset"] >= 0).all()  # no weight decay is a reference
    assert s.loc[s["onset"] == 3200, "frac"].item() == 0.5 and s.loc[s["onset"] == 10000, "frac"].item() == 0.5
    assert s["length"].str.contains("20,000 steps").sum() == 2
    assert set(s["length"].str.split(", windows ").str[1]) == {"25 % of the run"}  # the legend says what both share


def test_the_paper_points_are_its_own_numbers_as_shares():
    g = answer.Glance(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(
        [{"frac": f, "share": fates.paper_share(o), "claim": c, "label": "paper"} for f, o, c in answer.PAPER_POINTS]))
    assert g.paper["share"].round(2).tolist() == [0.0, 0.92, 0.0]


def test_the_answer_chart_draws_offline_as_svg_with_its_data():
    shares = pd.concat([_table([0, 3200], [6, 9], 12).assign(grid="coarse", length="quick", frac=[0, 0.5]),
                        _table([800], [3], 8).assign(grid="fine", length="quick", frac=[0.125])])
    refs = _table([-1], [0], 12).assign(reference="no weight decay", length="quick")
    paper = pd.DataFrame([{"frac": 0.375, "share": 0.92, "claim": "C1", "label": "paper"}])
    html = length_charts.static_html(length_charts.answer_chart(shares, refs, paper, title="at a glance"))
    svg = html.split("</svg>")[0]
    assert html.startswith('<div class="critwin-static"><svg') and "<image" not in svg and 'href="http' not in svg
    links = html.split('class="critwin-data"')[1]
    assert links.count('download="at-a-glance') >= 3 and "onset" in unquote(links)


def test_full_run_weight_decay_is_a_reference_only_where_c1_runs_under_the_sweeps_protocol(monkeypatch):
    """At a length where C1 has moved to another protocol than C4's sweep, its full-run runs are no reference band."""
    table = pd.DataFrame([{"condition": "full, equal budget", "reasoning": 9, "seeds": 12, "share": 0.75,
                           "share_lo": 0.4, "share_hi": 0.9}])
    c4 = SimpleNamespace(table=_table([-1, 0], [0, 6], 8), steps=20000, window_steps=5000, numbers={"protocol": "a"})
    for c1_protocol, bands in (("a", 2), ("b", 1)):
        c1 = SimpleNamespace(table=table, numbers={"protocol": c1_protocol})
        monkeypatch.setattr(answer.registry, "at_profile", lambda *a, c1=c1, **k: SimpleNamespace(result=c1))
        refs = answer._references(c4, "paper", "results")
        assert len(refs) == bands and refs["reference"].iloc[0] == "no weight decay"


def test_the_paper_lengths_sentence_gives_each_read_pages_seed_counts_and_says_what_is_not_read(monkeypatch):
    from critwin_lib.claims import registry

    read = {"c01_critical_window": ({"k_window": 18, "k_full": 11, "k_none": 0, "seeds": 22},
                                    [{"claim": "C1", "verdict": "inconclusive"}])}

    def at_profile(stem, profile, results_dir, earlier=False):
        if earlier or stem not in read:
            return SimpleNamespace(result=None, stored=3, needed=64)
        numbers, rows = read[stem]
        return SimpleNamespace(result=SimpleNamespace(numbers=numbers, rows=rows), stored=88, needed=88)

    monkeypatch.setattr(registry, "at_profile", at_profile)
    text = answer._paper_sentence("results")
    assert "the middle window makes 18 of 22 seeds reason" in text and "(C1: inconclusive)" in text
    assert "C2/C3 not read yet (3 of 64 runs trained)" in text and "C4 not read yet" in text
    assert text.endswith(".")
    read["c01_critical_window"][0].update(quarter_verdict="partly reproduced", k_quarter=9)
    assert "(C1: inconclusive; the same window at a quarter of the budget makes 9 of 22 reason, partly " \
           "reproduced)" in answer._paper_sentence("results")
    read["c02_c03_budget_placement"] = ({"k_early": 21, "k_middle": 18, "k_late": 0, "seeds": 22, "unfit_late": 22},
                                        [{"claim": "C2", "verdict": "not reproduced"},
                                         {"claim": "C3", "verdict": "partly reproduced"}])
    assert ("in the last quarter 0 of 22 seeds reason (22 end with the training set unfitted; C2: not "
            "reproduced, C3: partly reproduced)") in answer._paper_sentence("results")
    read["c02_c03_budget_placement"][0]["unfit_late"] = 0  # every late run refitted: nothing to add
    assert "in the last quarter 0 of 22 seeds reason (C2: not reproduced" in answer._paper_sentence("results")
    read["c04_sharp_onset"] = ({"edge_text": "no onset where the reasoning share rises through 0.5 (0% of resamples)",
                                "cliff_answer": "not tested"}, [{"claim": "C4", "verdict": "not reproduced"}])
    assert answer._paper_sentence("results").endswith("rises through 0.5 (C4: not reproduced).")  # no fine grid yet
    read["c04_sharp_onset"][0]["cliff_answer"] = "ruled out"
    assert answer._paper_sentence("results").endswith(
        "(C4: not reproduced), and the paper's 100-step cliff is ruled out.")


def test_the_plain_answer_is_at_most_five_sentences(monkeypatch):
    """The intro promises the answer in at most five plain sentences: C1, C3, C4 with its cliff, and the paper's
    length (a sentence ends at '.' followed by a space and a capital letter)."""
    import re

    c1 = SimpleNamespace(numbers={"k_window": 30, "seeds": 48, "k_none": 0, "k_full": 35, "verdict": "reproduced"})
    c23 = SimpleNamespace(numbers={"k_early": 11, "k_middle": 23, "k_late": 20, "seeds": 32,
                                   "verdict_c3": "not reproduced"})
    monkeypatch.setattr(answer.registry, "at_profile",
                        lambda stem, profile, results_dir: SimpleNamespace(
                            result={answer.C1_STEM: c1, answer.C23_STEM: c23}.get(stem)))
    monkeypatch.setattr(answer, "_paper_sentence", lambda results_dir: "At the paper's length, not read yet.")
    c4 = {"range_text": "4 to 9 of 12 seeds reason", "edge_text": "the share rises at 1,600 (x)",
          "verdict": "partly reproduced", "cliff_answer": "ruled out",
          "cliff_short": "at the quick length (6,400 steps), onsets every 32 steps: 0.2"}
    text = answer.plain_answer(c4, "quick", "results")
    sentences = [s for s in re.split(r"(?<=\.) (?=[A-Z])", text) if s]
    assert 3 <= len(sentences) <= 5, sentences
    assert "cliff is ruled out, onsets every 32 steps." in text and "C4: partly reproduced" in text  # the length once
    c4["cliff_short"] = "at the quick length (6,400 steps), where no fine grid has been trained yet"
    assert "cliff is not tested, where no fine grid" in answer.plain_answer({**c4, "cliff_answer": "not tested"},
                                                                            "quick", "results")
    c4["cliff_short"] = "at the quick length (6,400 steps): no onsets"
    assert "cliff is not tested at the quick length (6,400 steps)." in answer.plain_answer(
        {**c4, "cliff_answer": "not tested"}, "quick", "results")


def test_a_verdict_that_differs_under_the_papers_decay_set_is_said_in_the_answer():
    same = {"decay_verdict": "reproduced", "decay_differs": False, "c2_decay_verdict": "partly reproduced",
            "c2_decay_differs": False, "c3_decay_verdict": "inconclusive", "c3_decay_differs": True}
    assert answer.decay_clause(same, ["C1"]) == ""
    assert answer.decay_clause({}, ["C1"]) == ""  # the decay set's runs not read yet
    assert answer.decay_clause({**same, "decay_differs": True}, ["C4"]) == ""  # C4 reads no decay-set row
    assert answer.decay_clause(same, ["C2", "C3"]) == (
        "; with the embeddings undecayed, as in the paper: C3 inconclusive")
