"""The two-timescale rate model (spec §8.2): its rate scalings and the placement results the spec's scan found."""

import numpy as np
import pytest

from critwin_lib import theory
from critwin_lib.config import ConfigError

T, W, LAM = 20_000, 5_000, 1e-3
GAMMAS = [0.5, 0.7, 0.9, 1.1, 1.5]


def test_initial_rates_scale_as_gamma_to_the_0_and_2():
    rates = theory.initial_rates(theory.RateModel(), GAMMAS)
    assert theory.loglog_slope(GAMMAS, rates["memorization"]) == pytest.approx(0.0, abs=0.01)
    assert theory.loglog_slope(GAMMAS, rates["reasoning"]) == pytest.approx(2.0, abs=0.01)


def test_placements_at_equal_budget_reproduce_the_spec_scan():
    assert theory.placements()["middle"] == (7_500, 12_500, LAM)
    assert theory.placements()["full"] == (0, T, pytest.approx(LAM / 4))
    won = theory.placement_counts(theory.RateModel(), GAMMAS, 12)
    assert list(won["none"]) == [0, 0, 0, 2, 4]  # spec §8.2 table, same seeds drawn per γ
    assert list(won["middle"]) == [8, 12, 12, 12, 12] and (won["full"] == 12).all()
    assert (won["75% span"] == 12).all()
    assert (won["early"] == 0).all() and (won["late"] == 0).all()


def test_the_onset_edge_moves_earlier_as_gamma_grows():
    onsets = list(range(0, 15_001, 500))
    share = theory.onset_sweep(theory.RateModel(), T, W, LAM, onsets, GAMMAS, 12)
    edges = theory.first_onset(onsets, share)
    assert all(a > b for a, b in zip(edges, edges[1:], strict=False)), edges
    assert share[0].max() == 0 and share[-1].max() == 0  # at onset 0 and 15,000 no seed reasons


def test_weight_decay_alone_shrinks_everything_and_bad_input_is_refused():
    _, rows = theory.window_lambdas(10, {"all": (0, 10, 0.5)})
    tr = theory.simulate(theory.RateModel(mu_m=1e-12, beta=1e-12), rows, [1.0], 1, every=1)
    assert tr.r[0, 0, 0, -1] == pytest.approx(tr.r[0, 0, 0, 0] * 0.25 ** 10, rel=1e-6)  # (1 - λ)² per step
    with pytest.raises(ConfigError, match="theory.gammas"):
        theory.simulate(theory.RateModel(), np.zeros((1, 5)), [0.0], 1)
    with pytest.raises(ConfigError, match="theory.mu_m"):
        theory.RateModel(mu_m=-1)
