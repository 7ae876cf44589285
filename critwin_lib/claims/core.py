"""What every claim page shares: its result type, fetching its runs, a run's fate, per-condition tables and
the parameter checks the anchor claims have in common.

A claim is two functions in its family module: `<id>_design(**params)` checks the notebook's parameters
and lists the runs the page needs (labels and configs: what the planner reads, nothing is trained), and
`<id>(results_dir=..., **params)` fetches those runs (training what is missing) and returns the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from critwin_lib import checks, config, experiment, metrics, protocol, stats, store
from critwin_lib.sizes import Size

VERDICTS = ("reproduced", "partly reproduced", "not reproduced", "inconclusive")  # "inconclusive": a premise failed
RUNTIME_PARAMS = ("results_dir", "train_missing", "workers")  # a page's parameters that do not change its runs

Spec = tuple[dict[str, Any], config.RunConfig]  # one run: its labels (condition, seed, ...) and its config

SUCCESS_OOD = 0.5  # spec §5: a seed "reaches the reasoning solution" when its final OOD accuracy > 0.5
MEMORIZED_OOD = 0.25  # ... and "memorizes" when it fits the training set and stays below this on OOD
CHANCE_BAND = 0.10  # a mean within this of the no-weight-decay mean is "at chance"
PAPER_RESOLUTION = 100  # steps, at the paper's 20,000-step runs (C4)


@dataclass
class Design:
    """A page's checked parameters turned into runs: `specs` is everything its analysis loads (a rule
    history may also read runs stored before, never train them: `history`), `summary` one line saying what
    they are, `seeds` the seeds of each cell,
    `protocol` the protocol the design resolved (`protocol.resolve`), for the page to read back."""

    specs: list[Spec]
    summary: str
    seeds: list[int]
    protocol: str = field(default="", kw_only=True)

    @property
    def keys(self) -> set[str]:
        """The run keys of its specs (a run shared by two conditions counts once)."""
        return {store.run_key(cfg) for cfg in configs(self.specs)}

    @property
    def run_steps(self) -> int:
        """The length of its runs (the first run's: a page's anchor runs share one length)."""
        return int(self.specs[0][1].train.steps)


@dataclass
class ClaimResult:
    """What a page's runs show: its scoreboard rows and the numbers glued into the book; each page's result
    type adds the frames it draws as named fields."""

    rows: list[dict[str, Any]]
    numbers: dict[str, Any]
    summary: str  # the design line: profile, seeds, runs

    def length_curves(self) -> pd.DataFrame | None:
        """The mean OOD accuracy over training per condition (columns condition, step, mean, lo, hi, n) that the
        page draws beside the same curves at its other length (`lengths`); None for a page without them."""
        return None


def score_row(claim: str, statement: str, paper: str, ours: str, profile: str, seeds: int, verdict: str
              ) -> dict[str, Any]:
    """One scoreboard row (a line of results/claims.csv)."""
    return {"claim": claim, "statement": statement, "paper": paper, "ours": ours, "profile": profile,
            "seeds": seeds, "verdict": verdict}


def window_text(start: int, end: int, lam: float | None = None) -> str:
    """A window [start, end) as the pages name the design they read: '[5,000, 15,000) at λ 6' ('[5,000, 15,000)'
    without a λ)."""
    return f"[{start:,}, {end:,})" + ("" if lam is None else f" at λ {lam:g}")


def configs(specs: list[Spec]) -> list[config.RunConfig]:
    return [cfg for _, cfg in specs]


def fetch(specs: list[Spec], results_dir: str, train_missing: bool, workers: int, fates: bool = True
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Make sure every run exists (training what is missing); return (histories, one row per run with its
    summary and, with `fates`, its fate)."""
    labels, runs = [lab for lab, _ in specs], configs(specs)
    sw = experiment.sweep(runs, results_dir, workers=workers, train_missing=train_missing)
    diverged = [r for r in sw.results if r is not None and r.meta.get("diverged_at") is not None]
    if diverged:
        raise DivergedRuns(f"{len(diverged)} of {len(sw.results)} runs diverged (the loss stopped being finite, "
                           f"e.g. run {diverged[0].key} at step {diverged[0].meta['diverged_at']}): no verdict is "
                           "read from them; a smaller γ or λ trains")
    per_run = experiment.summaries(sw.results, labels)
    if fates:
        per_run["fate"] = [fate(r) for _, r in per_run.iterrows()]
    return experiment.frame(sw.results, labels), per_run


class DivergedRuns(config.ConfigError):
    """A page's runs include some whose loss stopped being finite: the page says so instead of a verdict."""


MOST = 0.5  # "most OOD answers": more than half of them
FATES = ("reasoning", "memorizing", "other rule", "not fitted")


def fate(row: pd.Series | dict, ood: str = "final_ood", require_fit: bool = True) -> str:
    """One run's outcome, read from its final evaluation (setup page): *reasoning* when its OOD accuracy on
    (4, 3) (column `ood`) is above 0.5 and its training set is fitted (training accuracy ≥ 0.99: the paper's
    phenomenon is "fits and generalizes" against "fits and memorizes"); otherwise *not fitted* when training
    accuracy ended below 0.99; otherwise *memorizing* when most OOD answers are a trained pair's shift, and *other
    rule* when they are not (the run answers with some other shift; `final_other_shift` records the most common
    one). `require_fit=False` is the rule before 2026-12-06, kept as a sensitivity row: reasoning read from OOD
    accuracy alone, fitted or not."""
    fitted = bool(metrics.fitted(row["final_train"]))
    if row[ood] > SUCCESS_OOD and (fitted or not require_fit):
        return "reasoning"
    if not fitted:
        return "not fitted"
    return "memorizing" if row["final_trained_shift"] > MOST else "other rule"


def condition_table(per_run: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Per condition: final OOD (mean, bootstrap interval), mean max OOD, the seeds of each fate, and mean t_mem."""
    t = stats.mean_ci(per_run, by, "final_ood").rename(columns={"mean": "final_ood", "lo": "ood_lo",
                                                                 "hi": "ood_hi", "n": "seeds"})
    g = per_run.groupby(by, sort=False, dropna=False)
    extra = pd.DataFrame({
        "max_ood": g["max_ood"].mean(),
        **{name.replace(" ", "_"): g["fate"].apply(lambda f, n=name: int((f == n).sum())) for name in FATES},
        "trained_shift": g["final_trained_shift"].mean(),
        "t_mem": g["t_mem"].mean(),
    }).reset_index()
    return t.merge(extra, on=by, how="left")


def window_lambda(proto: str, value: float) -> float:
    """A claim's in-window λ: the protocol's when the notebook leaves `window_lambda` at 0."""
    pr = protocol.get_protocol(proto, "protocol_name")
    lam = checks.non_negative(value, "window_lambda", ">= 0 (0: the protocol's)")
    return checks.at_most(lam, checks.MAX_LAMBDA, "window_lambda", "λ") or pr.window_lambda


def gamma_list(gammas: Any, field: str = "gammas") -> list[float]:
    """Distinct positive init scales, sorted; anything else is a ConfigError naming `field`."""
    return checks.distinct_positive(gammas, field, "positive init scales γ")


def onset_grid(P: Size, fracs: list) -> list[int]:
    """Window onsets given as fractions of the run, as distinct sorted steps."""
    return sorted({P.step_at(f, "onset_fracs") for f in fracs})


def tag(g: float) -> str:
    """γ as part of a glue key: 1.1 → 'g1p1'."""
    return f"g{g:g}".replace(".", "p")
