"""The fine onset grid around an edge (`claims.cliff`), the adjacent-onset jumps it reports, and the old C4 rule's
bisection (`claims.history`), which reads stored runs only."""

import math

import pandas as pd
import pytest

from critwin_lib.claims import cliff, fates, onsets, rules
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


def _runs(shares: dict[int, list[bool]], reasoning_ood: float = 1.0) -> pd.DataFrame:
    """A reasoning run ends at OOD `reasoning_ood`, a memorizing one at chance (0.15)."""
    return pd.DataFrame([{"seed": s, "onset": o, "fate": "reasoning" if r else "memorizing",
                          "final_ood": reasoning_ood if r else fates.CHANCE_OOD}
                         for o, fates_ in shares.items() for s, r in enumerate(fates_)])


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


def _grid_runs(curve: list[float], n_seeds: int, seed: int = 0, step: int = 32, reasoning_ood: float = 1.0
               ) -> pd.DataFrame:
    """Seeds reasoning independently with the given share at each onset (onsets 0, step, 2·step, ...)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random((n_seeds, len(curve))) < np.asarray(curve)
    return _runs({i * step: list(x[:, i]) for i in range(len(curve))}, reasoning_ood)


def test_block_changes_read_the_share_between_neighbouring_blocks():
    import numpy as np

    x = np.array([[0, 0, 0, 0, 1, 1, 1, 1, 1]], float)  # one seed; a step between onsets 3 and 4
    assert cliff.block_changes(x).tolist() == [1.0, 0.75]  # cuts at onsets 4 and 5
    assert cliff.block_changes(np.ones((3, 8))).tolist() == [0.0]


def test_the_cliff_rule_reaches_each_state():
    assert cliff.decide_cliff(0.9, 0.001, 0.95) == rules.HOLDS
    assert cliff.decide_cliff(0.9, 0.2, 0.95) == rules.UNDECIDED  # steep, but a shuffled grid is as steep
    assert cliff.decide_cliff(0.3, 0.001, 0.6) == rules.UNDECIDED
    assert cliff.decide_cliff(0.5, 0.001, 0.3) == rules.REJECTED  # a spike that does not stay is no cliff
    assert cliff.decide_cliff(0.2, 0.9, math.nan) == rules.UNDECIDED


def test_a_sharp_cliff_holds_and_a_flat_grid_is_rejected():
    sharp = cliff.read_cliff(_grid_runs([0.0] * 12 + [1.0] * 12, 8), resolution=32)
    assert sharp.state == rules.HOLDS and sharp.steepest == pytest.approx(0.85) and sharp.steepest_at == 12 * 32
    assert sharp.p_steepest < 0.01 and sharp.bracket == pytest.approx(0.85) and sharp.shares.iloc[-1] == 1.0
    assert "steepest rise in mean OOD accuracy" in sharp.text()
    flat = cliff.read_cliff(_grid_runs([0.5] * 24, 12, seed=3), resolution=32)
    assert flat.state == rules.REJECTED and flat.bracket_hi < cliff.CLIFF_JUMP
    assert cliff.CLIFF_JUMP == pytest.approx(0.61 - 0.15) and "a rise of 0.46 takes" in flat.text()
    gradual = cliff.read_cliff(_grid_runs([i / 23 for i in range(24)], 8, seed=1), resolution=32)
    assert gradual.slope > 0 and gradual.slope_lo < gradual.slope < gradual.slope_hi
    assert gradual.width(gradual.slope) == pytest.approx(100 * 0.46 / gradual.slope)
    falling = cliff.read_cliff(_grid_runs([1.0] * 12 + [0.0] * 12, 8), resolution=32, falling=True)
    assert falling.state == rules.HOLDS and falling.steepest == pytest.approx(0.85) and falling.slope > 0
    few_runs = _grid_runs([0.0] * 3 + [1.0] * 3, 8)
    few = cliff.read_cliff(few_runs, resolution=32)
    assert few.state == rules.UNDECIDED and "too few onsets" in few.text()
    from critwin_lib.claims import window_onset

    grid = window_onset.seed_grid(few_runs, few)  # the seed-by-seed chart's frame, even where nothing is read
    assert len(grid) == 6 * 8 and grid["switch onset"].isna().all()
    sharp_grid = window_onset.seed_grid(_grid_runs([0.0] * 12 + [1.0] * 12, 8), sharp)
    assert (sharp_grid["switch onset"] == 12 * 32).all()


def test_the_cliff_is_read_in_the_papers_metric_and_the_old_share_rule_is_kept_for_the_history():
    """Seeds that all switch at one onset to a weak reasoning (final OOD 0.5, the training set fitted): the share
    of reasoning seeds jumps by 1 (a cliff by the old rule's 0.4), mean OOD by 0.35, short of the paper's 0.15 →
    0.61 (0.46), and a bracket that cannot hold that jump rejects it."""
    runs = _grid_runs([0.0] * 12 + [1.0] * 12, 8, reasoning_ood=0.5)
    ood, share = cliff.read_cliff(runs, resolution=32), cliff.read_cliff(runs, resolution=32, value=cliff.SHARE)
    assert share.state == rules.HOLDS and share.steepest == 1.0 and share.jump == 0.4
    assert ood.steepest == pytest.approx(0.35) and ood.bracket_hi < cliff.CLIFF_JUMP and ood.state == rules.REJECTED
    assert "reasoning share" in share.text() and "a rise of 0.40 takes" in share.text()
    with pytest.raises(ValueError, match="^value:"):
        cliff.read_cliff(runs, resolution=32, value="max_ood")


def test_the_papers_cliff_and_the_power_of_the_fine_grid():
    grid = sorted(cliff.fine_grid(get_profile("quick"), 0.125, 0.25))
    curve = cliff.paper_curve(grid, 32)
    assert curve[0] == 0.15 and curve[-1] == pytest.approx(0.93)  # the paper's mean OOD accuracy
    tiled = cliff.paper_curve(list(range(0, 801, 100)), 100)  # its edge at 400
    assert tiled[4:].tolist() == pytest.approx([0.15, 0.61, 0.61 + 0.32 / 3, 0.61 + 0.64 / 3, 0.93])
    assert curve[::-1].tolist() == cliff.paper_curve(grid, 32, falling=True).tolist()
    share = cliff.paper_curve(grid, 32, value=cliff.SHARE)
    assert share[0] == 0 and share[-1] == pytest.approx(fates.paper_share(0.93))
    import numpy as np

    draws = cliff.paper_draws(np.random.default_rng(0), (20_000, len(curve)), curve)
    assert set(np.unique(draws)) <= {0.15, 1.0} and np.allclose(draws.mean(axis=0), curve, atol=0.01)
    assert cliff.cliff_power(grid, 32, 8, draws=50, n_perm=200) >= 0.9  # the paper's cliff is found
    assert cliff.cliff_power(grid[:5], 32, 8) == 0.0  # too few onsets to read


def test_the_cliff_in_words_for_the_intro():
    from critwin_lib.claims import window_onset

    none = window_onset.cliff_texts(None, "paper", 20_000)
    assert none["cliff_answer"] == "not tested"
    assert none["cliff_short"] == "at the paper's length (20,000 steps), where no fine grid has been trained yet"
    flat_coarse = [onsets.ShareEdge(0.5, math.nan, math.nan, math.nan, f, pd.Series(dtype=float), falling)
                   for f, falling in ((0.54, False), (0.34, True))]
    nowhere = window_onset.cliff_texts(None, "paper", 20_000, tuple(flat_coarse))
    assert nowhere["cliff_answer"] == "not tested"
    assert nowhere["cliff_short"] == (
        "at the paper's length (20,000 steps), where the coarse onset sweep finds no edge for a fine grid at the "
        "paper's resolution to tile: no onset where the reasoning share rises through 0.5 (54% of resamples over "
        "seeds have one); no onset where the reasoning share falls through 0.5 for good (34% of resamples over seeds "
        "have one)")
    edged = [onsets.ShareEdge(0.5, 1600.0, 1400.0, 1800.0, 0.9, pd.Series(dtype=float)), flat_coarse[1]]
    bracketed = window_onset.cliff_texts(None, "paper", 20_000, tuple(edged))
    assert "no fine grid has been trained" in bracketed["cliff_short"]
    sharp = cliff.read_cliff(_grid_runs([0.0] * 12 + [1.0] * 12, 8), resolution=32)
    t = window_onset.cliff_texts(sharp, "quick", 6400)
    assert t["cliff_answer"] == "found" and t["cliff_short"].startswith("at the quick length (6,400 steps), onsets")
    flat = cliff.read_cliff(_grid_runs([0.5] * 24, 12, seed=3), resolution=32)
    assert window_onset.cliff_texts(flat, "quick", 6400)["cliff_answer"] == "ruled out"


def test_a_grid_like_the_papers_cliff_is_common_under_it_and_a_flat_one_is_not():
    grid = sorted(cliff.fine_grid(get_profile("quick"), 0.125, 0.25))
    curve = list(cliff.paper_curve(grid, 32))
    like = cliff.read_cliff(_grid_runs(curve, 8, seed=2), resolution=32)
    flat = cliff.read_cliff(_grid_runs([0.5] * len(grid), 8, seed=2), resolution=32)
    assert cliff.paper_p(like, draws=2000) > 0.05 and cliff.paper_p(flat, draws=2000) < 0.01


def test_the_null_keeps_each_seeds_sequence_and_the_papers_cliff_can_be_excluded():
    """Seeds that each switch sharply but at their own onset make no population cliff: against circular shifts of
    each seed's sequence (the null since 2026-12-06) their steepest block change is ordinary, and each seed's switch
    onset is reported with their spread; a grid far flatter than the paper's cliff would give rejects the part even
    where the bracket's change cannot be bounded below the paper's jump."""
    import numpy as np

    grid = list(range(0, 24 * 32, 32))
    rows = []
    for seed in range(8):  # seed k switches from memorizing to reasoning at onset 3k (one switch each)
        rows += [{"onset": o, "seed": seed, "fate": "reasoning" if i >= 3 * seed else "memorizing",
                  "final_ood": 1.0 if i >= 3 * seed else 0.15} for i, o in enumerate(grid)]
    staggered = cliff.read_cliff(pd.DataFrame(rows), resolution=32)
    assert staggered.p_steepest > 0.05  # each seed switches sharply, the seeds do not switch together
    on = staggered.switches
    assert on.loc[1] == 3 * 32 and on.loc[7] == 21 * 32 and math.isnan(on.loc[0])  # seed 0 reasons throughout
    assert "7 of 8 seeds change fate across the bracket, each at its own onset: from 96 to 672" in staggered.text()
    assert staggered.others == {"memorizing": 3 * sum(range(8))}  # the runs before each seed's switch
    assert "where they do not reason, their runs end memorizing (84)" in staggered.switch_text()
    assert staggered.paper_p < rules.ALPHA and staggered.state == rules.REJECTED  # the paper's cliff is excluded
    x = np.array([[0.0] * 12 + [1.0] * 12] * 8)
    assert cliff.switch_onsets(x, grid, 1).tolist() == [12 * 32] * 8
    rows = []  # the paper length's falling bracket: a window that ends too late leaves the training set unfitted
    for seed in range(8):
        for i, o in enumerate(grid):
            late = i >= len(grid) - 2
            fate = "memorizing" if seed >= 5 else "not fitted" if late else "reasoning"
            rows.append({"onset": o, "seed": seed, "fate": fate, "final_ood": 0.0 if seed >= 5 else 0.9 - 0.2 * late})
    unfitted = cliff.read_cliff(pd.DataFrame(rows), resolution=32, falling=True)
    assert unfitted.others == {"not fitted": 10} and unfitted.state == rules.REJECTED  # OOD barely moves
    assert unfitted.switch_text().endswith("where they do not reason, their runs end with the training set unfitted "
                                           "(10)")
    assert cliff.decide_cliff(0.9, 0.001, 0.95, paper_p=0.01) == rules.REJECTED
    assert cliff.decide_cliff(0.9, 0.001, 0.95, paper_p=0.5) == rules.HOLDS


def test_the_paper_lengths_fine_grid_tiles_the_falling_bracket_with_the_coarse_sweeps_seeds():
    from critwin_lib.claims import registry

    c4 = registry.page("c04_sharp_onset")
    d = c4.design(**registry.design_params(registry.upcoming_defaults(c4, "paper")))
    assert d.cliff.falling and d.cliff.resolution == 100 and len(d.cliff.grid) == 26
    assert min(d.cliff.grid) == 12_500 and max(d.cliff.grid) == 15_000 and d.cliff.seeds == list(range(4, 12))
    coarse = {k for k in registry.design_at(c4, "paper").keys}
    fine = {k for k in d.cliff.keys}
    assert len(fine & coarse) == 8 * 3  # the bracket's ends and no weight decay are the coarse sweep's runs
    from critwin_lib.claims import lengths

    assert lengths.upcoming_cliff_power("c04_sharp_onset", "paper") >= 0.8  # the page states it beside the design
    assert math.isnan(lengths.upcoming_cliff_power("c04_sharp_onset", "quick"))  # none registered there


def test_the_background_sweep_trains_the_fine_grid_onset_by_onset_every_other_onset_first():
    import importlib.util
    from pathlib import Path

    from critwin_lib.claims import registry

    spec = importlib.util.spec_from_file_location("paper_sweep", Path(__file__).parents[1] / "scripts/paper_sweep.py")
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    c4 = registry.page("c04_sharp_onset")
    d = c4.design(**registry.design_params(registry.upcoming_defaults(c4, "paper")))
    starts = [c.wd.windows[0][0] if c.wd.windows else -1 for c in sweep.configs(["C4"], {}, "paper", upcoming=True)]
    fine = [s for s in dict.fromkeys(starts) if s in set(d.cliff.grid) - {12_500, 15_000}]  # not the coarse ones
    assert fine[:12] == list(range(12_700, 14_901, 200))  # a sweep cut off half-way has the 200-step grid
    first = starts.index(12_700)
    assert starts[first:first + 8] == [12_700] * 8  # every seed at an onset before the next onset
    seeds = [c.train.seed for c in sweep.configs(["C1"], {}, "paper")][:40]
    assert seeds == sorted(seeds) and seeds[0] == 4 < seeds[-1]  # a sequential design still goes seed by seed
