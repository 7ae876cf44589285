"""The paper's decay set is checked by the calibration page's rule before any claim runs under it, with a ladder of
λ stated in advance; the check reads stored runs only."""

import pandas as pd
import pytest

from critwin_lib import config, experiment, protocol
from critwin_lib.claims import decay_check
from critwin_lib.sizes import get_profile


def test_a_rung_is_full_run_weight_decay_under_the_papers_set_beside_the_shared_run_without_it():
    runs = decay_check.specs("quick", 2.0)
    full = [cfg for lab, cfg in runs if lab["lambda"] > 0]
    none = [cfg for lab, cfg in runs if lab["lambda"] == 0]
    assert len(full) == len(none) == 8 and {c.train.seed for c in full} == set(range(8))
    assert {c.wd.base for c in full} == {3.0} and {c.train.wd_params for c in full} == {"matrices-no-embeddings"}
    ours = protocol.anchor_run(get_profile("quick"), 0, config.WDSchedule.none(), protocol="mid-fit-matrices")
    assert experiment.run_key(none[0]) == experiment.run_key(ours)  # no weight decay: the claims' own run
    with pytest.raises(config.ConfigError, match="multiplier"):
        decay_check.specs("quick", 3.0)


def _runs(lam, k_reason, k_none_mem, n=8):
    full = [{"lambda": lam, "fate": "reasoning" if i < k_reason else "memorizing", "final_train": 1.0,
             "final_ood": 0.9 if i < k_reason else 0.1} for i in range(n)]
    none = [{"lambda": 0.0, "fate": "memorizing", "final_train": 1.0, "final_ood": 0.1 if i < k_none_mem else 0.6}
            for i in range(n)]
    return pd.DataFrame(full + none)


def test_the_rule_needs_most_seeds_reasoning_under_weight_decay_and_half_memorizing_without():
    assert decay_check._passes(_runs(1.5, 5, 8), 1.5) == (5, 8, True, 8)
    assert decay_check._passes(_runs(1.5, 4, 8), 1.5)[2] is False  # half is not most
    assert decay_check._passes(_runs(1.5, 8, 3), 1.5)[2] is False  # without weight decay too few memorize


def test_the_ladder_climbs_only_past_a_failed_rung_and_says_when_a_rung_is_not_stored(tmp_path, monkeypatch):
    check = decay_check.read("quick", str(tmp_path))
    assert check.multiplier is None and (check.stored, check.needed) == (0, 16)
    assert check.text().startswith("Not trained yet")
    outcomes = {1.5: 3, 3.0: 6}  # λ × 1 fails (3 of 8), λ × 2 passes (6 of 8)
    monkeypatch.setattr(decay_check.Store, "has", lambda self, key: True)
    monkeypatch.setattr(decay_check, "fetch", lambda rung, *a, **k: (None, _runs(
        rung[0][0]["lambda"], outcomes.get(rung[0][0]["lambda"], 8), 8)))
    check = decay_check.read("quick", str(tmp_path))
    assert check.multiplier == 2.0 and check.table["passes"].tolist() == [False, True]
    assert "passes at λ × 2" in check.text() and "full-run λ 1.5: 3 of 8 reason" in check.text()
    outcomes.update({3.0: 2, 6.0: 1})
    check = decay_check.read("quick", str(tmp_path))
    assert check.multiplier is None and len(check.table) == 3 and "No rung of the ladder passes" in check.text()


def test_the_decay_sets_rows_run_the_windows_and_full_run_decay_and_share_no_weight_decay():
    from critwin_lib.claims import budget_placement, window_placement

    base = {"profile": "quick", "gamma": 1.0, "window_frac": 0.25, "window_lambda": 0.0}
    c1 = window_placement.c01_design(**base, n_seeds=16, window_start_frac=0.375, slider_starts=[], looks=[16, 32],
                                     decay_protocol="mid-fit-paper-decay", decay_n_seeds=4)
    decayed = [(m["condition"], m["seed"]) for m, _ in c1.specs if m["protocol"] == "mid-fit-paper-decay"]
    assert sorted({c for c, _ in decayed}) == ["full, equal budget", "window"] and len(decayed) == 8
    c23 = budget_placement.c02_c03_design(**base, n_seeds=16, placements={"early": 0.0, "middle": 0.375,
                                                                          "late": 0.75}, span=[], looks=[16, 32],
                                          first_seed=2, decay_protocol="mid-fit-paper-decay", decay_n_seeds=4)
    decayed = [(m["condition"], m["seed"]) for m, _ in c23.specs if m["protocol"] == "mid-fit-paper-decay"]
    assert sorted({c for c, _ in decayed}) == ["early", "late", "middle"] and {s for _, s in decayed} == {2, 3, 4, 5}
    window = {experiment.run_key(cfg) for m, cfg in c1.specs if m["condition"] == "window"}
    middle = {experiment.run_key(cfg) for m, cfg in c23.specs if m["condition"] == "middle"}
    assert window & middle  # the C1 window is C2/C3's middle placement: one run serves both pages


@pytest.mark.parametrize("kw, match", [({"decay_protocol": "mid-fit"}, "decay_protocol"),
                                       ({"decay_protocol": "mid-fit-matrices"}, "decay_protocol"),
                                       ({"decay_protocol": "nope"}, "decay_protocol"),
                                       ({"decay_protocol": "mid-fit-paper-decay", "decay_n_seeds": -1},
                                        "decay_n_seeds")])
def test_a_bad_decay_row_stops_before_any_run(tmp_path, kw, match):
    from critwin_lib.claims import window_placement

    with pytest.raises(config.ConfigError, match=f"^{match}"):
        window_placement.c01(profile="smoke", n_seeds=2, gamma=1.0, window_start_frac=0.375, window_frac=0.25,
                             window_lambda=0.0, slider_starts=[], results_dir=str(tmp_path / "results"), **kw)
    assert not (tmp_path / "results").exists()


def test_no_weight_decay_counts_under_the_decay_set_for_its_seeds_and_its_verdict_is_glued():
    from critwin_lib.claims import placement_design

    runs = pd.DataFrame({"protocol": ["a", "a", "a", "b"], "condition": ["none", "none", "window", "window"],
                         "seed": [0, 1, 0, 0]})
    out = placement_design.with_shared_none(runs, "a", "b")
    assert len(out) == 5 and out[(out["protocol"] == "b") & (out["condition"] == "none")]["seed"].tolist() == [0]
    assert placement_design.with_shared_none(runs, "a", "") is runs
    sens = pd.DataFrame({"protocol": ["a", "b"], "metric": ["final", "final"], "onset": ["as the claim"] * 2,
                         "verdict": ["reproduced", "inconclusive"]})
    assert placement_design.decay_numbers(sens, "b", "reproduced", "c2_") == {"c2_decay_verdict": "inconclusive",
                                                                             "c2_decay_differs": True}
    assert placement_design.decay_numbers(sens, "", "reproduced", "") == {}


def test_the_decay_sets_counts_borrow_the_pages_no_weight_decay_and_need_a_fitted_training_set():
    from critwin_lib.claims import placement_design

    def run(protocol, condition, seed, ood, train=1.0):
        return {"protocol": protocol, "condition": condition, "seed": seed, "final_ood": ood, "final_train": train,
                "final_trained_shift": 0.9 if ood < 0.5 else 0.0, "final_other_shift": 0.0,
                "final_other_share": 0.0}

    runs = pd.DataFrame([run("a", "none", 0, 0.1), run("a", "none", 1, 0.9), run("a", "none", 2, 0.9),
                         run("b", "window", 0, 0.95), run("b", "window", 1, 0.97, train=0.6),
                         run("b", "full, equal budget", 0, 0.2), run("b", "full, equal budget", 1, 0.8)])
    words = {"window": "window", "full, equal budget": "full-run", "none": "none"}
    got = placement_design.decay_counts(runs, "a", "b", words)["decay_counts"]
    assert got == "window 1, full-run 1, none 1 of 2 seeds"  # seed 2's none is not the decay set's; seed 1 unfitted
    loose = placement_design.decay_counts(runs, "a", "b", words, require_fit=False)["decay_counts"]
    assert loose == "window 2, full-run 1, none 1 of 2 seeds"
    assert placement_design.decay_counts(runs, "a", "", words) == {}


@pytest.mark.slow
def test_the_c1_page_reads_the_decay_sets_row_at_smoke(tmp_path):
    from critwin_lib.claims import window_placement

    r = window_placement.c01(profile="smoke", n_seeds=2, gamma=1.0, window_start_frac=0.375, window_frac=0.25,
                             window_lambda=0.0, slider_starts=[], results_dir=str(tmp_path / "results"), workers=0,
                             decay_protocol="mid-fit-paper-decay", decay_n_seeds=2)
    rows = r.sensitivity[r.sensitivity["protocol"] == "mid-fit-paper-decay"]
    assert len(rows) >= 1 and (rows["seeds"] == 2).all()  # none borrowed: the comparisons have both seeds
    assert r.numbers["decay_verdict"] in ("reproduced", "partly reproduced", "not reproduced", "inconclusive")


def test_the_decay_sets_sentence_names_each_claims_verdict_against_every_matrix_decayed():
    from critwin_lib.claims import placement_design

    n = {"c2_decay_verdict": "not reproduced", "c2_decay_differs": True, "c3_decay_verdict": "reproduced",
         "c3_decay_differs": False, "decay_counts": "early 9, middle 8, late 0, none 0 of 12 seeds"}
    assert placement_design.decay_sentence(n, ["C2", "C3"]) == (
        "Under the paper's decay set (embeddings not decayed) the rules say: C2 **not reproduced**, "
        "not the verdict with every matrix decayed; C3 **reproduced**, as with every matrix decayed (seeds that "
        "reason: early 9, middle 8, late 0, none 0 of 12 seeds).")
    c1 = {"decay_verdict": "inconclusive", "decay_differs": True, "decay_counts": "window 3 of 12 seeds"}
    assert placement_design.decay_sentence(c1, ["C1"]).startswith("Under the paper's decay set (embeddings not "
                                                                   "decayed) the rule says: C1 **inconclusive**, not")
    assert placement_design.decay_sentence({}, ["C1"]) == ""  # its row not read at that length
    assert placement_design.decay_differs(n, ["C2", "C3"]) == [("C2", "not reproduced")]
    assert placement_design.decay_differs({**n, "decay_differs": True}, ["C4"]) == []  # no decay-set row: not asked
    assert placement_design.decay_sentence(n, ["C4"]) == ""
