"""The anchor-function composition task (spec §2, after Zhang et al. 2024/2025).

A sequence of 9 input tokens holds noise, a key item x and two anchors "x a1 a2"; the answer at the
last position is y = x + δ(a1) + δ(a2). Reasoning composes the single-anchor shifts and answers the
unseen pair (4, 3) with x - 10; memorizing whole pairs cannot. Every array is a pure function of the
data seed (one child generator per data group, so changing one size does not move the others).
"""

from __future__ import annotations

import numpy as np

from critwin_lib.config import ANCHOR_INPUT_LEN, ANCHOR_VOCAB_SIZE, AnchorTask
from critwin_lib.tasks.data import Split, TaskData

SHIFTS = {1: 5, 2: 1, 3: -2, 4: -8}  # anchor id -> shift of its single-anchor function
KEY_MIN, KEY_MAX = 20, 100  # keys and noise are uniform in [20, 99]
N_KEY_POSITIONS = 7  # key position p in 0..6; anchors follow at p+1, p+2
SEQ_LEN = ANCHOR_INPUT_LEN + 1  # stored length: 9 inputs and the answer
ALL_PAIRS = tuple((a1, a2) for a1 in SHIFTS for a2 in SHIFTS)
OOD_PAIRS = {"A": ((4, 3),), "B": ((4, 3), (3, 4))}
VARIANT_A_SPECIAL = ((3, 4), 4)  # variant A trains (3,4) with y = x - 6 (+4 on the composite)


def composite_shift(a1: int, a2: int) -> int:
    """The reasoning answer's shift: f_a1(f_a2(x)) - x."""
    return SHIFTS[a1] + SHIFTS[a2]


def training_pairs(variant: str) -> list[tuple[int, int]]:
    held_out = {(4, 3)} | ({(3, 4)} if variant == "B" else set())
    return [p for p in ALL_PAIRS if p not in held_out]


def trained_label_shift(pair: tuple[int, int], variant: str) -> int:
    """Shift of the label the training data carries for a trained pair."""
    extra = VARIANT_A_SPECIAL[1] if (variant == "A" and pair == VARIANT_A_SPECIAL[0]) else 0
    return composite_shift(*pair) + extra


def key_is_heldout(x: np.ndarray, p: np.ndarray) -> np.ndarray:
    """In-distribution key split: x is a test key at position p iff x mod 9 == p mod 9."""
    return (x % 9) == (p % 9)


def _sample(rng: np.random.Generator, pair: tuple[int, int], n: int, heldout_keys: bool,
            shift: int) -> tuple[np.ndarray, np.ndarray]:
    seq = rng.integers(KEY_MIN, KEY_MAX, size=(n, SEQ_LEN))
    p = rng.integers(0, N_KEY_POSITIONS, size=n)
    keys = np.arange(KEY_MIN, KEY_MAX)
    x = np.empty(n, dtype=np.int64)
    for pos in range(N_KEY_POSITIONS):
        rows = np.flatnonzero(p == pos)
        allowed = keys[key_is_heldout(keys, np.full_like(keys, pos)) == heldout_keys]
        x[rows] = allowed[rng.integers(0, len(allowed), size=len(rows))]
    idx = np.arange(n)
    seq[idx, p], seq[idx, p + 1], seq[idx, p + 2] = x, pair[0], pair[1]
    seq[:, -1] = x + shift
    return seq.astype(np.int64), x


def _group(data_seed: int, tag: int, pair: tuple[int, int], n: int, heldout_keys: bool,
           shift: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([data_seed, tag, pair[0], pair[1], int(heldout_keys)])
    return _sample(rng, pair, n, heldout_keys, shift)


def _split(parts: list[tuple[np.ndarray, np.ndarray]]) -> Split:
    seq = np.concatenate([s for s, _ in parts])
    keys = np.concatenate([k for _, k in parts])
    return Split(inputs=seq[:, :ANCHOR_INPUT_LEN], targets=seq[:, -1], keys=keys)


def _spread(total: int, k: int) -> list[int]:
    return [total // k + (1 if i < total % k else 0) for i in range(k)]


def make_anchor_task(cfg: AnchorTask) -> TaskData:
    """Training set: every trained pair with training-residue keys. Eval splits:

    - `train`: a fixed random subset of the training set (fit);
    - `test_id`: trained pairs with held-out keys (x mod 9 == p mod 9);
    - `test_ood`: the unseen pair (4, 3), training-residue keys, answer x - 10 (the paper's OOD metric);
    - `test_ood_34` (variant B only): the other unseen pair (3, 4), answer x - 10.
    """
    v, seed = cfg.variant, cfg.data_seed
    pairs = training_pairs(v)
    train = [_group(seed, 0, pr, cfg.n_train_per_pair, False, trained_label_shift(pr, v)) for pr in pairs]
    train_inputs = np.concatenate([s for s, _ in train])
    train_keys = np.concatenate([k for _, k in train])

    pick = np.random.default_rng([seed, 9]).choice(len(train_inputs), size=min(cfg.n_eval, len(train_inputs)),
                                                   replace=False)
    splits = {"train": Split(train_inputs[pick, :ANCHOR_INPUT_LEN], train_inputs[pick, -1], train_keys[pick])}
    splits["test_id"] = _split([_group(seed, 1, pr, n, True, trained_label_shift(pr, v))
                                for pr, n in zip(pairs, _spread(cfg.n_eval, len(pairs)), strict=True)])
    for i, pr in enumerate(OOD_PAIRS[v]):
        name = "test_ood" if i == 0 else f"test_ood_{pr[0]}{pr[1]}"
        splits[name] = _split([_group(seed, 2, pr, cfg.n_eval, False, composite_shift(*pr))])

    trained_shifts = sorted({trained_label_shift(pr, v) for pr in pairs})
    return TaskData(
        train_inputs=train_inputs[:, :ANCHOR_INPUT_LEN],
        train_targets=train_inputs[:, -1],
        splits=splits,
        vocab_size=ANCHOR_VOCAB_SIZE,
        meta={"variant": v, "train_pairs": pairs, "ood_pairs": list(OOD_PAIRS[v]),
              "trained_shifts": trained_shifts, "ood_shift": composite_shift(4, 3)},
    )
