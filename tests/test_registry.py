"""The registry: every page is declared once, planned without training, and bad parameters stop the plan."""

import pandas as pd
import pytest

from critwin_lib import protocol
from critwin_lib.claims import calibration, registry
from critwin_lib.config import ConfigError


def test_every_page_plans_its_runs_without_training(tmp_path):
    for p in registry.PAGES:
        params = {**registry.notebook_defaults(p.notebook), "profile": "smoke", "results_dir": str(tmp_path / "r")}
        runs = registry.planned_runs(p.stem, params)
        assert runs, p.stem
    assert not (tmp_path / "r").exists()


def test_claim_ids_and_pages():
    ids = [c for p in registry.PAGES for c in p.claims]
    assert ids == ["C1", "C2", "C3", "C4", "C4b", "C5", "C6", "C7", "C8", "C9", "C10", "C11", "C12", "C13"]
    assert [p.stem for p in registry.by_claims(["C4", "C1"])] == ["c01_critical_window", "c04_sharp_onset"]
    with pytest.raises(ConfigError, match="^claims: unknown claim ids"):
        registry.by_claims(["C99"])
    with pytest.raises(ConfigError, match="^notebook:"):
        registry.page("c99_nothing")


def test_a_bad_parameter_stops_planning_with_its_name():
    p = registry.page("c01_critical_window")
    params = {**registry.notebook_defaults(p.notebook), "profile": "smoke", "window_start_frac": 0.9}
    with pytest.raises(ConfigError, match="^window_start_frac:"):
        registry.planned_runs(p.stem, params)


def test_calibration_rule_needs_both_fates():
    import pandas as pd

    t = pd.DataFrame({"lambda": [0.0, 1.5, 3.0], "seeds": [4, 4, 4], "memorizes": [3, 0, 0], "reasoning": [0, 3, 1],
                      "reasoning_fitted": [0, 1, 1], "final_ood": [0.1, 0.7, 0.3],
                      "t_mem": [3200.0, 3400.0, 3600.0]}).set_index("lambda")
    v = calibration.protocol_check(t)
    assert v.both_fates and v.best_lambda == 1.5 and v.t_mem_none == 3200.0
    assert not v.fitted_reasons and v.fitted_lambda == 1.5  # 1 of 4 reason with the training set fitted
    t.loc[3.0, "reasoning_fitted"] = 3
    assert calibration.protocol_check(t).fitted_reasons and calibration.protocol_check(t).fitted_lambda == 3.0
    t.loc[3.0, "reasoning_fitted"] = 1
    t.loc[1.5, "reasoning"] = 2  # half the seeds is not most of them
    assert not calibration.protocol_check(t).both_fates
    t.loc[0.0, "memorizes"] = 1
    assert not calibration.protocol_check(t).none_memorizes


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_a_design_carries_the_protocol_it_resolved(profile):
    """A page reads its protocol back from its design (one `protocol.resolve` per page): for every page with a
    `protocol_name`, the design's protocol is the profile's calibrated one, and a named one is kept."""
    pages = [p for p in registry.PAGES if "protocol_name" in registry.notebook_defaults(p.notebook)]
    assert len(pages) >= 8
    for p in pages:
        params = {**registry.notebook_defaults(p.notebook), "profile": profile}
        d = p.design(**registry.design_params(params))
        assert d.protocol == protocol.resolve("", profile), p.stem
        assert any(c.train.lr == protocol.get_protocol(d.protocol).lr for _, c in d.specs), p.stem
    named = registry.page("c13_instrumentation")
    params = {**registry.notebook_defaults(named.notebook), "profile": "quick", "protocol_name": "mid-fit-matrices-20k"}
    assert named.design(**registry.design_params(params)).protocol == "mid-fit-matrices-20k"


@pytest.mark.parametrize("grid, message", [
    ({"mid-fit-matrices": [-1.0]}, "paper_grid: must be a finite λ ≥ 0 in 'mid-fit-matrices''s list, got -1.0"),
    ({"mid-fit-matrices": "1.5"}, "paper_grid: 'mid-fit-matrices' must have a non-empty list of λ ≥ 0"),
    ({"mid-fit-matrices": []}, "paper_grid: 'mid-fit-matrices' must have a non-empty list of λ ≥ 0"),
    ({"no-such": [1.0]}, "paper_grid"),
])
def test_the_calibration_grids_are_checked_like_its_window_grid_before_any_run(grid, message):
    """A bad protocol name or λ in the paper grid is one clear error naming the field, before anything trains."""
    with pytest.raises(ConfigError) as err:
        calibration.c00_design(profile="smoke", n_seeds=2, gamma=1.0, grid={"mid-fit-matrices": [0.0]},
                               init_check=[], paper_grid=grid)
    assert str(err.value).startswith(message), str(err.value)


def test_the_fitted_regime_reads_how_low_a_window_pushes_training_accuracy(tmp_path):
    """Tiny runs at smoke (the page's paper grid is the smoke profile there): part 2's table and the verdict."""
    specs = calibration.window_specs("smoke", 2, 1.0, {"mid-fit-matrices": [1.0]})
    assert len(specs) == 2 * len(calibration.WINDOW_VARIANTS)
    with pytest.raises(ConfigError, match="^paper_windows"):
        calibration.window_specs("smoke", 2, 1.0, {"mid-fit-matrices": [-1.0]})
    from critwin_lib.claims.core import fetch

    history, runs = fetch(specs, str(tmp_path), True, 0)
    each = calibration.window_runs(history, runs)
    assert len(each) == len(specs) and each["lowest_train"].between(0, 1).all()
    table = calibration.window_table(each)
    assert list(table["variant"]) == list(calibration.WINDOW_VARIANTS) and (table["seeds"] == 2).all()
    assert table["lowest_train"].between(0, 1).all() and (table["floor_held"] <= 2).all()
    full = pd.DataFrame({"protocol": ["mid-fit-matrices"], "lambda": [1.0], "seeds": [2], "reasoning_fitted": [2]})
    # part 2 as revised: the window runs must end reasoning with the training set refitted; the floor is not required
    got = calibration.fitted_regime(full, table.assign(reasoning_fitted=2, floor_held=0))
    assert got["mid_fit_matrices_25pc_fitted_regime"] and got["mid_fit_matrices_50pc_fitted_regime_lambda"] == 1.0
    refit = table.assign(reasoning_fitted=2)
    assert not calibration.fitted_regime(full.assign(reasoning_fitted=1), refit)["mid_fit_matrices_25pc_fitted_regime"]
    assert not calibration.fitted_regime(full, table.assign(reasoning_fitted=1, floor_held=2))[
        "mid_fit_matrices_25pc_fitted_regime"]


def test_the_fitted_choice_follows_the_revised_order():
    """Part 1 and part 2 (revised: the window runs end reasoning with the training set refitted) read from tables;
    when several choices pass, the paper's 25 % window comes first, then the protocol in use at that length, then its
    smallest λ."""
    def full_table(fitted: dict) -> pd.DataFrame:
        rows = [{"protocol": n, "lambda": lam, "seeds": 4, "reasoning_fitted": k, "reasoning": 4 if lam == 9 else k,
                 "final_ood": 0.5 + lam / 100} for (n, lam), k in fitted.items()]
        return pd.DataFrame(rows + [{"protocol": n, "lambda": 0.0, "seeds": 4, "reasoning_fitted": 0, "reasoning": 0,
                                     "final_ood": 0.2} for n in {n for n, _ in fitted}])

    def windows(held: dict) -> pd.DataFrame:
        return pd.DataFrame([{"protocol": n, "lambda": lam, "variant": v, "seeds": 4, "floor_held": 0,
                              "reasoning_fitted": k, "lowest_train": 0.3} for (n, lam, v), k in held.items()])

    lr1, lr2 = "mid-fit-matrices-20k", "quarter-fit-matrices-20k"
    assert protocol.resolve("", "paper") == lr1
    full = full_table({(lr1, 3.0): 1, (lr1, 6.0): 3, (lr1, 9.0): 4, (lr2, 3.0): 4})
    none = calibration.fitted_choice(full_table({(lr1, 9.0): 1, (lr2, 4.5): 2}), None, "paper")
    assert none["fitted_choice"] == "" and none["fitted_text"].startswith("No protocol of the grid passes part 1")
    assert "lr 1e-4 (λ 9) has 1 of 4" in none["fitted_text"]
    waiting = calibration.fitted_choice(full, None, "paper")
    assert waiting["fitted_choice"] == "" and "lr 1e-4 at λ 6, 9; lr 2e-4 at λ 3" in waiting["fitted_text"]
    assert "Part 2's window runs for those λ are not run yet." in waiting["fitted_text"]
    every = {(n, lam, v): 4 for n, lam in [(lr1, 6.0), (lr1, 9.0), (lr2, 3.0)] for v in calibration.WINDOW_VARIANTS}
    got = calibration.fitted_choice(full, windows(every), "paper")
    assert (got["fitted_choice"], got["fitted_choice_lambda"], got["fitted_choice_variant"]) == (lr1, 6.0, "25 %")
    assert got["fitted_choice_window_lambda"] == 24.0 and "passes both parts" in got["fitted_text"]
    got = calibration.fitted_choice(full, windows({**every, (lr1, 6.0, "25 %"): 2}), "paper")
    assert (got["fitted_choice"], got["fitted_choice_lambda"], got["fitted_choice_variant"]) == (lr1, 9.0, "25 %")
    got = calibration.fitted_choice(full, windows({**every, (lr1, 6.0, "25 %"): 2, (lr1, 9.0, "25 %"): 0}), "paper")
    assert (got["fitted_choice"], got["fitted_choice_variant"]) == (lr2, "25 %")  # the 25 % window before lr
    assert "The paper-length claims (C1–C4) run under it." in got["fitted_text"]  # the code's choice
    got = calibration.fitted_choice(full, windows({**every, **{(n, lam, "25 %"): 0 for n, lam in
                                                              [(lr1, 6.0), (lr1, 9.0), (lr2, 3.0)]}}), "paper")
    assert (got["fitted_choice"], got["fitted_choice_lambda"], got["fitted_choice_variant"]) == (lr1, 6.0, "50 %")
    got = calibration.fitted_choice(full, windows({k: 2 for k in every}), "paper")
    assert got["fitted_choice"] == "" and "No window passes part 2" in got["fitted_text"]
    assert ("keep the first 20,000-step protocol as the first rule fixed it (full-run λ 9, window λ 36)"
            in got["fitted_text"])
    assert "would name λ" not in got["fitted_text"]  # λ 9: 4 of 4 reasoning with the highest OOD, the ladder's λ
    full = full_table({(lr1, 6.0): 4, (lr1, 9.0): 1})
    full.loc[full["lambda"] == 6.0, "final_ood"] = 0.94  # the finer grid's λ 6 beats the ladder's λ 9 by OOD too
    got = calibration.fitted_choice(full, windows({(lr1, 6.0, v): 0 for v in calibration.WINDOW_VARIANTS}), "paper")
    assert got["fitted_choice"] == "" and "would name λ 6 instead (4 of 4 seeds reasoning, final OOD 0.94, " \
        "against λ 9's 4 and 0.59)" in got["fitted_text"]
