"""The two-timescale rate model (claim C10, spec §8.2): why a window of weight decay can decide the fate.

A memorization margin z_m is one directly trained parameter, so it grows at a rate Θ(1) whatever the
init scale γ; a reasoning margin r = a·b is a product of two factors that start at scale γ, so it
grows at a rate Θ(γ²) and then amplifies itself. Both share one cross-entropy signal
e = σ(−(z_m + r)): once memorization has driven e to zero, reasoning stops growing. Weight decay λ(t)
shrinks all three. A run "reasons" when r ends above s·z_m (the unseen pair gets the rule's vote
against a pair-lookup competitor). Euler steps of size 1, vectorized over schedules, γ and seeds, so
a whole placement grid takes about a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from critwin_lib import stats
from critwin_lib.config import ConfigError


@dataclass(frozen=True)
class RateModel:
    """Constants of the scalar model; the defaults are the spec's scan (T = 20,000, in-window λ 1e-3)."""

    mu_m: float = 2e-3  # memorization rate
    beta: float = 3e-3  # coupling of the two reasoning factors
    c0: float = 0.02  # init scale of a and b at γ = 1
    seed_spread: float = 0.5  # a(0), b(0) = γ·c0·ξ with ξ ~ LogNormal(0, seed_spread²) per seed
    s: float = 1.0  # success: r(T) > s·z_m(T)

    def __post_init__(self) -> None:
        for name in ("mu_m", "beta", "c0", "s"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
                raise ConfigError(f"theory.{name}: must be a positive number, got {v!r}")
        if not isinstance(self.seed_spread, int | float) or self.seed_spread < 0:
            raise ConfigError(f"theory.seed_spread: must be >= 0, got {self.seed_spread!r}")


@dataclass
class Trajectories:
    """z_m, r over the run (every `every` steps), shapes (schedules, γ, seeds, points)."""

    steps: np.ndarray
    z_m: np.ndarray
    r: np.ndarray
    success: np.ndarray  # (schedules, γ, seeds) booleans at the end of the run


def initial_factors(model: RateModel, gammas: np.ndarray, n_seeds: int, seed: int = 0
                    ) -> tuple[np.ndarray, np.ndarray]:
    """a(0), b(0) of shape (γ, seeds): the same draws ξ for every γ, so γ is the only thing that moves."""
    rng = np.random.default_rng(seed)
    xi = rng.lognormal(0.0, model.seed_spread, size=(2, n_seeds))
    g = np.asarray(gammas, dtype=float)[:, None]
    return g * model.c0 * xi[0], g * model.c0 * xi[1]


def simulate(model: RateModel, lambdas: np.ndarray, gammas: list[float] | np.ndarray, n_seeds: int,
             seed: int = 0, every: int = 100) -> Trajectories:
    """Run every schedule (rows of `lambdas`, λ per step) at every γ for `n_seeds` seeds."""
    lam = np.atleast_2d(np.asarray(lambdas, dtype=float))
    if lam.ndim != 2 or lam.shape[1] < 1 or (lam < 0).any() or not np.isfinite(lam).all():
        raise ConfigError("theory.lambdas: must be a (schedules, steps) array of finite λ >= 0")
    gammas = np.asarray(gammas, dtype=float)
    if gammas.ndim != 1 or (gammas <= 0).any():
        raise ConfigError(f"theory.gammas: must be a list of positive γ, got {gammas!r}")
    if not isinstance(n_seeds, int) or n_seeds < 1:
        raise ConfigError(f"theory.n_seeds: must be a positive integer, got {n_seeds!r}")
    n_sched, T = lam.shape
    a0, b0 = initial_factors(model, gammas, n_seeds, seed)
    shape = (n_sched, len(gammas), n_seeds)
    a, b = np.broadcast_to(a0, shape).copy(), np.broadcast_to(b0, shape).copy()
    z = np.zeros(shape)
    keep = sorted(set(range(0, T + 1, every)) | {T})
    keep_set = set(keep)
    zs, rs = [], []
    for t in range(T + 1):
        if t in keep_set:
            zs.append(z.copy())
            rs.append(a * b)
        if t == T:
            break
        e = 1.0 / (1.0 + np.exp(z + a * b))  # σ(−(z_m + r))
        shrink = lam[:, t][:, None, None]
        z, a, b = (z + model.mu_m * e - shrink * z, a + model.beta * b * e - shrink * a,
                   b + model.beta * a * e - shrink * b)
    z_m, r = np.stack(zs, axis=-1), np.stack(rs, axis=-1)
    return Trajectories(np.asarray(keep), z_m, r, r[..., -1] > model.s * z_m[..., -1])


def initial_rates(model: RateModel, gammas: list[float] | np.ndarray, n_seeds: int = 12, steps: int = 10,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """Mean growth per step of z_m and of r over the first `steps` steps without weight decay, per γ."""
    tr = simulate(model, np.zeros((1, steps)), gammas, n_seeds, seed, every=steps)
    return {"memorization": (tr.z_m[0, :, :, -1] - tr.z_m[0, :, :, 0]).mean(axis=1) / steps,
            "reasoning": (tr.r[0, :, :, -1] - tr.r[0, :, :, 0]).mean(axis=1) / steps}


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x (`stats.ols_slope`: the same digits on every CPU)."""
    return stats.ols_slope([math.log(v) for v in np.asarray(x, float)], [math.log(v) for v in np.asarray(y, float)])


def window_lambdas(steps: int, windows: dict[str, tuple[int, int, float]]) -> tuple[list[str], np.ndarray]:
    """Schedules as rows of λ per step: {name: (start, end, λ)}; (0, 0, 0) is no weight decay."""
    names, rows = list(windows), np.zeros((len(windows), steps))
    for i, (start, end, value) in enumerate(windows.values()):
        if not 0 <= start <= end <= steps:
            raise ConfigError(f"theory.windows[{names[i]!r}]: needs 0 <= start <= end <= {steps}")
        rows[i, start:end] = value
    return names, rows


def onset_sweep(model: RateModel, steps: int, length: int, lam: float, onsets: list[int],
                gammas: list[float], n_seeds: int, seed: int = 0) -> np.ndarray:
    """Share of seeds that reason, shape (onsets, γ), for one window of `length` steps at λ per onset."""
    _, rows = window_lambdas(steps, {str(o): (o, o + length, lam) for o in onsets})
    return simulate(model, rows, gammas, n_seeds, seed, every=steps).success.mean(axis=-1)


def first_onset(onsets: list[int], share: np.ndarray, level: float = 0.5) -> list[float]:
    """Per γ (columns of `share`): the first onset at which at least `level` of the seeds reason."""
    out = []
    for col in np.asarray(share).T:
        hit = np.flatnonzero(col >= level)
        out.append(float(onsets[hit[0]]) if len(hit) else math.nan)
    return out


# ----------------------------------------------------------------- the spec's scan, and the transformer
SPEC_T, SPEC_W, SPEC_LAMBDA = 20_000, 5_000, 1e-3  # the spec's scan: run, window length, in-window λ


def placements(T: int = SPEC_T, W: int = SPEC_W, lam: float = SPEC_LAMBDA) -> dict[str, tuple[int, int, float]]:
    """The spec's equal-budget placements: none, full (λ/4), early, middle and late 25 % windows, and a
    75 % span (λ/3)."""
    return {"none": (0, 0, 0.0), "full": (0, T, lam * W / T), "early": (0, W, lam),
            "middle": ((T - W) // 2, (T + W) // 2, lam), "late": (T - W, T, lam),
            "75% span": (W // 2, T - W // 2, lam * W / (T - W))}


def placement_counts(model: RateModel, gammas: list[float], n_seeds: int, T: int = SPEC_T, W: int = SPEC_W,
                     lam: float = SPEC_LAMBDA, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeds that reason (of `n_seeds`) per placement and γ."""
    names, rows = window_lambdas(T, placements(T, W, lam))
    won = simulate(model, rows, gammas, n_seeds, seed, every=T).success.sum(axis=-1)
    return dict(zip(names, won, strict=True))


def window_shares(model: RateModel, gammas: list[float], fracs: list[float], n_seeds: int,
                  window_frac: float = 0.25) -> np.ndarray:
    """Share of seeds that reason, shape (fracs, γ), for a window of `window_frac` of the spec's run
    (T, λ) starting at each fraction of it: the model's cell for a window placed at the same fraction of
    a transformer run."""
    W = round(window_frac * SPEC_T)
    return onset_sweep(model, SPEC_T, W, SPEC_LAMBDA, [round(f * SPEC_T) for f in fracs], gammas, n_seeds)


def rate_exponent(gammas: list[float], rates: list[np.ndarray], n_boot: int = 2000, seed: int = 0
                  ) -> dict[str, float]:
    """The γ-exponent k of a rate ∝ γ^k: the log–log slope of the mean rate over seeds against γ, with a
    95 % bootstrap interval (seeds resampled within each γ). Only γ whose mean rate is positive enter
    (a power law says nothing about a rate that does not grow); `n_gammas` says how many did."""
    g = np.asarray(gammas, dtype=float)
    means = np.array([stats.exact_mean(r) for r in rates])
    keep = np.flatnonzero(means > 0)
    out = {"exponent": math.nan, "lo": math.nan, "hi": math.nan, "n_gammas": int(len(keep))}
    if len(keep) < 2:
        return out
    out["exponent"] = loglog_slope(g[keep], means[keep])
    rng = np.random.default_rng(seed)
    slopes = []
    for _ in range(n_boot):
        m = np.array([stats.exact_mean(rng.choice(rates[i], size=len(rates[i]))) for i in keep])
        if (m > 0).all():
            slopes.append(loglog_slope(g[keep], m))
    if slopes:
        out["lo"], out["hi"] = (float(q) for q in np.quantile(slopes, [0.025, 0.975]))
    return out


def margin_rates(history: pd.DataFrame, start: int) -> dict[str, float]:
    """A transformer run's early rates, per step from `start` (after warm-up) to its end, by least squares:
    memorization = growth of the training margin over the OOD margin (the part only trained pairs get),
    reasoning = growth of the OOD margin (the unseen pair can only gain through the rule), and the raw
    training margin (spec §5's m̂)."""
    h = history[history["step"] >= start]
    x = h["step"].to_numpy(float)
    train, ood = h["margin/train"].to_numpy(float), h["margin/test_ood"].to_numpy(float)

    def slope(y: np.ndarray) -> float:
        return stats.ols_slope(x, y)

    return {"memorization": slope(train - ood), "reasoning": slope(ood), "train_margin": slope(train)}
