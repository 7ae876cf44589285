"""Anyone can re-run a shipped run and get its history back."""

import json
import random

import pytest

from critwin_lib import experiment, verify

from .conftest import REPO

pytestmark = pytest.mark.slow

# Same machine type: identical (float32 CPU kernels are deterministic with one thread). Another CPU
# may pick other SIMD kernels; rounding then moves accuracies by a few sequences out of 2,048
# (verify.ACC_TOL, verify.LOSS_RTOL).
# Over a whole 6,400-step run those rounding differences grow: two runs trained on 2026-11-29 and trained again
# on 2026-12-01's CPU (AMD, AVX-512) ended up to 0.1 apart in OOD accuracy at some evaluation. The test draws
# among the short runs (the 1,000-step rate runs), which reproduce across the machines seen so far; each run's
# meta records its CPU from 2026-12-01 on, so a longer check can compare like with like.
SHORT = 1000


def test_a_shipped_run_trains_again_to_the_same_history(tmp_path):
    store = experiment.Store(REPO / "results")
    keys = [k for k in store.keys() if json.loads((store.path(k) / "meta.json").read_text())["steps"] <= SHORT]
    assert len(keys) >= 20
    key = random.Random(2605_04396).choice(keys)
    shipped = store.load(key)
    again = experiment.run(shipped.config, tmp_path)
    assert again.key == key
    # a run shipped before a column was added to the history (the OOD answer histogram) lacks it; the rest match
    ok, worst, gap = verify.compare(shipped.history, again.history)
    assert ok, (worst, gap)


def test_make_verify_checks_the_files_and_trains_runs_again(tmp_path, tiny_cfg, capsys):
    run = experiment.run(tiny_cfg, tmp_path)
    assert verify.main(["--results", str(tmp_path), "--n", "1", "--seed", "0"]) == 0
    assert f"run {run.key}: matches within 0.02; shipped from same kind of CPU" in capsys.readouterr().err
    steps = run.config.train.steps  # --max-steps draws among runs that short only (read from their configs)
    assert verify.main(["--results", str(tmp_path), "--n", "1", "--max-steps", str(steps - 1)]) == 0
    assert "matches" not in capsys.readouterr().err
    assert verify.main(["--results", str(tmp_path), "--n", "1", "--max-steps", str(steps)]) == 0
    assert f"run {run.key}: matches" in capsys.readouterr().err
    (experiment.Store(tmp_path).path(run.key) / "meta.json").write_text("{}")
    assert verify.main(["--results", str(tmp_path), "--n", "0"]) == 1
    assert "meta.json changed since the run was stored" in capsys.readouterr().err
