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


# --------------------------------------------------------------- C13 instrumentation on known cases
def test_condensation_index_parallel_vs_orthogonal_rows():
    v = torch.tensor([1.0, 2.0, -1.0])
    parallel = torch.stack([v, -2 * v, 0.5 * v, 3 * v])  # all rows on one line (sign does not matter)
    assert metrics.condensation_index(parallel) == pytest.approx(1.0)
    assert metrics.condensed_fraction(parallel) == 1.0
    eye = torch.eye(4)
    assert metrics.condensation_index(eye) == pytest.approx(0.0)
    assert metrics.condensed_fraction(eye) == 0.0
    # two blocks of two parallel rows, blocks orthogonal: 4 of the 12 ordered pairs have |cos| = 1
    blocks = torch.tensor([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [0.0, -3.0]])
    assert metrics.condensation_index(blocks) == pytest.approx(4 / 12)
    assert metrics.condensed_fraction(blocks) == pytest.approx(4 / 12)


def test_stable_rank_of_known_spectra():
    assert metrics.stable_rank(torch.diag(torch.tensor([3.0, 3.0, 3.0]))) == pytest.approx(3.0)
    assert metrics.stable_rank(torch.diag(torch.tensor([2.0, 1.0, 0.0]))) == pytest.approx(1.25)
    u, v = torch.randn(5, 1), torch.randn(1, 7)
    assert metrics.stable_rank(u @ v) == pytest.approx(1.0)
    Q = torch.linalg.qr(torch.randn(6, 6, dtype=torch.float64)).Q  # rotations do not change it
    assert metrics.stable_rank(Q @ torch.diag(torch.tensor([2.0, 1.0, 0, 0, 0, 0], dtype=torch.float64))) \
        == pytest.approx(1.25)


def test_embedding_order_number_line_vs_shuffled():
    values = np.arange(20, 100)
    g = torch.Generator().manual_seed(0)
    direction = torch.randn(16, generator=g)
    line = torch.tensor(values, dtype=torch.float64)[:, None] * direction.double() \
        + 0.01 * torch.randn(80, 16, generator=g).double()
    assert metrics.embedding_order(line, values) == pytest.approx(1.0, abs=1e-6)
    assert metrics.embedding_order(-line, values) == pytest.approx(1.0, abs=1e-6)  # orientation ignored
    shuffled = line[torch.randperm(80, generator=g)]
    assert metrics.embedding_order(shuffled, values) < 0.4


def test_subspace_alignment_inside_orthogonal_and_partial():
    e = torch.eye(4, dtype=torch.float64)
    assert metrics.subspace_alignment(e[:, :2], e[:, :2]) == pytest.approx(1.0)
    assert metrics.subspace_alignment(e[:, :2], e[:, 2:]) == pytest.approx(0.0)
    assert metrics.subspace_alignment(e[:, :1], e[:, :3]) == pytest.approx(1.0)  # smaller inside larger
    half = torch.stack([e[0], (e[1] + e[2]) / math.sqrt(2)], 1)  # one shared axis, one at 45°
    assert metrics.subspace_alignment(e[:, :2], half) == pytest.approx((1 + 0.5) / 2)
    X = torch.randn(50, 2, dtype=torch.float64) @ torch.stack([e[0], e[3]])  # rows in span(e0, e3)
    U = metrics.top_subspace(X, 2)
    assert metrics.subspace_alignment(U, e[:, [0, 3]]) == pytest.approx(1.0)


def test_logit_margin():
    logits = torch.tensor([[2.0, 0.5, 1.0], [0.0, 3.0, 1.0]])
    assert metrics.logit_margin(logits, torch.tensor([0, 2])) == pytest.approx((1.0 + -2.0) / 2)


def test_instrumented_run_logs_the_c13_columns_and_trains_identically():
    from critwin_lib import config, protocol, train
    from critwin_lib.sizes import get_profile

    P = get_profile("smoke")
    cfg = protocol.anchor_run(P, 0, config.WDSchedule.constant(0.1))
    plain = train.train(cfg)
    inst = train.train(config.replace(cfg, **{"train.instrument": True}))
    cols = ["ci/wq1", "ci_frac/wq1", "srank/wq1", "srank/embed", "order/embed", "align/embed_resid",
            "align/anchor_ov", "margin/test_ood", "margin/train"]
    assert inst[cols].notna().all().all() and len(inst) == len(plain)
    assert ((inst[cols[:-2]] >= 0).all().all() and (inst[["ci/wq1", "order/embed", "align/embed_resid",
                                                          "align/anchor_ov"]] <= 1 + 1e-9).all().all())
    pd.testing.assert_frame_equal(inst[plain.columns], plain)  # measuring does not change training


def test_answer_histogram_bins_each_answer_by_its_shift():
    keys = np.array([40, 40, 40, 40, 40, 40, 40, 40])
    pred = np.array([30, 30, 30, 38, 34, 40, 90, 5])  # x − 10 three times, −2, −6, 0, +50, −35
    h = metrics.answer_histogram(pred, keys)
    assert len(h) == len(metrics.ANSWER_SHIFTS) + 1 and sum(h.values()) == pytest.approx(1.0)
    p = metrics.ANSWER_PREFIX
    assert h[f"{p}-10"] == 3 / 8 and h[f"{p}-2"] == 1 / 8 and h[f"{p}+0"] == 1 / 8 and h[f"{p}other"] == 2 / 8


def test_one_threshold_says_when_the_training_set_is_fitted_for_t_mem_and_for_a_fate():
    from critwin_lib.claims.core import fate

    h = pd.DataFrame({"step": [0, 100, 200], "acc/train": [0.5, metrics.FITTED_TRAIN_ACC, 1.0]})
    assert metrics.t_mem(h) == 100  # reaching the threshold counts, as it does for the fate
    at = {"final_train": metrics.FITTED_TRAIN_ACC, "final_ood": 0.0, "final_trained_shift": 0.9}
    assert fate(at) == "memorizing" and fate({**at, "final_train": 0.989}) == "not fitted"
