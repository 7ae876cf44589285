"""The paper's decay set, checked before any claim runs under it.

The paper leaves the token and position embeddings undecayed (its §4); every protocol here decays them. Before C1
to C3 are read under the paper's set, the calibration page's own rule must hold under it: without weight decay
most seeds memorize, and full-run weight decay at the claims' λ makes most seeds reason. If it does not, a ladder
stated here in advance (λ × 2, then × 4, for full-run weight decay and the windows alike) gives the smallest
multiplier that passes. The check is read from stored runs only, so the book builds before they are trained;
`python -m critwin_lib.claims.decay_check quick` trains them (the next rung only where the one before failed).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pandas as pd

from critwin_lib import config, experiment, metrics, protocol
from critwin_lib.claims.calibration import MEMORIZED_OOD
from critwin_lib.claims.core import fetch
from critwin_lib.sizes import get_profile
from critwin_lib.store import Store

PAPER_SET = config.PAPER_WD_PARAMS
LADDER = (1.0, 2.0, 4.0)  # multipliers of λ, tried in this order, each only where the one before failed
# Per length: the protocol the claims' check runs under (the paper's set), the full-run λ of the claims (the budget
# of their 25 % window: quick λ 6 × 0.25, paper λ 12 × 0.25) and the seeds (quick 0-7; paper 0-3, the calibration's).
CHECKS = {"smoke": ("mid-fit-paper-decay", 1.5, 2), "quick": ("mid-fit-paper-decay", 1.5, 8),
          "paper": ("quarter-fit-paper-decay-20k", 3.0, 4)}
RULE = ("Before any claim runs under the paper's decay set (the token and position embeddings not decayed), the "
        "calibration page's rule must hold under it: without weight decay most seeds memorize (training set fitted, "
        f"OOD accuracy below {MEMORIZED_OOD}), and full-run weight decay at the claims' λ makes more than half of the "
        "seeds reason (fitted, OOD above 0.5). If it fails, λ × 2 and then λ × 4 (for full-run weight decay and the "
        "windows alike) are tried in turn, and the claims use the smallest multiplier that passes; if none does, the "
        "claims are not run under this set and the pages say so.")


@dataclass
class DecayCheck:
    """What the stored runs say: one row per rung tried (multiplier, λ, seeds, reasoning, memorizing, passes),
    the seeds that memorize without weight decay, and the multiplier the claims use (None: not decided yet)."""

    profile: str
    table: pd.DataFrame
    none_memorizing: int
    seeds: int
    multiplier: float | None
    stored: int
    needed: int

    def text(self) -> str:
        """The check's outcome in one sentence."""
        if self.stored < self.needed:
            return (f"Not trained yet at this length: {self.stored} of {self.needed} runs of its next step are "
                    "stored.")
        rungs = "; ".join(f"full-run λ {r.lam:g}: {r.reasoning} of {r.seeds} reason" for r in self.table.itertuples())
        none = f"without weight decay {self.none_memorizing} of {self.seeds} memorize"
        if self.multiplier is None:
            return f"No rung of the ladder passes ({none}; {rungs}): the claims are not run under this set."
        return (f"It passes at λ × {self.multiplier:g} ({none}; {rungs}): the claims under this set use "
                f"λ × {self.multiplier:g}.")


def specs(profile: str, multiplier: float) -> list:
    """The runs of one rung: full-run weight decay at the claims' λ × `multiplier` under the paper's set, and no
    weight decay (the same run under every decay set), for the check's seeds."""
    if multiplier not in LADDER:
        raise config.ConfigError(f"multiplier: must be one of the ladder's {LADDER}, got {multiplier!r}")
    name, lam, n = CHECKS[profile]
    P = get_profile(profile)
    seeds = P.seeds(n)
    runs = [({"lambda": lam * multiplier, "seed": s}, protocol.anchor_run(P, s, protocol.full_run(lam * multiplier),
                                                                         protocol=name)) for s in seeds]
    none = [({"lambda": 0.0, "seed": s}, protocol.anchor_run(P, s, config.WDSchedule.none(), protocol=name))
            for s in seeds]
    return runs + none


def _passes(per_run: pd.DataFrame, lam: float) -> tuple[int, int, bool, int]:
    """(reasoning, memorizing, passes, seeds) for full-run λ `lam`, by the calibration page's rule."""
    full, none = per_run[per_run["lambda"] == lam], per_run[per_run["lambda"] == 0.0]
    memorizes = metrics.fitted(none["final_train"]) & (none["final_ood"] < MEMORIZED_OOD)
    reasoning = int((full["fate"] == "reasoning").sum())
    n = len(full)
    return reasoning, int(memorizes.sum()), bool(memorizes.sum() * 2 >= len(none) and reasoning * 2 > n), n


def read(profile: str, results_dir: str) -> DecayCheck:
    """The check at `profile` from the stored runs: rung after rung while each is stored whole and failed."""
    have = Store(results_dir)
    rows, none_mem, n = [], 0, CHECKS[profile][2]
    for m in LADDER:
        rung = specs(profile, m)
        stored = sum(have.has(experiment.run_key(cfg)) for _, cfg in rung)
        if stored < len(rung):
            return DecayCheck(profile, pd.DataFrame(rows), none_mem, n, None, stored, len(rung))
        _, per_run = fetch(rung, results_dir, train_missing=False, workers=0)
        lam = CHECKS[profile][1] * m
        reasoning, none_mem, ok, seeds = _passes(per_run, lam)
        rows.append({"multiplier": m, "lam": lam, "seeds": seeds, "reasoning": reasoning, "passes": ok})
        if ok:
            return DecayCheck(profile, pd.DataFrame(rows), none_mem, n, m, len(rung), len(rung))
    return DecayCheck(profile, pd.DataFrame(rows), none_mem, n, None, 0, 0)


def train(profile: str, results_dir: str = "results", workers: int = 2) -> DecayCheck:
    """Train the check's runs rung by rung (a rung only where the one before failed) and read it."""
    for m in LADDER:
        fetch(specs(profile, m), results_dir, train_missing=True, workers=workers)
        check = read(profile, results_dir)
        if check.multiplier is not None or check.stored < check.needed:
            return check
    return read(profile, results_dir)


def main() -> None:
    ap = argparse.ArgumentParser(description="train and read the paper's decay-set check")
    ap.add_argument("profile", choices=sorted(CHECKS))
    ap.add_argument("--results", default="results")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    print(train(args.profile, args.results, args.workers).text())


if __name__ == "__main__":
    main()
