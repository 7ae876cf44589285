"""Every claim page opens with its four-line box (the claim, what we find, the verdict, the caveat), written from
the page's own numbers: the box of each page is glued at the top of its notebook, builds from the shipped numbers,
says the verdict the scoreboard says, and names no protocol id or parameter."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from critwin_lib.claims import boxes, registry

from .conftest import REPO

CLAIM_PAGES = [p for p in registry.PAGES if p.claims]
INTERNAL = re.compile(r"fit-matrices|-20k|`|\b\w+_\w+\b|\bnan\b|\binf\b")


def _numbers(stem: str) -> dict:
    p = registry.page(stem)
    shipped = json.loads((REPO / "results" / "numbers.json").read_text())[stem]
    return {k[len(p.glue_prefix):]: v for k, v in shipped.items()}


def _box(stem: str) -> str:
    p, n = registry.page(stem), _numbers(stem)
    fn = getattr(boxes, f"{p.glue_prefix}box")
    if stem == "c01_critical_window":  # C1's caveat also reads its sensitivity table
        return fn(n, pd.DataFrame({"verdict": [n["verdict"], "inconclusive"]}))
    return fn(n)


@pytest.mark.parametrize("page", CLAIM_PAGES, ids=lambda p: p.stem)
def test_each_claim_page_opens_with_its_box(page):
    cells = json.loads(page.notebook.read_text())["cells"]
    first = "".join(cells[0]["source"]).split("\n")
    assert first[0].startswith("# ") and first[2] == f"```{{glue:md}} {page.glue_prefix}box", first[:4]
    assert any(f'glue("{page.glue_prefix}box", Markdown(boxes.' in "".join(c["source"]) for c in cells
               if c["cell_type"] == "code")


@pytest.mark.parametrize("page", CLAIM_PAGES, ids=lambda p: p.stem)
def test_each_box_says_the_scoreboards_verdict_in_four_plain_lines(page):
    text = _box(page.stem)
    lines = text.split("\n")
    assert [ln.split("**")[1].split(".")[0].split(":")[0] for ln in lines] == [
        "The claim", "What we find", "Verdict", "The caveat"], lines
    board = pd.read_csv(REPO / "results" / "claims.csv")
    quick = board[(board["profile"] == "quick") & board["claim"].isin(page.claims)].set_index("claim")["verdict"]
    if len(page.claims) == 1:
        assert f"**Verdict: {quick[page.claims[0]]}.**" in text
    else:
        assert all(f"{c} {quick[c]}" in lines[2] for c in page.claims), (lines[2], dict(quick))
    assert not INTERNAL.search(text), INTERNAL.search(text)


def test_the_internal_word_pattern_sees_ids_and_spares_plain_text():
    assert INTERNAL.search("under mid-fit-matrices") and INTERNAL.search("the onset_seeds") and INTERNAL.search("nan")
    assert not INTERNAL.search("γ 0.5: 11 of 12, mean OOD 0.70 [0.40, 0.88], 25 % of the run")


def test_c1s_caveat_says_a_verdict_that_differs_under_the_papers_decay_set():
    n = _numbers("c01_critical_window")
    sens = pd.DataFrame({"verdict": [n["verdict"]]})
    same = boxes.c01_box({**n, "decay_verdict": n["verdict"], "decay_differs": False}, sens)
    differs = boxes.c01_box({**n, "decay_verdict": "inconclusive", "decay_differs": True}, sens)
    assert "as in the paper" not in same and "not decayed" not in boxes.c01_box(
        {k: v for k, v in n.items() if not k.startswith("decay_")}, sens)
    assert differs.endswith("with the token and position embeddings not decayed, as in the paper, the rule says "
                            "*inconclusive*.")


def test_c2_c3s_caveat_names_each_claim_whose_verdict_differs_under_the_papers_decay_set():
    n = {k: v for k, v in _numbers("c02_c03_budget_placement").items() if "decay" not in k}
    plain = boxes.c02_c03_box(n)
    assert "not decayed" not in plain
    same = {**n, "decay_counts": "early 1, middle 2, late 0, none 0 of 32 seeds", "c2_decay_verdict": n["verdict_c2"],
            "c2_decay_differs": False, "c3_decay_verdict": n["verdict_c3"], "c3_decay_differs": False}
    assert boxes.c02_c03_box(same) == plain
    one = boxes.c02_c03_box({**same, "c3_decay_verdict": "reproduced", "c3_decay_differs": True})
    assert one.endswith("with the token and position embeddings not decayed, as in the paper, the rules say C3 "
                        "*reproduced* (early 1, middle 2, late 0, none 0 of 32 seeds reason).")
    both = boxes.c02_c03_box({**same, "c2_decay_verdict": "not reproduced", "c2_decay_differs": True,
                              "c3_decay_verdict": "reproduced", "c3_decay_differs": True})
    assert "the rules say C2 *not reproduced*, C3 *reproduced* (" in both
