"""The relapse page's design: four branches of the C1 window that agree with each other up to the branch point,
and one clear error for a bad parameter before anything is trained."""

import pytest

from critwin_lib import config, experiment, schedules
from critwin_lib.claims import relapse

PARAMS = {"profile": "quick", "n_seeds": 3, "gamma": 1.0, "window_start_frac": 0.375, "window_frac": 0.25}


def test_the_branches_agree_up_to_their_branch_points_and_differ_after():
    d = relapse.c01_relapse_design(**PARAMS)
    lam = {b: schedules.wd_values(w, d.steps) for b, w in d.schedules.items()}
    for b in ("full λ continued", "λ ramped to 0", "all parameters"):
        assert (lam[b][:d.end] == lam["decay off"][:d.end]).all(), b
    assert (lam["decay off"][d.end:] == 0).all() and (lam["full λ continued"][d.end:] == d.full_lambda).all()
    ramp = lam["λ ramped to 0"][d.end:d.end + d.ramp + 1]
    assert ramp[0] == lam["decay off"][d.end - 1] and ramp[-1] == 0 and (ramp[:-1] > 0).all()
    assert d.ramp == (d.end - d.start) // 4
    assert d.full_lambda * d.steps == pytest.approx(lam["decay off"].sum())  # equal budget
    cfgs = {(lab["branch"], lab["seed"]): cfg for lab, cfg in d.specs}
    assert cfgs[("all parameters", 0)].train.wd_params == "all" and cfgs[("decay off", 0)].train.wd_params == "matrices"
    # (a) is keyed apart from C1's own window run, with the same λ(t)
    a, c1 = cfgs[("decay off", 0)], cfgs[(relapse.C1_RUNS, 0)]
    assert experiment.run_key(a) != experiment.run_key(c1)
    assert (schedules.wd_values(a.wd, d.steps) == schedules.wd_values(c1.wd, d.steps)).all()


@pytest.mark.parametrize("bad, field", [({"ramp_frac": 0}, "ramp_frac"), ({"ramp_frac": 1.5}, "ramp_frac"),
                                        ({"window_start_frac": 0.75}, "window_start_frac"),
                                        ({"n_seeds": 65}, "n_seeds")])
def test_a_bad_parameter_is_one_error_naming_it(bad, field):
    with pytest.raises(config.ConfigError, match=f"^{field}"):
        relapse.c01_relapse_design(**{**PARAMS, **bad})
