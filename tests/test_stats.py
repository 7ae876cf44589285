"""The statistics core, each method against an answer known in closed form or by enumeration."""

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from critwin_lib import stats


def test_exact_binomial_interval_matches_closed_forms_and_scipy():
    lo, hi = stats.binomial_ci(12, 12)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 12))  # k = n: lo = (α/2)^(1/n)
    lo, hi = stats.binomial_ci(0, 8)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 8))
    ci = binomtest(5, 16).proportion_ci(method="exact")
    assert stats.binomial_ci(5, 16) == pytest.approx((ci.low, ci.high))


def test_fisher_exact_by_the_hypergeometric_sum():
    # 4/4 vs 0/4: the one most extreme table of C(8, 4) = 70
    assert stats.fisher_exact(4, 4, 0, 4, "greater") == pytest.approx(1 / 70)
    assert stats.fisher_exact(4, 4, 0, 4) == pytest.approx(2 / 70)
    assert stats.fisher_exact(2, 4, 2, 4) == pytest.approx(1.0)


def test_exact_mcnemar_is_a_sign_test_on_discordant_seeds():
    assert stats.mcnemar_exact(6, 0, "greater") == pytest.approx(0.5 ** 6)
    assert stats.mcnemar_exact(6, 0) == pytest.approx(2 * 0.5 ** 6)
    assert stats.mcnemar_exact(0, 0) == 1.0


def test_sign_flip_test_enumerates_every_sign_pattern():
    # 4 positive differences: only the all-plus pattern reaches the observed mean → 1/16
    assert stats.sign_flip_test([0.1, 0.2, 0.3, 0.4], "greater") == pytest.approx(1 / 16)
    assert stats.sign_flip_test([0.1, 0.2, 0.3, 0.4]) == pytest.approx(2 / 16)
    assert stats.sign_flip_test([1.0, -1.0, 1.0, -1.0]) == pytest.approx(1.0)
    assert math.isnan(stats.sign_flip_test([]))


def test_permutation_test_separates_disjoint_groups():
    p = stats.permutation_test([1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 0], "greater", n_resamples=4000)
    assert p == pytest.approx(1 / 924, abs=0.003)  # one of C(12, 6) = 924 splits is as extreme
    assert stats.permutation_test([0, 1, 0, 1], [1, 0, 1, 0], n_resamples=2000) == pytest.approx(1.0)


def test_spearman_trend_test_finds_a_monotone_trend():
    x = np.repeat([0.5, 0.7, 1.0, 1.1, 1.5], 4)
    rho, p = stats.spearman_trend_test(x, -x + 0.01 * np.arange(20), "less", n_resamples=2000)
    assert rho < -0.9 and p < 0.001
    rho, p = stats.spearman_trend_test(x, np.tile([1.0, 2.0, 3.0, 4.0], 5), n_resamples=2000)
    assert abs(rho) < 1e-12 and p > 0.9


def test_bca_interval_needs_eight_seeds_and_covers_the_mean():
    assert all(math.isnan(v) for v in stats.bca_ci([0.1, 0.9, 0.5]))
    v = np.random.default_rng(1).normal(0.5, 0.1, 16)
    lo, hi = stats.bca_ci(v)
    assert lo < v.mean() < hi and hi - lo < 0.2
    assert stats.bca_ci([1.0] * 8) == (1.0, 1.0)


def test_tango_interval_has_its_closed_form_when_every_seed_agrees():
    # b = c = 0: |T(Δ)| = sqrt(n|Δ| / (1 − |Δ|)), so the bound is z² / (n + z²)
    z = 1.6448536269514722
    d, lo, hi = stats.tango_ci(0, 0, 16, 0.90)
    assert d == 0 and hi == pytest.approx(z * z / (16 + z * z), rel=1e-6) and lo == pytest.approx(-hi, rel=1e-6)
    z = 1.959963984540054  # b = n: T(Δ) = sqrt(n(1 − Δ) / (1 + Δ)), so the lower bound is (n − z²) / (n + z²)
    assert stats.tango_ci(16, 0, 16, 0.95)[1:] == pytest.approx(((16 - z * z) / (16 + z * z), 1.0), rel=1e-6)


def test_tango_interval_covers_at_its_level():
    rng = np.random.default_rng(0)
    hits = 0
    for _ in range(2000):
        a, b = rng.random(20) < 0.6, rng.random(20) < 0.4
        d, lo, hi = stats.paired_share_diff_ci(a, b, 0.95)
        hits += lo <= 0.2 <= hi
    assert 0.93 <= hits / 2000 <= 0.98
