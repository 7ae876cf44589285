"""What readers see (the book's pages, the notebooks, the README) speaks of the science: rules are named by their
date, never by a tracker's issue numbers."""

from __future__ import annotations

import json
import re

from .conftest import REPO

TRACKER = re.compile(r"""\bissues?\s*#?\d+|(?<![&\w"'])#\d{1,3}\b(?![0-9a-fA-F])|\bthe issue's\b""", re.I)


def reader_texts() -> dict[str, str]:
    """Every reader-facing text: the book's markdown, each notebook's cells (source only), the README."""
    texts = {str(p.relative_to(REPO)): p.read_text() for p in sorted((REPO / "book").glob("*.md"))}
    for nb in sorted((REPO / "notebooks").glob("*.ipynb")):
        texts[str(nb.relative_to(REPO))] = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"])
    texts["README.md"] = (REPO / "README.md").read_text()
    return texts


def test_the_pattern_sees_tracker_words_and_spares_colours():
    assert TRACKER.search("the rule before #10 and why") and TRACKER.search("issue 37 says")
    assert TRACKER.search("as the issue's grid") and TRACKER.search("(issue #11)")
    assert not TRACKER.search('color="#555"') and not TRACKER.search("colour #1f77b4, step 10")


def test_no_reader_text_names_a_tracker_item():
    found = {path: m.group(0) for path, text in reader_texts().items() if (m := TRACKER.search(text))}
    assert not found, found


def test_no_reader_text_points_to_a_spec_the_reader_does_not_have():
    """The pages once cited sections of an internal specification ("spec §4.3", `spec/pilot.md`); a reader has
    neither, so the pages say what they mean instead."""
    spec = re.compile(r"\bspec §|\bspec/\w|the spec's|\(spec\b")
    found = {path: m.group(0) for path, text in reader_texts().items() if (m := spec.search(text))}
    assert not found, found


def test_the_readmes_answer_says_the_verdicts_the_shipped_scoreboard_says():
    """The README's five lines name verdicts in passing ("C3 not reproduced"); each must be the shipped
    scoreboard's, at the paper's length for a line about 20,000 steps and at the quick length otherwise."""
    import pandas as pd

    board = pd.read_csv(REPO / "results" / "claims.csv").set_index(["claim", "profile"])["verdict"]
    readme = (REPO / "README.md").read_text()
    answer = readme[readme.index("## The answer, in five lines"):readme.index("## What each command leaves")]
    items = [" ".join(item.split()) for item in re.split(r"\n(?=\d\. )", answer)[1:]]
    named = [(m.group(1), m.group(2), "paper" if "20,000 steps" in item else "quick") for item in items
             for m in re.finditer(r"\((C\d+b?) (reproduced|partly reproduced|not reproduced|inconclusive)\b", item)]
    assert len(named) >= 5, named
    wrong = [(c, said, board[c, prof]) for c, said, prof in named if board[c, prof] != said]
    assert not wrong, wrong
