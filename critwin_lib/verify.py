"""`make verify N=5`: are the shipped results what they claim to be? Checks every stored run (checksums, config
against key), then trains N randomly chosen runs again and reports, per run, whether its history matches the
shipped one within tolerance.

Tolerance: on the same kind of CPU a run trains to the same history (float32 kernels are deterministic with one
thread); another CPU may pick other SIMD kernels, and over a 6,400-step run the rounding differences can grow to
about 0.1 in OOD accuracy at some evaluation. Each run's meta records its CPU (from 2026-12-01 on); the report
says whether the shipped run came from this kind of CPU, and only a mismatch on the same kind fails.

    python -m critwin_lib.verify [--results results] [--n 5] [--seed S] [--max-steps K]
    python -m critwin_lib.verify --seal      # add checksums to runs stored before they existed
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

ACC_TOL = 0.02  # accuracies and answer shares: a few sequences of 2,048
LOSS_RTOL = 0.02


@dataclass
class Comparison:
    key: str
    matches: bool
    worst: str  # the column that differs most, relative to its tolerance
    gap: float  # its largest difference
    same_cpu: bool | None  # None: the shipped run did not record its CPU


def compare(shipped: pd.DataFrame, again: pd.DataFrame) -> tuple[bool, str, float]:
    """Whether two histories of one run agree within tolerance: (ok, worst column, its largest difference).
    A shipped run from before a column was added lacks it; the columns it has must match."""
    if not set(shipped.columns) <= set(again.columns) or shipped["step"].tolist() != again["step"].tolist():
        return False, "columns or steps", float("inf")
    worst, gap, score = "", 0.0, 0.0
    for col in shipped.columns:
        a, b = shipped[col].to_numpy(float), again[col].to_numpy(float)
        if col.startswith(("acc/", "trained_shift/", "answer/")):
            d = float(np.nanmax(np.abs(a - b))) if len(a) else 0.0
            s = d / ACC_TOL
        elif col.startswith("loss/") and col != "loss/batch":
            d = float(np.nanmax(np.abs(a - b) / np.maximum(np.abs(a), 1e-12))) if len(a) else 0.0
            s = d / LOSS_RTOL
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
    ok, worst, gap = compare(shipped.history, again.history)
    cpu = shipped.meta.get("cpu")
    return Comparison(key, ok, worst, gap, None if cpu is None else cpu == experiment.cpu_model())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.verify", description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default="results")
    ap.add_argument("--n", type=int, default=5, help="runs to train again (0: only check the files)")
    ap.add_argument("--seed", type=int, default=None, help="which runs are drawn (default: a new draw each time)")
    ap.add_argument("--max-steps", type=int, default=None, help="draw only among runs of at most this many steps")
    ap.add_argument("--seal", action="store_true", help="add checksums to runs that have none, then check")
    args = ap.parse_args(argv)
    if args.n < 0:
        ap.error("--n must be >= 0")
    store = experiment.Store(args.results)
    keys = store.keys()
    checked = {k: store.checked(k) for k in keys}  # config.json and checksums, histories not loaded
    damaged = {k: why for k, (why, _) in checked.items() if why}
    for k, why in damaged.items():
        print(checksums.repair_line(store.path(k), why), file=sys.stderr)
    if args.seal:
        sealed = [k for k in keys if k not in damaged and not (store.path(k) / checksums.SUMS).is_file()]
        for k in sealed:
            checksums.seal(store.path(k))
        print(f"verify: sealed {len(sealed)} runs", file=sys.stderr)
    print(f"verify: {len(keys)} runs in {store.runs}, {len(damaged)} damaged", file=sys.stderr)
    pool = [k for k in keys if k not in damaged
            and (args.max_steps is None or checked[k][1].train.steps <= args.max_steps)]
    bad = len(damaged)
    for key in random.Random(args.seed).sample(pool, min(args.n, len(pool))):
        c = verify_run(store, key)
        cpu = {True: "same kind of CPU", False: "another kind of CPU", None: "CPU not recorded"}[c.same_cpu]
        verdict = "matches" if c.matches else f"differs ({c.worst} by {c.gap:.3g})"
        print(f"verify: run {key}: {verdict}; shipped from {cpu}", file=sys.stderr)
        bad += (not c.matches) and c.same_cpu is True
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
