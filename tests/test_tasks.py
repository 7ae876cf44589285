import numpy as np
import pytest

from critwin_lib.config import AnchorTask
from critwin_lib.tasks import make_task
from critwin_lib.tasks.anchor import SHIFTS, composite_shift, training_pairs


def anchor_positions(inputs: np.ndarray):
    """(key, a1, a2) of each sequence: the only tokens below 20 are the two adjacent anchors."""
    rows, cols = np.nonzero(inputs < 20)
    assert len(rows) == 2 * len(inputs)
    first = cols[::2]
    assert np.all(cols[1::2] == first + 1)
    idx = np.arange(len(inputs))
    return inputs[idx, first - 1], inputs[idx, first], inputs[idx, first + 1], first - 1


@pytest.fixture(scope="module", params=["A", "B"])
def task(request):
    return make_task(AnchorTask(variant=request.param, n_train_per_pair=400, n_eval=300))


def test_every_label_is_the_composed_shift(task):
    v = task.meta["variant"]
    for x_in, y in [(task.train_inputs, task.train_targets)] + [(s.inputs, s.targets) for s in task.splits.values()]:
        key, a1, a2, _ = anchor_positions(x_in)
        shift = np.array([SHIFTS[a] for a in a1]) + np.array([SHIFTS[a] for a in a2])
        special = (v == "A") & (a1 == 3) & (a2 == 4)
        assert np.array_equal(y, key + shift + 4 * special)


def test_ood_pairs_never_occur_in_training(task):
    _, a1, a2, _ = anchor_positions(task.train_inputs)
    pairs = set(zip(a1.tolist(), a2.tolist(), strict=True))
    assert (4, 3) not in pairs
    assert ((3, 4) in pairs) == (task.meta["variant"] == "A")
    assert pairs == set(training_pairs(task.meta["variant"]))
    _, o1, o2, _ = anchor_positions(task.splits["test_ood"].inputs)
    assert set(zip(o1.tolist(), o2.tolist(), strict=True)) == {(4, 3)}
    assert np.array_equal(task.splits["test_ood"].targets, task.splits["test_ood"].keys + composite_shift(4, 3))


def test_key_split_train_keys_and_heldout_keys(task):
    key, _, _, p = anchor_positions(task.train_inputs)
    assert np.all(key % 9 != p % 9)
    key, _, _, p = anchor_positions(task.splits["test_id"].inputs)
    assert np.all(key % 9 == p % 9)
    assert np.all((task.train_inputs >= 1) & (task.train_inputs <= 99))


def test_data_seed_determines_the_data():
    a = make_task(AnchorTask(n_train_per_pair=50, n_eval=40, data_seed=7))
    b = make_task(AnchorTask(n_train_per_pair=50, n_eval=40, data_seed=7))
    c = make_task(AnchorTask(n_train_per_pair=50, n_eval=40, data_seed=8))
    assert np.array_equal(a.train_inputs, b.train_inputs)
    assert all(np.array_equal(a.splits[k].inputs, b.splits[k].inputs) for k in a.splits)
    assert not np.array_equal(a.train_inputs, c.train_inputs)
    assert not np.array_equal(a.splits["test_ood"].inputs, c.splits["test_ood"].inputs)


def test_sizes():
    t = make_task(AnchorTask(n_train_per_pair=100, n_eval=70))
    assert t.train_inputs.shape == (14 * 100, 9)
    assert {k: len(s.targets) for k, s in t.splits.items()} == {"train": 70, "test_id": 70, "test_ood": 70,
                                                                 "test_ood_34": 70}
    assert t.meta["trained_shifts"] == sorted({composite_shift(*p) for p in training_pairs("B")})
