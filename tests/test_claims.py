"""The scoreboard follows from the stored results, by the same code the notebooks run."""

import csv
import io
import json
import math
import os
import subprocess
import sys

import pandas as pd
import pytest

from critwin_lib import experiment
from critwin_lib.claims import calibration, registry, scoreboard, window_placement
from critwin_lib.claims.core import VERDICTS
from critwin_lib.config import ConfigError

from .conftest import REPO


@pytest.mark.slow
def test_scoreboard_from_smoke_runs(smoke_site):
    rows = scoreboard.scoreboard("smoke", smoke_site / "results")
    assert [r["claim"] for r in rows] == ["C1", "C2", "C3", "C4", "C4b", "C5", "C6", "C7", "C8", "C9", "C10",
                                          "C11", "C12", "C13"]
    for r in rows:
        assert set(r) == set(scoreboard.CLAIMS_CSV_COLUMNS)
        assert r["profile"] == "smoke" and r["verdict"] in VERDICTS


# The glued numbers are compared at a relative tolerance far below what any page prints (four significant digits
# at most): a reader's CPU may sum a simulation's exponentials in another order (numpy picks SIMD kernels by
# instruction set) and differ in the 15th digit; every verdict, count and text is compared exactly.
REL_TOL = 1e-9

# numpy on its baseline instruction set, OpenBLAS on an old core's kernels, one thread, torch's default kernels:
# another CPU than the one that wrote results/numbers.json, whatever this machine is
BASELINE_CPU = {"NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Nehalem",
                "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                "ATEN_CPU_CAPABILITY": "default"}
_COMPUTE = ("import sys; from pathlib import Path; from critwin_lib.claims import scoreboard; "
            "rows, numbers = scoreboard.compute('quick', Path(sys.argv[1])); "
            "Path(sys.argv[2]).write_text(scoreboard.numbers_json(numbers)); "
            "Path(sys.argv[3]).write_text(scoreboard.to_csv(rows))")


def numbers_differences(got: object, want: object, where: str = "") -> list[str]:
    """Where two glued-number trees differ: floats beyond REL_TOL (NaN equals NaN), anything else at all."""
    if isinstance(want, dict) and isinstance(got, dict):
        return [d for k in sorted(set(want) | set(got), key=str)
                for d in (numbers_differences(got.get(k), want.get(k), f"{where}/{k}") if k in got and k in want
                          else [f"{where}/{k}: only in {'shipped' if k in want else 'computed'}"])]
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True))
                for d in numbers_differences(g, w, f"{where}[{i}]")]
    if isinstance(want, float) and isinstance(got, float | int) and not isinstance(got, bool):
        same = (math.isnan(want) and math.isnan(got)) or math.isclose(got, want, rel_tol=REL_TOL, abs_tol=1e-12)
        return [] if same else [f"{where}: {got!r} != {want!r}"]
    return [] if type(got) is type(want) and got == want else [f"{where}: {got!r} != {want!r}"]


def test_numbers_differences_sees_what_a_reader_would():
    shipped = {"a": {"x": 0.1 + 0.2, "v": "reproduced", "n": 12, "nan": math.nan}, "b": [1.5, "t"]}
    assert numbers_differences({"a": {"x": 0.3, "v": "reproduced", "n": 12, "nan": math.nan}, "b": [1.5, "t"]},
                               shipped) == []
    assert numbers_differences({"a": {"x": 0.3001, "v": "inconclusive", "n": 11, "nan": 0.0}, "b": [1.5]},
                               shipped) == ["/a/n: 11 != 12", "/a/nan: 0.0 != nan",
                                            "/a/v: 'inconclusive' != 'reproduced'",
                                            "/a/x: 0.3001 != 0.30000000000000004", "/b: [1.5] != [1.5, 't']"]
    assert numbers_differences({"a": {}}, {"a": {"k": 1}}) == ["/a/k: only in shipped"]


@pytest.mark.slow
def test_shipped_claims_csv_and_glued_numbers_follow_from_the_shipped_results_on_any_cpu(tmp_path):
    """The scoreboard recomputed here and, at the same time in a second process, on a baseline CPU (see
    BASELINE_CPU) gives the shipped claims.csv exactly and the shipped glued numbers at REL_TOL."""
    out_json, out_csv = tmp_path / "numbers.json", tmp_path / "claims.csv"
    other = subprocess.Popen([sys.executable, "-c", _COMPUTE, str(REPO / "results"), str(out_json), str(out_csv)],
                             env={**os.environ, **BASELINE_CPU}, stderr=subprocess.PIPE, text=True)
    shipped = (REPO / "results" / "claims.csv").read_text()
    want = json.loads((REPO / "results" / "numbers.json").read_text())
    rows, numbers = scoreboard.compute("quick", REPO / "results")
    _, err = other.communicate(timeout=1800)
    assert other.returncode == 0, err[-2000:]
    assert scoreboard.to_csv(rows) == shipped and out_csv.read_text() == shipped
    assert numbers_differences(json.loads(scoreboard.numbers_json(numbers)), want) == []
    assert numbers_differences(json.loads(out_json.read_text()), want) == []
    rows = list(csv.DictReader(io.StringIO(shipped)))
    quick = [r for r in rows if r["profile"] == "quick"]
    assert [r["claim"] for r in quick] == [c for p in registry.PAGES for c in p.claims]
    # the seed counts the pages promise; C6/C7 as the paper
    least = {"C5": 6, "C6": 12, "C7": 12, "C8": 8, "C10": 12, "C11": 8, "C12": 12, "C13": 40}
    assert all(int(r["seeds"]) >= least.get(r["claim"], 4) for r in quick), [(r["claim"], r["seeds"]) for r in quick]
    c13 = numbers["c13_instrumentation"]  # C13 contrasts fates with >= 12 window runs of each
    assert min(c13["c13_n_reasoning"], c13["c13_n_memorizing"]) >= c13["c13_min_runs"] == 12
    paper = [r for r in rows if r["profile"] == "paper"]  # the core claims at the paper's length
    assert [r["claim"] for r in paper] == ["C1", "C2", "C3", "C4"] and len(rows) == len(quick) + len(paper)
    assert all(r["verdict"] in (*VERDICTS, scoreboard.NOT_RUN) for r in paper)
    assert [int(r["seeds"]) for r in paper] == [32, 22, 22, 8]  # C1 at look 3, C2/C3 at look 2, C4: 8 per onset


@pytest.mark.slow
def test_a_page_at_another_profile_is_read_from_stored_runs_only(tmp_path, smoke_site):
    """`registry.at_profile` trains nothing: until every run of the profile's design is stored it gives the count,
    then the same result the page computes (on the smoke site's runs); the scoreboard turns the first into NOT_RUN
    rows."""
    results = tmp_path / "results"
    side = registry.at_profile("c13_instrumentation", "smoke", results)
    assert side.result is None and side.stored == 0 and side.needed > 0 and not results.exists()
    p = registry.page("c13_instrumentation")
    rows, numbers = scoreboard.profile_side(p, "smoke", results, {"C13": {"claim": "C13", "statement": "s",
                                                                          "paper": "q"}})
    assert [r["verdict"] for r in rows] == [scoreboard.NOT_RUN] and rows[0]["statement"] == "s"
    assert numbers["stored"] == 0 and numbers["needed"] == side.needed
    results = smoke_site / "results"  # every smoke run of every page
    params = {**registry.profile_defaults(p.notebook, "smoke"), "results_dir": str(results), "train_missing": False}
    trained = p.page(**params)
    side = registry.at_profile("c13_instrumentation", "smoke", results)
    assert side.stored == side.needed and side.result is not None and side.result.rows == trained.rows


def test_a_page_declares_its_parameters_at_the_paper_length():
    c1 = registry.page("c01_critical_window")
    quick, paper = (registry.profile_defaults(c1.notebook, p) for p in ("quick", "paper"))
    assert quick == {**registry.notebook_defaults(c1.notebook), "profile": "quick"}
    assert paper["n_seeds"] == 32 and paper["alt_protocol"] == "" and paper["slider_starts"] == []  # look 3
    assert paper["first_seed"] == 4 and paper["fitted_reasoning"] and paper["quarter_budget"]
    assert registry.profile_defaults(registry.page("c04_sharp_onset").notebook, "paper")["n_seeds"] == 8
    assert registry.scored_profiles(c1, "quick") == ["quick", "paper"]
    assert registry.scored_profiles(registry.page("c13_instrumentation"), "quick") == ["quick"]
    assert registry.scored_profiles(c1, "smoke") == ["smoke"] and registry.scored_profiles(c1, "paper") == ["paper"]


def test_the_claims_protocol_meets_the_calibration_rule_on_the_shipped_results():
    from critwin_lib import protocol
    from critwin_lib.notebooks import REPO as repo

    params = {**registry.notebook_defaults(repo / "notebooks" / "c00_calibration.ipynb"), "profile": "quick",
              "results_dir": str(REPO / "results"), "train_missing": False}
    result = calibration.c00(**params)
    name = protocol.DEFAULT_PROTOCOL
    assert result.verdicts[name].both_fates
    pr = protocol.get_protocol(name)  # a 25 % window carries the calibrated full-run budget
    assert pr.window_lambda == pytest.approx(4 * result.verdicts[name].best_lambda)
    # At 20,000 steps: the protocol the paper-profile claims use was fixed by the page's ladder (OOD rule), whose
    # passing rung its window carries; the fitted regime (2026-12-04) names its choice, which the code records
    # (`protocol.FITTED_CHOICES`) for the claims to move to, and records nothing while no choice passes.
    paper, pn = result.paper, result.paper.numbers
    name = protocol.resolve("", "paper")
    pr = protocol.get_protocol(name)
    t = paper.table[paper.table["protocol"] == name].set_index("lambda")
    assert paper.verdicts[name].both_fates and t.loc[pr.window_lambda / 4, "reasoning"] > t.loc[0.0, "seeds"] / 2
    chosen = protocol.FittedChoice(pn["fitted_choice"], pn["fitted_choice_lambda"], pn["fitted_choice_variant"])
    assert protocol.FITTED_CHOICES.get("paper") == (chosen if pn["fitted_choice"] else None), pn["fitted_text"]


@pytest.mark.slow
def test_a_damaged_run_stops_the_scoreboard_with_one_line(smoke_site, tmp_path, capsys):
    import shutil

    results = tmp_path / "results"
    shutil.copytree(smoke_site / "results", results)
    page = registry.BY_STEM["c01_critical_window"]
    first = registry.planned_runs(page.notebook.stem, scoreboard.page_params(page, "smoke", results))[0]
    victim = results / "runs" / experiment.run_key(first)
    (victim / "meta.json").write_text((victim / "meta.json").read_text().replace("{", "{ ", 1))
    assert scoreboard.main(["--profile", "smoke", "--results", str(results), "--out", "-"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and victim.name in err[0], err


def test_the_calibration_page_plans_its_paper_length_grid_and_names_a_bad_one():
    from critwin_lib import protocol

    base = {"profile": "quick", "n_seeds": 2, "gamma": 1.0, "grid": {"mid-fit-matrices": [0.0]}, "init_check": []}
    grid = {"mid-fit-matrices-20k": [0.0, 4.5]}
    d = calibration.c00_design(**base, paper_grid=grid, paper_seeds=3)
    long = [c for _, c in d.specs if c.train.steps == 20000]
    assert len(d.specs) == 2 + 6 and len(long) == 6 and {c.train.lr for c in long} == {1e-4}
    for bad, field in [({"paper_grid": ["x"]}, "paper_grid"), ({"paper_grid": grid, "paper_seeds": -1}, "paper_seeds")]:
        with pytest.raises(ConfigError, match=f"^{field}:"):
            calibration.c00_design(**base, **bad)
    pr, ref = protocol.get_protocol("quarter-fit-matrices-20k"), protocol.get_protocol(protocol.DEFAULT_PROTOCOL)
    assert pr.lr * pr.window_lambda == pytest.approx(ref.lr * ref.window_lambda)  # uncalibrated: the default's shrink
    text = calibration.describe({"a": calibration.ProtocolCheck(True, False, math.nan, False, 3000.0)}, 6000)
    assert "does **not** give both fates" in text and "no full-run λ was tried" in text and "0.50 of the run" in text


def test_the_paper_profile_runs_the_claims_under_the_protocol_calibrated_at_its_length():
    from critwin_lib import protocol

    assert protocol.resolve("", "quick") == protocol.DEFAULT_PROTOCOL
    assert protocol.resolve("", "paper") == "mid-fit-matrices-20k"
    assert protocol.resolve("mid-fit", "paper") == "mid-fit"  # a named protocol is kept at every profile
    params = {**registry.notebook_defaults(registry.page("c01_critical_window").notebook), "profile": "paper"}
    cfgs = registry.planned_runs("c01_critical_window", params)
    main = [c for c in cfgs if c.train.lr == 1e-4]  # the page's protocol (its sensitivity table adds mid-fit)
    windows = {w[2] for c in main for w in c.wd.windows}
    assert main and windows == {36.0, 9.0} and {c.train.steps for c in main} == {20_000}  # 9: a quarter budget
    quick = registry.planned_runs("c01_critical_window", {**params, "profile": "quick"})
    assert {c.train.lr for c in quick} == {3e-4} and 6.0 in {w[2] for c in quick for w in c.wd.windows}


def test_c1_at_the_paper_length_runs_the_25_percent_design_and_keeps_the_half_run_design_readable():
    """The calibration page's choice under its revised part 2 (lr 2e-4, full-run λ 3, the paper's 25 % window at
    λ 12) is C1's paper design: the window in the middle of the run, full-run weight decay at its budget, the same
    window at the full-run λ (a quarter of the budget), none; seeds from 4 (0-3 are the calibration's), a seed
    reasoning only with its training set fitted; the half-run design it replaced is still declared (`Page.earlier`)
    with its 32 seeds, so the page can say what it read."""
    from critwin_lib import protocol

    fit, half = protocol.FITTED_CHOICES["paper"], protocol.HALF_RUN_CHOICE
    assert (fit.window_lambda, fit.window_frac, fit.middle_start) == (12.0, 0.25, 0.375)
    assert (half.window_lambda, half.window_frac, half.middle_start) == (6.0, 0.5, 0.25)
    c1 = registry.page("c01_critical_window")
    new, old = registry.design_at(c1, "paper"), registry.design_at(c1, "paper", earlier=True)
    assert new.protocol == old.protocol == fit.protocol and new.fitted_reasoning and old.fitted_reasoning
    sched = {s[0]["condition"]: s[1].wd for s in new.specs}
    assert set(sched) == {"none", "window", window_placement.QUARTER, "full, equal budget"}
    assert sched["window"].windows == ((7_500, 12_500, 12.0),) and sched["full, equal budget"].base == 3.0
    assert sched[window_placement.QUARTER].windows == ((7_500, 12_500, 3.0),)
    assert {s[1].train.lr for s in new.specs} == {2e-4} and {s[1].train.steps for s in new.specs} == {20_000}
    assert new.seeds == list(range(4, 36)) and new.looks == [12, 22, 32]  # look 3 of fresh seeds
    assert {s[0]["condition"]: s[1].wd for s in old.specs}["window"].windows == ((5_000, 15_000, 6.0),)
    assert len(old.seeds) == 32 and old.seeds[0] == 0
    # full-run λ 3 and none are the half-run design's runs (seeds 4-31 shared), the windows are new
    shared = new.keys & old.keys
    assert len(shared) == 2 * 28 and all(lab["condition"] in ("none", "full, equal budget")
                                         for lab, cfg in new.specs if experiment.run_key(cfg) in shared)
    assert "(25 % of the run) at λ = 12, full-run λ 3" in new.summary and "(4–35)" in new.summary


def test_c1s_quarter_budget_reading_and_the_fitted_rule_reach_their_verdicts(tmp_path):
    """C1's second reading (the same window at the full-run λ) gets its own verdict from the same rule and looks,
    and a design with `fitted_reasoning` counts a seed that ends unfitted as not reasoning, whatever its OOD."""
    base = dict(profile="smoke", n_seeds=2, gamma=1.0, window_start_frac=0.375, window_frac=0.25, window_lambda=4.0,
                slider_starts=[], alt_protocol="", looks=[2], first_seed=4, fitted_reasoning=True,
                quarter_budget=True, full_equal_lambda=False)
    d = window_placement.c01_design(**base)
    assert d.seeds == [4, 5] and {lab["condition"] for lab, _ in d.specs} == {
        "none", "window", window_placement.QUARTER, "full, equal budget"}
    r = window_placement.c01(results_dir=str(tmp_path), workers=0, **base)
    n = r.numbers
    assert n["quarter_verdict"] in VERDICTS and "quarter_matches_full_text" in n and n["fitted_reasoning"]
    assert "(a quarter of the budget): " + n["quarter_verdict"] in r.rows[0]["ours"]
    assert math.isnan(n["ood_full_lambda"])
    for bad, field in [({"fitted_reasoning": 1}, "fitted_reasoning"), ({"quarter_budget": "yes"}, "quarter_budget"),
                       ({"first_seed": -1}, "first_seed")]:
        with pytest.raises(ConfigError, match=f"^{field}:"):
            window_placement.c01_design(**{**base, **bad})
    runs = pd.DataFrame({"seed": [4, 5], "final_train": [0.5, 1.0], "final_ood": [0.9, 0.9],
                         "final_trained_shift": [0.0, 0.0]})
    from critwin_lib.claims import fates

    strict = window_placement.with_rule_fates(fates.with_fates(runs), d)
    assert list(strict["fate"]) == ["not fitted", "reasoning"]  # the rule: reasoning needs the training set fitted
    old = window_placement.c01_design(**{**base, "fitted_reasoning": False})
    assert list(window_placement.with_rule_fates(runs, old)["fate"]) == ["reasoning", "reasoning"]  # OOD alone


def test_the_earlier_design_at_the_other_length_is_read_or_counted(tmp_path):
    """`lengths.side_by_side` says what the page's earlier design at the other length read (from the shipped runs)
    and, where its runs are missing, how many are stored, with the same verdict keys for a text to quote."""
    from critwin_lib.claims import lengths
    from critwin_lib.claims.core import ClaimResult

    here = ClaimResult([{"claim": "C1", "statement": "s", "paper": "q", "ours": "o", "profile": "quick", "seeds": 4,
                         "verdict": "inconclusive"}], {}, "")
    empty = lengths.side_by_side("c01_critical_window", here, "quick", tmp_path)
    assert empty.glue["paper_earlier_verdict"] == empty.glue["paper_earlier_fitted_verdict"] == scoreboard.NOT_RUN
    assert "The earlier design at the paper's length (profile paper, the 20,000-step protocol" in empty.text
    assert "0 of 128 runs stored" in empty.text and "(50 % of the run) at λ = 6" in empty.text
    old = registry.at_profile("c01_critical_window", "paper", REPO / "results", earlier=True).result
    shipped = lengths.side_by_side("c01_critical_window", here, "quick", REPO / "results")
    assert shipped.glue["paper_earlier_verdict"] == old.numbers["verdict"]
    assert shipped.glue["paper_earlier_fitted_verdict"] == old.numbers["fitted_verdict"]
    assert f"where the same rule read: C1 **{old.numbers['verdict']}** ({old.rows[0]['ours']})" in shipped.text
    assert old.numbers["seq_status"] in shipped.text  # the half-run design, read by the rule in force
    assert "That design took no runs after the page moved, so it stands as read here." in shipped.text
    assert shipped.table["design"].notna().all() and shipped.table["design"].str.startswith("profile ").all()
    no_earlier = lengths.side_by_side("c04b_window_vs_fitting", ClaimResult([], {}, ""), "quick", tmp_path)
    assert not any("earlier" in k for k in no_earlier.glue) and "earlier" not in no_earlier.text


def test_c1s_fitted_paragraph_waits_for_both_lengths_and_names_each_once():
    """The C1 page's "fitted or not?" paragraph (the verdict with reasoning read from OOD accuracy alone) is written
    from the side-by-side numbers only when both lengths are decided, each named the way the rest of the book names
    it."""
    from critwin_lib.claims import window_placement
    from critwin_lib.sizes import length_name

    one = {"quick_train_window": 1.0, "quick_train_full": 1.0, "quick_train_none": 1.0, "quick_close_window": 0.5,
           "quick_whatever_fit_verdict": "not reproduced"}
    assert window_placement.c01_fitted_text(one, ["quick", "paper"]) == ""
    both = one | {k.replace("quick", "paper"): v for k, v in one.items()} | {"paper_train_window": 0.9}
    text = window_placement.c01_fitted_text(both, ["quick", "paper"])
    assert text.startswith("**Fitted or not?** A seed reasons only if its training set is fitted at the end.")
    assert "At the quick length: mean final training accuracy window 1.00" in text
    assert "at the paper's length: mean final training accuracy window 0.90" in text
    assert text.endswith("the verdict is **not reproduced** at the quick length and **not reproduced** at the "
                         "paper's length.")
    assert length_name("paper", 20000) == "the paper's length (20,000 steps)"
    assert length_name("tiny") == "the tiny length"


def test_the_intros_onset_sentences_say_when_a_length_is_not_read_yet(tmp_path):
    """Where the other length's onset sweep is not all stored, the texts the intro quotes for it say so in whole
    sentences (its length's name, 'not read yet' with the count) rather than quoting numbers that do not exist;
    where it is stored they are that length's own."""
    from critwin_lib.claims import lengths, window_onset
    from critwin_lib.claims.core import ClaimResult

    texts = ["range_text", "glance_text", "cliff_answer", "cliff_short", "length_name"]
    empty = lengths.side_by_side("c04_sharp_onset", ClaimResult([], {}, ""), "quick", tmp_path)
    got = empty.glue_with_texts(texts, window_onset.unread_texts(empty.numbers, empty.other))
    needed = empty.numbers["needed"]
    assert got["paper_length_name"] == "the paper's length (20,000 steps)"
    assert got["paper_glance_text"] == f"its onset sweep is not read yet (0 of {needed} runs stored)"
    assert got["paper_cliff_answer"] == "not tested" and got["paper_range_text"].startswith("not read yet (0 of")
    assert got["paper_cliff_short"] == (f"at the paper's length (20,000 steps), where its onset sweep is not read yet "
                                        f"(0 of {needed} runs stored)")
    shipped = lengths.side_by_side("c04_sharp_onset", ClaimResult([], {}, ""), "quick", REPO / "results")
    read = shipped.glue_with_texts(texts, window_onset.unread_texts(shipped.numbers, shipped.other))
    if shipped.other_result is None:  # the 25 % design's sweep is still training: its count, in whole sentences
        k, need = shipped.numbers["stored"], shipped.numbers["needed"]
        assert 0 < k < need
        assert read["paper_glance_text"] == f"its onset sweep is not read yet ({k} of {need} runs stored)"
    else:  # once every run is stored, the shipped paper-length sweep is read, in its own words
        n = shipped.other_result.numbers
        assert read["paper_glance_text"] == n["glance_text"] == f"{n['range_text']}, and {n['fall_text']}"
        assert read["paper_cliff_short"] == n["cliff_short"] and n["cliff_short"].startswith("at the paper's length")


def test_a_scoreboard_at_another_profile_says_which_pages_are_not_run_yet(tmp_path):
    """`python -m critwin_lib.claims --profile paper` after only some pages ran at paper: no error, and every page
    without all of its runs has NOT_RUN rows naming the command that trains them."""
    rows, numbers = scoreboard.compute("paper", tmp_path / "results")
    assert [r["claim"] for r in rows] == [c for p in registry.PAGES for c in p.claims]
    assert {r["verdict"] for r in rows} == {scoreboard.NOT_RUN} and {r["profile"] for r in rows} == {"paper"}
    assert 'make reproduce PROFILE=paper CLAIMS="C2 C3"' in rows[1]["ours"]
    assert numbers["c04_sharp_onset"]["c04_verdict"] == scoreboard.NOT_RUN
    assert not (tmp_path / "results").exists()


def test_a_page_at_the_paper_length_compares_its_verdict_with_the_shipped_quick_one():
    """`lengths.side_by_side` at paper reads the quick side from the shipped runs (nothing trained): the paragraph
    gives both verdicts, and the glue has both lengths' numbers under their profile names."""
    from critwin_lib.claims import lengths
    from critwin_lib.claims.core import ClaimResult

    here = ClaimResult([{"claim": "C4", "statement": "s", "paper": "q", "ours": "at paper", "profile": "paper",
                         "seeds": 8, "verdict": "reproduced"}], {"verdict": "reproduced"}, "")
    side = lengths.side_by_side("c04_sharp_onset", here, "paper", REPO / "results")
    quick = next(r for r in csv.DictReader(io.StringIO((REPO / "results" / "claims.csv").read_text()))
                 if r["claim"] == "C4" and r["profile"] == "quick")
    assert side.other == "quick" and f"**reproduced** (8 seeds: at paper) and **{quick['verdict']}**" in side.text
    assert side.glue["paper_verdict"] == "reproduced" and side.glue["quick_verdict"] == quick["verdict"]
    assert side.glue["quick_stored"] == side.glue["quick_needed"] and side.glue["paper_steps"] == 20_000
    assert list(side.table["profile"]) == ["paper", "quick"]
    # the curves: the quick side's onsets by their share of the run, on a 0-1 axis; the test's own side has none
    assert set(side.curves["profile"]) == {"quick"} and side.curves["frac"].between(0, 1).all()
    assert side.curves["frac"].max() == 1 and {"none", "onset 0 T", "onset 0.25 T"} <= set(side.curves["condition"])


def test_a_text_the_intro_quotes_from_the_other_length_says_when_its_runs_are_missing(tmp_path):
    from critwin_lib.claims import lengths
    from critwin_lib.claims.core import ClaimResult

    here = ClaimResult([{"claim": c, "statement": "s", "paper": "q", "ours": "o", "profile": "quick", "seeds": 4,
                         "verdict": "inconclusive"} for c in ("C2", "C3")], {"c3_rest_text": "early: …"}, "")
    empty = lengths.side_by_side("c02_c03_budget_placement", here, "quick", tmp_path)
    g = empty.glue_with_texts(["c3_rest_text"])
    assert g["quick_c3_rest_text"] == "early: …"
    assert g["paper_c3_rest_text"].startswith("not read yet (0 of ") and "the paper's length" in g["paper_c3_rest_text"]
    c1 = ClaimResult([{"claim": "C1", "statement": "s", "paper": "q", "ours": "o", "profile": "quick", "seeds": 4,
                       "verdict": "inconclusive"}], {}, "")
    shipped = lengths.side_by_side("c01_critical_window", c1, "quick", REPO / "results")
    got = shipped.glue_with_texts(["matches_full_text"])["paper_matches_full_text"]
    if shipped.numbers["stored"] < shipped.numbers["needed"]:  # the 25 % design still training: the placeholder
        assert got == (f"not read yet ({shipped.numbers['stored']} of {shipped.numbers['needed']} runs of the "
                       "paper's length stored)")
    else:  # all shipped: read, not the placeholder
        assert got == shipped.other_result.numbers["matches_full_text"] and got.startswith("window matches full")


def test_the_c1_page_draws_the_c1_window_beside_the_other_length_not_the_sliders_other_starts():
    result = registry.at_profile("c01_critical_window", "quick", REPO / "results").result
    c = result.length_curves()
    assert set(c["condition"]) == {"none", "window", "full, equal budget", "full, equal λ"}
    assert not c.duplicated(["condition", "step"]).any() and (result.curves["condition"] == "window").sum() > len(
        c[c["condition"] == "window"])


def test_c2_to_c4_at_the_paper_length_run_the_25_percent_design_and_share_c1s_runs():
    """C2/C3 and C4 at the paper length run the 25 % design like C1 (early [0, 5,000), middle = the C1 window, late
    [15,000, 20,000) at λ 12; C4's onsets every 2,500 steps from 0 to 15,000), keep their half-run designs as the
    earlier ones, and share runs: C4's onsets at the C1 window's and C2/C3's early and late starts are those pages'
    runs (same keys), and so is no weight decay. C3 is looked at by C2's sequential design."""
    fit = registry.PAPER_FIT
    assert fit.placements() == {"early": 0.0, "middle": 0.375, "late": 0.75}
    assert fit.onset_fracs() == [0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75]
    c23p, c4p = registry.page("c02_c03_budget_placement"), registry.page("c04_sharp_onset")
    c23, c4 = registry.design_at(c23p, "paper"), registry.design_at(c4p, "paper")
    for new, old in [(c23, registry.design_at(c23p, "paper", earlier=True)),
                     (c4, registry.design_at(c4p, "paper", earlier=True))]:
        assert new.protocol == old.protocol == fit.protocol and new.fitted_reasoning and old.fitted_reasoning
        assert {s[1].train.lr for s in new.specs} == {2e-4} and {s[1].train.steps for s in new.specs} == {20_000}
    assert c23.seeds == list(range(4, 26)) and c4.seeds == list(range(4, 12)) and c23.sequential_c3  # look 2
    assert {lab["condition"] for lab, _ in c23.specs} == {"none", "early", "middle", "late"}  # no span
    lams = {w[2] for s in c4.specs for w in s[1].wd.windows}
    assert lams == {12.0} and {w[1] - w[0] for s in c4.specs for w in s[1].wd.windows} == {5_000}
    assert "25 % of the run at λ = 12" in c4.summary
    assert sorted({lab["onset"] for lab, _ in c4.specs}) == [-1, 0, 2_500, 5_000, 7_500, 10_000, 12_500, 15_000]
    c1 = registry.design_at(registry.page("c01_critical_window"), "paper")
    key = experiment.run_key
    keys = {(lab["onset"], lab["seed"]): key(cfg) for lab, cfg in c4.specs}
    # the page's own protocol (the pages also read a row under the paper's decay set, with the same conditions)
    placed = {(lab["condition"], lab["seed"]): key(cfg) for lab, cfg in c23.specs if lab["protocol"] == fit.protocol}
    c1_window = {lab["seed"]: key(cfg) for lab, cfg in c1.specs
                 if lab["condition"] == "window" and lab["protocol"] == fit.protocol}
    for seed in range(4, 12):
        assert keys[(7_500, seed)] == c1_window[seed] == placed[("middle", seed)]
        assert keys[(0, seed)] == placed[("early", seed)] and keys[(15_000, seed)] == placed[("late", seed)]
        assert keys[(-1, seed)] == placed[("none", seed)]


def test_each_length_s_scoreboard_row_names_the_windows_its_design_ran():
    """The statement column is the paper's claim ("one 25% window"); each length's C1–C4 rows begin with the windows
    and λ its design ran, read here from that design's runs (at 20,000 steps once its runs are stored)."""
    with open(REPO / "results" / "claims.csv", newline="", encoding="utf-8") as f:
        ours = {(r["claim"], r["profile"]): r["ours"] for r in csv.DictReader(f)}

    def main_windows(stem: str, profile: str, key: str) -> dict:
        d = registry.design_at(registry.page(stem), profile)
        return {lab[key]: cfg.wd for lab, cfg in d.specs if lab["protocol"] == d.protocol}

    def span(wd) -> str:
        (start, end, _), = wd.windows
        return f"[{start:,}, {end:,})"

    for profile in ("quick", "paper"):
        if any("runs of this design stored" in ours[(c, profile)] for c in ("C1", "C2", "C3", "C4")):
            continue  # not read yet at that length (its rows say how many runs are stored)
        c1 = main_windows("c01_critical_window", profile, "condition")
        (_, _, lam), = c1["window"].windows
        assert ours[("C1", profile)].startswith(
            f"window {span(c1['window'])} at λ {lam:g} against full-run λ {c1['full, equal budget'].base:g}; ")
        c23 = main_windows("c02_c03_budget_placement", profile, "condition")
        assert {c23[c].windows[0][2] for c in ("early", "middle", "late")} == {lam}
        assert ours[("C2", profile)].startswith(f"middle {span(c23['middle'])} vs early {span(c23['early'])} at λ "
                                                f"{lam:g}; ")
        assert ours[("C3", profile)].startswith(f"early {span(c23['early'])}, late {span(c23['late'])} at λ {lam:g}; ")
        c4 = main_windows("c04_sharp_onset", profile, "onset")
        lengths = {w[1] - w[0] for wd in c4.values() for w in wd.windows}
        assert len(lengths) == 1 and {w[2] for wd in c4.values() for w in wd.windows} == {lam}
        assert ours[("C4", profile)].startswith(f"windows of {lengths.pop():,} steps at λ {lam:g}; ")
    assert ours[("C1", "quick")].startswith("window [2,400, 4,000) at λ 6 against full-run λ 1.5; ")
