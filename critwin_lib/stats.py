"""Statistics over seeds: means with percentile-bootstrap intervals (seeded, so pages are stable)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

N_BOOT = 2000
LEVEL = 0.95


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
