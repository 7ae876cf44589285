"""`make verify N=5`: are the shipped results what they claim to be? Checks every stored run (checksums, config
against key), then trains N randomly chosen runs again and reports, per run, whether its history matches the
shipped one within tolerance.

Tolerance: on the same kind of CPU a run trains to the same history (float32 kernels are deterministic with one
thread), so it must match within ACC_TOL; another CPU may pick other SIMD kernels, and over a 6,400-step run the
rounding differences can grow to about 0.1 in OOD accuracy at some evaluation, so a run shipped from another kind
of CPU, or one that did not record its CPU, must match within the wider CROSS_CPU_ACC_TOL. Either way a run beyond
its tolerance fails, and the report prints the tolerance it applied.

    python -m critwin_lib.verify [--results results] [--n 5] [--seed S] [--max-steps K]
    python -m critwin_lib.verify --reseal KEY [KEY ...] --why "..."   # seal a run you have checked, as it is now
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from critwin_lib import checksums, experiment

ACC_TOL = 0.02  # accuracies and answer shares: a few sequences of 2,048 (same kind of CPU)
LOSS_RTOL = 0.02
CROSS_CPU_ACC_TOL = 0.1  # ... from another kind of CPU, or one not recorded (other SIMD kernels)
CROSS_CPU_LOSS_RTOL = 0.1
ESTIMATE_ABOVE = 3  # more runs to train again than this: an estimate line first


@dataclass
class Comparison:
    key: str
    matches: bool
    worst: str  # the column that differs most, relative to its tolerance
    gap: float  # its largest difference
    same_cpu: bool | None  # None: the shipped run did not record its CPU


def compare(shipped: pd.DataFrame, again: pd.DataFrame, acc_tol: float = ACC_TOL, loss_rtol: float = LOSS_RTOL
            ) -> tuple[bool, str, float]:
    """Whether two histories of one run agree within tolerance: (ok, worst column, its largest difference).
    A shipped run from before a column was added lacks it; the columns it has must match."""
    if not set(shipped.columns) <= set(again.columns) or shipped["step"].tolist() != again["step"].tolist():
        return False, "columns or steps", float("inf")
    worst, gap, score = "", 0.0, 0.0
    for col in shipped.columns:
        a, b = shipped[col].to_numpy(float), again[col].to_numpy(float)
        if col.startswith(("acc/", "trained_shift/", "answer/")):
            d = float(np.nanmax(np.abs(a - b))) if len(a) else 0.0
            s = d / acc_tol
        elif col.startswith("loss/") and col != "loss/batch":
            d = float(np.nanmax(np.abs(a - b) / np.maximum(np.abs(a), 1e-12))) if len(a) else 0.0
            s = d / loss_rtol
        else:
            continue
        if s > score:
            worst, gap, score = col, d, s
    return score <= 1.0, worst, gap


def verify_run(store: experiment.Store, key: str) -> Comparison:
    """Train one stored run again in a scratch folder and compare."""
    shipped = store.load(key)
    with tempfile.TemporaryDirectory() as tmp:
        again = experiment.run(shipped.config, tmp)
    cpu = shipped.meta.get("cpu")
    same = None if cpu is None else cpu == experiment.cpu_model()
    ok, worst, gap = compare(shipped.history, again.history, *tolerance(same))
    return Comparison(key, ok, worst, gap, same)


def tolerance(same_cpu: bool | None) -> tuple[float, float]:
    """(accuracy tolerance, relative loss tolerance) for a run shipped from the same kind of CPU (True), another
    kind (False) or an unrecorded one (None)."""
    return (ACC_TOL, LOSS_RTOL) if same_cpu else (CROSS_CPU_ACC_TOL, CROSS_CPU_LOSS_RTOL)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.verify", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default="results")
    ap.add_argument("--n", type=int, default=5, help="runs to train again (0: only check the files)")
    ap.add_argument("--seed", type=int, default=None, help="which runs are drawn (default: a new draw each time)")
    ap.add_argument("--max-steps", type=int, default=None, help="draw only among runs of at most this many steps")
    ap.add_argument("--reseal", nargs="+", metavar="KEY", default=[],
                    help="seal these runs' files as they are now (only with --why), then check")
    ap.add_argument("--why", default="", help="why the runs of --reseal are trusted as they are (kept with them)")
    args = ap.parse_args(argv)
    if args.n < 0:
        ap.error("--n must be >= 0")
    store = experiment.Store(args.results)
    keys = store.keys()
    if args.reseal:
        if not args.why.strip():
            ap.error("--reseal needs --why: say why these runs' files are trusted as they are now")
        unknown = [k for k in args.reseal if k not in keys]
        if unknown:
            ap.error(f"--reseal: no stored run {', '.join(unknown)} in {store.runs}")
        for k in args.reseal:
            checksums.seal(store.path(k), resealed=args.why.strip())
        print(f"verify: re-sealed {len(args.reseal)} runs ({args.why.strip()})", file=sys.stderr)
    checked = {k: store.checked(k) for k in keys}  # config.json and checksums, histories not loaded
    damaged = {k: why for k, (why, _) in checked.items() if why}
    damaged |= {k: "meta.json missing (an incomplete run folder)" for k in store.incomplete()}
    for k, why in damaged.items():
        print(checksums.repair_line(store.path(k), why), file=sys.stderr)
    print(f"verify: {len(keys) + len(store.incomplete())} runs in {store.runs}, {len(damaged)} damaged",
          file=sys.stderr)
    pool = [k for k in keys if k not in damaged
            and (args.max_steps is None or checked[k][1].train.steps <= args.max_steps)]
    drawn = random.Random(args.seed).sample(pool, min(args.n, len(pool)))
    if len(drawn) > ESTIMATE_ABOVE:
        experiment.print_plan([checked[k][1] for k in drawn], args.results, workers=1, label="verify",
                              note="; one after another, Ctrl-C stops", again=True)
    if drawn:
        print(f"verify: tolerance {ACC_TOL:g} in accuracy ({LOSS_RTOL:g} relative in loss) for a run shipped from "
              f"this kind of CPU, {CROSS_CPU_ACC_TOL:g} ({CROSS_CPU_LOSS_RTOL:g}) from another kind or an unrecorded "
              "one", file=sys.stderr)
    bad = len(damaged)
    for key in drawn:
        c = verify_run(store, key)
        cpu = {True: "same kind of CPU", False: "another kind of CPU", None: "CPU not recorded"}[c.same_cpu]
        acc, _ = tolerance(c.same_cpu)
        verdict = "matches" if c.matches else f"differs ({c.worst} by {c.gap:.3g})"
        print(f"verify: run {key}: {verdict} within {acc:g}; shipped from {cpu}", file=sys.stderr)
        bad += not c.matches
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
