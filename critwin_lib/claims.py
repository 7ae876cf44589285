"""Each claim as one function: its runs, its numbers and its verdict by the rule its notebook states.

The notebook of a claim calls its function and draws what it returns; `python -m critwin_lib.claims`
calls the same functions with each notebook's default parameters on the stored results and writes
`results/claims.csv`, so the scoreboard and the book cannot disagree.
"""

from __future__ import annotations

import ast
import csv
import io
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from critwin_lib import config, experiment, protocol, schedules, stats
from critwin_lib.plotting import schedule_frame

CLAIMS_CSV_COLUMNS = ["claim", "statement", "paper", "ours", "profile", "seeds", "verdict"]


@dataclass
class ClaimResult:
    """What a claim's runs show: the rows of its scoreboard entry and what its page draws."""

    rows: list[dict[str, Any]]  # one or more scoreboard rows (claim, statement, paper, ours, ...)
    numbers: dict[str, Any]  # glued into the book
    frames: dict[str, pd.DataFrame] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


def _verdict_c01(W: float, F: float, N: float) -> str:
    if W >= F - 0.10 and W >= N + 0.25:
        return "reproduced"
    if W >= N + 0.25:
        return "partly reproduced"
    return "not reproduced"


def c01(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
        window_lambda: float, slider_starts: list, results_dir: str, train_missing: bool = True,
        workers: int = -1) -> ClaimResult:
    """C1: none vs full-run weight decay (equal budget, equal λ) vs one 25 % window, same γ and seeds.
    Parameters are the notebook's (its parameters cell holds the defaults). Every one is checked (a bad
    one raises ConfigError naming it) before anything is trained."""
    P = config.get_profile(profile)
    seeds = protocol.seeds(P, n_seeds)
    c1_window = protocol.window(P, window_start_frac, window_frac, window_lambda)
    start_fracs = sorted(set(slider_starts) | {window_start_frac})
    windows = {protocol.window_steps(P, f, window_frac)[0]: protocol.window(P, f, window_frac, window_lambda)
               for f in start_fracs}
    budget = schedules.budget(c1_window, P.steps)
    references = {
        "none": config.WDSchedule.none(),
        "full, equal budget": protocol.full_run(budget / P.steps),
        "full, equal λ": protocol.full_run(window_lambda),
    }
    runs, labels = [], []
    for seed in seeds:
        for name, wd in references.items():
            runs.append(protocol.anchor_run(P, seed, wd, gamma=gamma))
            labels.append({"condition": name, "window_start": math.nan, "seed": seed})
        for start, wd in windows.items():
            runs.append(protocol.anchor_run(P, seed, wd, gamma=gamma))
            labels.append({"condition": "window", "window_start": start, "seed": seed})
    c1_start = c1_window.windows[0][0]
    print(f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(runs)} runs; C1 window "
          f"[{c1_start}, {c1_window.windows[0][1]}) at λ = {window_lambda:g}, budget Σλ = {budget:g}")

    sweep = experiment.sweep(runs, results_dir, workers=workers, train_missing=train_missing)
    history = experiment.frame(sweep.results, labels)
    per_run = experiment.summaries(sweep.results, labels)

    main = per_run[per_run["window_start"].isna() | (per_run["window_start"] == c1_start)]
    order = ["none", "window", "full, equal budget", "full, equal λ"]
    table = (stats.mean_ci(main, ["condition"], "final_ood").set_index("condition").loc[order]
             .join(main.groupby("condition")[["max_ood", "final_trained_shift", "t_mem", "final_train"]].mean()))
    W, F, N, F_lam = (float(table.loc[c, "mean"]) for c in ("window", "full, equal budget", "none", "full, equal λ"))
    W_lo, W_hi = float(table.loc["window", "lo"]), float(table.loc["window", "hi"])
    verdict = _verdict_c01(W, F, N)
    numbers = {"verdict": verdict, "profile": P.name, "seeds": len(seeds), "gamma": float(gamma),
               "ood_window": W, "ood_window_lo": W_lo, "ood_window_hi": W_hi, "ood_full": F,
               "ood_full_lambda": F_lam, "ood_none": N}
    row = {"claim": "C1", "statement": "WD in one 25% window matches WD over the whole run",
           "paper": "OOD 0.93 (window) vs 0.91 (full)",
           "ours": f"window {W:.2f} [{W_lo:.2f}, {W_hi:.2f}] vs full {F:.2f} (equal budget), "
                   f"{F_lam:.2f} (equal λ); none {N:.2f}",
           "profile": P.name, "seeds": len(seeds), "verdict": verdict}
    curves = stats.mean_ci(history, ["condition", "window_start", "step"], "acc/test_ood")
    sched = pd.concat(
        [schedule_frame({k: v}, P.steps).assign(window_start=math.nan) for k, v in references.items()]
        + [schedule_frame({"window": wd}, P.steps).assign(window_start=s) for s, wd in windows.items()],
        ignore_index=True)
    return ClaimResult([row], numbers, {"history": history, "per_run": per_run, "table": table, "curves": curves,
                                        "schedules": sched}, {"c1_start": c1_start, "steps": P.steps})


# ------------------------------------------------------------------------------- the scoreboard
CLAIM_FUNCTIONS = {"c01_critical_window": c01}


def notebook_defaults(path: Path) -> dict[str, Any]:
    """The default values of a notebook's parameters cell."""
    import papermill as pm

    return {name: ast.literal_eval(p["default"]) for name, p in pm.inspect_notebook(str(path)).items()}


def scoreboard(profile: str, results_dir: str | Path) -> list[dict[str, Any]]:
    """Every claim's rows, recomputed from the stored results with the notebooks' default parameters."""
    from critwin_lib.notebooks import claim_notebooks

    rows = []
    for nb in claim_notebooks():
        params = {**notebook_defaults(nb), "profile": profile, "results_dir": str(results_dir),
                  "train_missing": False}
        rows += CLAIM_FUNCTIONS[nb.stem](**params).rows
    return rows


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CLAIMS_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    import argparse

    from critwin_lib.notebooks import REPO

    ap = argparse.ArgumentParser(prog="python -m critwin_lib.claims",
                                 description="write results/claims.csv from the stored results")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--results", type=Path, default=REPO / "results")
    ap.add_argument("--out", type=Path, default=None,
                    help="default: <results>/claims.csv (quick) or claims_<profile>.csv; '-' for stdout")
    args = ap.parse_args(argv)
    text = to_csv(scoreboard(args.profile, args.results))
    if str(args.out) == "-":
        sys.stdout.write(text)
    else:
        name = "claims.csv" if args.profile == "quick" else f"claims_{args.profile}.csv"
        (args.out or args.results / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
