"""Anyone can re-run a shipped run and get its history back."""

import random

import numpy as np
import pytest

from critwin_lib import experiment

from .conftest import REPO

pytestmark = pytest.mark.slow

# Same machine type: identical (float32 CPU kernels are deterministic with one thread). Another CPU
# may pick other SIMD kernels; rounding then moves accuracies by a few sequences out of 2,048.
ACC_TOL = 0.02
LOSS_RTOL = 0.02


def test_a_shipped_run_trains_again_to_the_same_history(tmp_path):
    store = experiment.Store(REPO / "results")
    keys = store.keys()
    assert len(keys) >= 40
    key = random.Random(2605_04396).choice(keys)
    shipped = store.load(key)
    again = experiment.run(shipped.config, tmp_path)
    assert again.key == key
    a, b = shipped.history, again.history
    # a run shipped before a column was added to the history (the OOD answer histogram) lacks it; the rest match
    assert set(a.columns) <= set(b.columns) and a["step"].tolist() == b["step"].tolist()
    for col in a.columns:
        if col.startswith(("acc/", "trained_shift/", "answer/")):
            assert np.abs(a[col] - b[col]).max() <= ACC_TOL, col
        elif col.startswith("loss/") and col != "loss/batch":
            np.testing.assert_allclose(b[col], a[col], rtol=LOSS_RTOL, err_msg=col)
