"""The fine onset grid around an edge (`claims.cliff`), the adjacent-onset jumps it reports, and the old C4 rule's
bisection (`claims.history`), which reads stored runs only."""

import math

import pandas as pd
import pytest

from critwin_lib.claims import cliff
from critwin_lib.claims import history as rule_history
from critwin_lib.config import ConfigError
from critwin_lib.sizes import get_profile


def test_the_fine_grid_tiles_the_bracket_at_the_papers_resolution_coarse_first():
    quick, paper = get_profile("quick"), get_profile("paper")
    assert cliff.resolution(quick) == 32 and cliff.resolution(paper) == 100
    grid = cliff.fine_grid(quick, 0.125, 0.25)
    assert sorted(grid) == list(range(800, 1601, 32)) and len(grid) == 26
    assert grid[:13] == list(range(800, 1601, 64))  # every other onset first
    assert sorted(cliff.fine_grid(paper, 0.4, 0.475)) == list(range(8000, 9501, 100))
    with pytest.raises(ConfigError, match="^hi_frac:"):
        cliff.fine_grid(quick, 0.25, 0.125)


def test_the_cliff_design_reuses_the_coarse_sweeps_seeds_and_baseline():
    d = cliff.cliff_design(profile="quick", n_seeds=8, gamma=1.0, lo_frac=0.125, hi_frac=0.25, window_frac=0.25)
    assert d.seeds == list(range(8)) and d.resolution == 32 and len(d.specs) == 8 * (26 + 1)
    assert sorted({lab["onset"] for lab, _ in d.specs}) == [-1, *range(800, 1601, 32)]
    assert "onsets every 32 steps from 800 to 1600 (26 onsets)" in d.summary
    with pytest.raises(ConfigError, match="^protocol_name"):
        cliff.cliff_design(profile="quick", n_seeds=8, gamma=1.0, lo_frac=0.125, hi_frac=0.25, window_frac=0.25,
                           protocol_name="no-such-protocol")


def _runs(shares: dict[int, list[bool]]) -> pd.DataFrame:
    return pd.DataFrame([{"seed": s, "onset": o, "fate": "reasoning" if r else "memorizing"}
                         for o, fates in shares.items() for s, r in enumerate(fates)])


def test_adjacent_jumps_pairs_onsets_within_the_span_with_an_exact_paired_test():
    runs = _runs({0: [False] * 8, 32: [False] * 8, 64: [True] * 7 + [False], 200: [True] * 8})
    j = cliff.adjacent_jumps(runs, span=64).set_index(["from", "to"])
    assert list(j.index) == [(0, 32), (0, 64), (32, 64)]  # 200 is more than 64 steps from every other onset
    assert j.loc[(0, 64), "change"] == pytest.approx(7 / 8) and j.loc[(0, 64), "p"] == pytest.approx(0.5 ** 7)
    assert j.loc[(0, 32), "change"] == 0 and j.loc[(0, 32), "p"] == 1.0
    fall = cliff.adjacent_jumps(runs, span=64, falling=True).set_index(["from", "to"])
    assert fall.loc[(0, 64), "change"] == pytest.approx(-7 / 8) and fall.loc[(0, 64), "p"] == 1.0


def test_the_old_onset_rule_reads_stored_runs_only(tmp_path):
    """In an empty store the old C4 rule is "not computed" and nothing is trained or written."""
    old = rule_history.old_onset_rule(get_profile("smoke"), [0, 1], 1.0, "mid-fit-matrices", [0, 24], 0.25,
                                       str(tmp_path))
    assert old.sweep is None and old.missing
    numbers = rule_history.c04_old_numbers(old, 2)
    assert numbers["old_rule_verdict"].startswith("not computed") and math.isnan(numbers["old_edge"])
    assert rule_history.c04b_old_numbers([old])["old_text"] == "not computed"
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
