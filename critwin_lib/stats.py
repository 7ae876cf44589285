"""Statistics over seeds, the core the verdicts use (methods: spec/statistics.md).

Means with percentile-bootstrap intervals for curves, BCa intervals for ≥ 8 seeds, exact (Clopper–Pearson)
intervals on fate counts, Fisher's exact test and the exact McNemar test on fates, permutation tests on
per-seed numbers (paired by sign flips, unpaired by shuffled labels) and a permutation test of a Spearman
trend. Every random draw is seeded, so a page says the same thing each time it is built; fits and means that
enter a glued number are summed with `math.fsum` (exactly rounded), so two CPUs agree on them to the last digit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

N_BOOT = 2000
LEVEL = 0.95


def exact_mean(values: Sequence[float]) -> float:
    """The mean, its sum exactly rounded (`math.fsum`): the same on every CPU, unlike a SIMD sum whose order
    follows the instruction set (NaN for no values)."""
    v = [float(x) for x in values]
    return math.fsum(v) / len(v) if v else math.nan


def ols_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of y on x, from exactly rounded sums of centred values (no BLAS, no SIMD): the same
    number on any CPU and thread count. NaN for fewer than two points or no spread in x."""
    xs, ys = [float(a) for a in x], [float(b) for b in y]
    if len(xs) != len(ys):
        raise ValueError(f"ols_slope: {len(xs)} x values for {len(ys)} y values")
    if len(xs) < 2:
        return math.nan
    mx, my = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    sxx = math.fsum((a - mx) * (a - mx) for a in xs)
    return math.fsum((a - mx) * (b - my) for a, b in zip(xs, ys, strict=True)) / sxx if sxx > 0 else math.nan


def bootstrap_ci(values: Sequence[float], n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0
                 ) -> tuple[float, float]:
    """Percentile-bootstrap interval of the mean over seeds (NaN for no values; the value itself for one)."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return float("nan"), float("nan")
    if len(v) == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(n_boot, len(v)))].mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def median_ci(values: Sequence[float], n_boot: int = N_BOOT, level: float = LEVEL, seed: int = 0
              ) -> tuple[float, float, float]:
    """(median, lo, hi): the median over seeds and its percentile-bootstrap interval. Values may be inf (a seed
    that never got there counts as later than anything); NaN values are dropped."""
    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) == 0:
        return float("nan"), float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    meds = np.sort(v[rng.integers(0, len(v), size=(n_boot, len(v)))], axis=1)
    meds = meds[:, (len(v) - 1) // 2]  # the lower median: defined with inf values (no inf − inf)
    alpha = (1 - level) / 2
    return (float(np.sort(v)[(len(v) - 1) // 2]), float(np.quantile(meds, alpha, method="lower")),
            float(np.quantile(meds, 1 - alpha, method="higher")))


def mean_ci(df: pd.DataFrame, by: list[str], value: str) -> pd.DataFrame:
    """Per group of `by`: n, mean, and the bootstrap interval (lo, hi) of `value` over rows (seeds)."""
    rows = []
    for keys, g in df.groupby(by, sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        lo, hi = bootstrap_ci(g[value].to_numpy())
        rows.append({**dict(zip(by, keys, strict=True)), "n": int(g[value].notna().sum()),
                     "mean": float(g[value].mean()), "lo": lo, "hi": hi})
    return pd.DataFrame(rows)


def binomial_ci(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact (Clopper–Pearson) interval of a share k / n: what k seeds of n say about the basin."""
    from scipy.stats import beta

    if n <= 0:
        return float("nan"), float("nan")
    alpha = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


# ------------------------------------------------------------------------ tests for verdicts (spec/statistics.md)
ALTERNATIVES = ("two-sided", "greater", "less")


def _alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative: one of {ALTERNATIVES}, got {alternative!r}")
    return alternative


def fisher_exact(k1: int, n1: int, k2: int, n2: int, alternative: str = "two-sided") -> float:
    """p-value of Fisher's exact test that fate share k1/n1 differs from k2/n2 (different seeds);
    "greater": the first share is larger."""
    from scipy.stats import fisher_exact as fisher

    return float(fisher([[k1, n1 - k1], [k2, n2 - k2]], alternative=_alternative(alternative))[1])


def mcnemar_exact(b: int, c: int, alternative: str = "two-sided") -> float:
    """Exact McNemar test on paired fates (same seeds): b seeds have the fate under the first condition only,
    c under the second only; a binomial test of b against b + c at one half. "greater": the first more often."""
    from scipy.stats import binomtest

    if b + c == 0:
        return 1.0
    return float(binomtest(b, b + c, 0.5, alternative=_alternative(alternative)).pvalue)


def sign_flip_test(differences: Sequence[float], alternative: str = "two-sided", n_resamples: int = 10_000,
                   seed: int = 0) -> float:
    """Paired permutation test of the mean of per-seed differences (the sign of each seed's difference
    flipped at random); exact (all 2^n sign patterns) up to 16 seeds."""
    d = np.asarray(differences, dtype=float)
    d = d[~np.isnan(d)]
    _alternative(alternative)
    if len(d) == 0:
        return float("nan")
    if len(d) <= 16:
        signs = 1 - 2 * ((np.arange(2 ** len(d))[:, None] >> np.arange(len(d))) & 1)
    else:
        signs = np.random.default_rng(seed).choice([-1, 1], size=(n_resamples, len(d)))
    null = (signs * d).mean(axis=1)
    return _p_from_null(null, d.mean(), alternative)


def permutation_test(x: Sequence[float], y: Sequence[float], alternative: str = "two-sided",
                     n_resamples: int = 10_000, seed: int = 0) -> float:
    """Unpaired permutation test of mean(x) − mean(y) over seeds (labels shuffled); "greater": x larger."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    a, b = a[~np.isnan(a)], b[~np.isnan(b)]
    _alternative(alternative)
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    pooled = np.concatenate([a, b])
    rng = np.random.default_rng(seed)
    perms = np.array([rng.permutation(pooled) for _ in range(n_resamples)])
    null = perms[:, :len(a)].mean(axis=1) - perms[:, len(a):].mean(axis=1)
    return _p_from_null(null, a.mean() - b.mean(), alternative)


def stratified_permutation_test(values: Sequence[float], in_x: Sequence[bool], strata: Sequence[Any],
                                alternative: str = "two-sided", n_resamples: int = 10_000, seed: int = 0) -> float:
    """Permutation test of mean(values[in_x]) − mean(values[~in_x]) with the labels shuffled within each stratum
    only: a difference that comes from the strata (runs of one stratum more often in x) is not counted as one."""
    v, lab, st = np.asarray(values, dtype=float), np.asarray(in_x, dtype=bool), np.asarray(strata, dtype=object)
    keep = ~np.isnan(v)
    v, lab, st = v[keep], lab[keep], st[keep]
    _alternative(alternative)
    if lab.all() or not lab.any():
        return float("nan")
    rng = np.random.default_rng(seed)
    perm = np.empty((n_resamples, len(v)), dtype=bool)  # one row per resample: the shuffled labels
    for g in dict.fromkeys(st.tolist()):
        idx = np.flatnonzero(st == g)
        perm[:, idx] = lab[idx][rng.random((n_resamples, len(idx))).argsort(axis=1)]
    null = (perm @ v) / perm.sum(axis=1) - ((~perm) @ v) / (~perm).sum(axis=1)
    return _p_from_null(null, v[lab].mean() - v[~lab].mean(), alternative)


def _p_from_null(null: np.ndarray, observed: float, alternative: str) -> float:
    eps = 1e-12 * max(1.0, abs(observed))  # ties with the observed value count as at least as extreme
    if alternative == "greater":
        hits = null >= observed - eps
    elif alternative == "less":
        hits = null <= observed + eps
    else:
        hits = np.abs(null) >= abs(observed) - eps
    return float(hits.mean())


def spearman_trend_test(x: Sequence[float], y: Sequence[float], alternative: str = "two-sided",
                        n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """(Spearman's ρ of seed-level values y against an ordered factor x, its permutation p-value)."""
    from scipy.stats import spearmanr

    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    rho = float(spearmanr(a, b).statistic)
    if math.isnan(rho):
        return rho, float("nan")
    rng = np.random.default_rng(seed)
    null = np.array([spearmanr(a, rng.permutation(b)).statistic for _ in range(n_resamples)])
    return rho, _p_from_null(null, rho, _alternative(alternative))


def bca_ci(values: Sequence[float], level: float = LEVEL, n_boot: int = 9_999, seed: int = 0) -> tuple[float, float]:
    """BCa bootstrap interval of the mean over seeds (spec: only with ≥ 8 seeds; NaN below that, where a page
    shows the seeds themselves instead of a band)."""
    from scipy.stats import bootstrap

    v = np.asarray(values, dtype=float)
    v = v[~np.isnan(v)]
    if len(v) < 8:
        return float("nan"), float("nan")
    if np.all(v == v[0]):
        return float(v[0]), float(v[0])
    ci = bootstrap((v,), np.mean, confidence_level=level, n_resamples=n_boot, method="BCa",
                   random_state=np.random.default_rng(seed)).confidence_interval
    return float(ci.low), float(ci.high)


def paired_share_diff_ci(a: Sequence[bool], b: Sequence[bool], level: float = LEVEL) -> tuple[float, float, float]:
    """(difference of shares p_a − p_b, and Tango's score interval for it) for two fates observed on the same
    seeds: b_n seeds have the fate under a only, c_n under b only. Unlike an interval conditional on the
    discordant seeds, it stays honest when every seed agrees (Tango 1998, Stat Med 17:891)."""
    x, y = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    n = len(x)
    if n == 0 or len(y) != n:
        return float("nan"), float("nan"), float("nan")
    return tango_ci(int((x & ~y).sum()), int((~x & y).sum()), n, level)


@functools.lru_cache(maxsize=65536)
def tango_ci(b: int, c: int, n: int, level: float = LEVEL) -> tuple[float, float, float]:
    """Tango's score interval from the counts: b seeds with the fate under the first condition only, c under the
    second only, n seeds in all. Returns (difference of shares, lo, hi)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    z = float(norm.ppf(1 - (1 - level) / 2))

    def score(delta: float) -> float:
        A, B = 2 * n, -b - c + (2 * n - b + c) * delta
        C = -c * delta * (1 - delta)
        q = (math.sqrt(max(B * B - 4 * A * C, 0.0)) - B) / (2 * A)
        var = n * (2 * q + delta * (1 - delta))
        num = b - c - n * delta
        if num == 0:
            return 0.0
        return num / math.sqrt(var) if var > 0 else math.copysign(math.inf, num)

    d = (b - c) / n
    eps = 1e-9
    lo = -1.0 if score(-1 + eps) <= z else brentq(lambda t: score(t) - z, -1 + eps, d)
    hi = 1.0 if score(1 - eps) >= -z else brentq(lambda t: score(t) + z, d, 1 - eps)
    return d, float(lo), float(hi)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (NaN stays NaN): a part of a claim whose one rejecting
    part decides is then held to the family-wise level, not each part to α alone."""
    p = np.asarray(p_values, float)
    out = np.full(p.shape, np.nan)
    ok = np.flatnonzero(~np.isnan(p))
    order = ok[np.argsort(p[ok])]
    m, running = len(order), 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out.tolist()
