import math

import numpy as np
import pandas as pd
import pytest
import torch

from critwin_lib import metrics, stats


def test_accuracy_on_handmade_logits():
    logits = torch.tensor([[0.0, 2.0, 1.0], [3.0, 0.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.5, 0.0]])
    assert metrics.accuracy(logits, torch.tensor([1, 0, 2, 2])) == 0.75


def test_trained_shift_fraction():
    pred, keys = np.array([30, 40, 50, 60]), np.array([40, 40, 40, 53])
    assert metrics.trained_shift_fraction(pred, keys, [-10, 7]) == 0.5


def test_t_mem_and_summary():
    h = pd.DataFrame({"step": [0, 100, 200, 300], "acc/train": [0.0, 0.5, 0.995, 1.0],
                      "acc/test_ood": [0.0, 0.3, 0.2, 0.1], "acc/test_id": [0, 0, 1, 1],
                      "trained_shift/test_ood": [0, 0, 0.5, 0.9], "param_norm": [1, 2, 3, 4]})
    assert metrics.t_mem(h) == 200
    assert math.isnan(metrics.t_mem(h.iloc[:2]))
    s = metrics.summarize(h)
    assert (s["final_ood"], s["max_ood"], s["t_mem"]) == (0.1, 0.3, 200)


def test_param_norm():
    m = torch.nn.Linear(2, 2)
    with torch.no_grad():
        m.weight.fill_(1.0)
        m.bias.fill_(2.0)
    assert metrics.param_norm(m) == pytest.approx(math.sqrt(4 + 8))


def test_bootstrap_interval_brackets_the_mean_and_is_seeded():
    v = [0.1, 0.9, 0.5, 0.4]
    lo, hi = stats.bootstrap_ci(v)
    assert lo <= np.mean(v) <= hi and (lo, hi) == stats.bootstrap_ci(v)
    assert stats.bootstrap_ci([0.3]) == (0.3, 0.3)
    df = pd.DataFrame({"c": ["a", "a", "b"], "v": [0.0, 1.0, 0.5]})
    out = stats.mean_ci(df, ["c"], "v").set_index("c")
    assert out.loc["a", "mean"] == 0.5 and out.loc["b", "n"] == 1
