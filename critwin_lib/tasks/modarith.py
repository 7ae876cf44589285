"""Modular arithmetic (a ∘ b) mod p, the grokking task (claim C8, spec §6): inputs [a, b, =] with "=" the
token p, the answer read at the last position, a seeded split of all pairs by training fraction. The
grokking reference (Nanda et al. 2023) is (a + b) mod 113 with 30 % of the 12,769 pairs for training.
"""

from __future__ import annotations

import numpy as np

from critwin_lib.config import ModArithTask, check_modarith_table
from critwin_lib.tasks.data import Split, TaskData


def table(p: int, op: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every pair (a, b) the operation is defined on, and its answer: arrays a, b, c."""
    check_modarith_table(p, op)
    a, b = (x.ravel() for x in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    if op == "div":  # a / b = a · b^(p-2) mod p (Fermat), b ≠ 0
        a, b = a[b != 0], b[b != 0]
        c = a * np.array([pow(int(x), p - 2, p) for x in b]) % p
    else:
        c = {"add": a + b, "sub": a - b, "mul": a * b}[op] % p
    return a.astype(np.int64), b.astype(np.int64), c.astype(np.int64)


def make_modarith(p: int = 113, op: str = "add", train_frac: float = 0.3, data_seed: int = 0) -> TaskData:
    """The training pairs and the held-out pairs ("test") of one seeded split; vocabulary p + 1. The values
    are checked as a `ModArithTask` (ConfigError naming the field)."""
    ModArithTask(p=p, op=op, train_frac=train_frac, data_seed=data_seed)
    a, b, c = table(p, op)
    order = np.random.default_rng(data_seed).permutation(len(a))
    n_train = int(train_frac * len(a))
    inputs = np.stack([a, b, np.full_like(a, p)], axis=1)
    tr, te = order[:n_train], order[n_train:]
    return TaskData(train_inputs=inputs[tr], train_targets=c[tr],
                    splits={"train": Split(inputs[tr], c[tr], a[tr]), "test": Split(inputs[te], c[te], a[te])},
                    vocab_size=p + 1, meta={"p": p, "op": op, "n_pairs": len(a), "n_train": n_train},
                    headline="acc/test")
