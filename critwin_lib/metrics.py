"""Measurements of a model on a task, and summaries of a run's history.

Metric keys are `quantity/split` (`acc/test_ood`, `loss/train`), plus `param_norm`. For the tasks with
one answer (anchor, modular arithmetic) everything is read at the last position, where the answer is; for
SCAN `acc/<split>` is exact match of greedily generated action sequences and `loss/<split>` the
teacher-forced loss on the action tokens. Used by: train.py, every claim notebook.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from critwin_lib.tasks import IGNORE, TaskData
from critwin_lib.tasks.anchor import KEY_MAX, KEY_MIN, SHIFTS, composite_shift, trained_label_shift, training_pairs

FITTED_TRAIN_ACC = 0.99  # the training set counts as fitted from this accuracy on (t_mem, a run's fate)
ANSWER_SHIFTS = range(-20, 21)  # bins of the OOD answer histogram: answer − x (x − 10 is the composite)
ANSWER_PREFIX = "answer/test_ood/"  # history columns: ANSWER_PREFIX + "{shift:+d}" and ANSWER_PREFIX + "other"


@torch.no_grad()
def last_logits(model: torch.nn.Module, inputs: torch.Tensor, batch_size: int = 4096) -> torch.Tensor:
    """Logits at the last position, (N, V), in chunks."""
    return torch.cat([model(inputs[i:i + batch_size], last_only=True)[:, -1]
                      for i in range(0, len(inputs), batch_size)])


def accuracy(logits: torch.Tensor, targets: torch.Tensor) -> float:
    return (logits.argmax(-1) == targets).double().mean().item()


def param_norm(model: torch.nn.Module) -> float:
    """Global L2 norm of all parameters."""
    return torch.sqrt(sum((p.detach().double() ** 2).sum() for p in model.parameters())).item()


def answer_histogram(pred: np.ndarray, keys: np.ndarray) -> dict[str, float]:
    """Share of answers at each shift answer − x of ANSWER_SHIFTS, and the share outside them ("other"):
    which rule a model applies to the unseen pair (the composite x − 10, a trained pair's shift, another)."""
    d = np.asarray(pred) - np.asarray(keys)
    out = {f"{ANSWER_PREFIX}{s:+d}": float((d == s).mean()) for s in ANSWER_SHIFTS}
    out[f"{ANSWER_PREFIX}other"] = float(((d < ANSWER_SHIFTS.start) | (d >= ANSWER_SHIFTS.stop)).mean())
    return out


def trained_shift_fraction(pred: np.ndarray, keys: np.ndarray, trained_shifts: list[int]) -> float:
    """Fraction of answers equal to x + s for a shift s of some trained pair: how much of the OOD
    output a pair-memorizing model explains."""
    return float(np.isin(pred - keys, trained_shifts).mean())


@torch.no_grad()
def generate_greedy(model: torch.nn.Module, inputs: torch.Tensor, targets: torch.Tensor, start: int) -> torch.Tensor:
    """Greedy continuation of `inputs[:, :start]`, one token at a time, as far as the last scored target
    (later tokens cannot change an exact match). Returns (N, T + 1): the prompt, then generated tokens, so
    column t + 1 is the model's choice for the target of input position t."""
    scored = (targets != IGNORE).any(0).nonzero()
    stop = int(scored.max()) + 1 if len(scored) else start - 1  # the last position to generate
    out = torch.zeros(inputs.shape[0], inputs.shape[1] + 1, dtype=inputs.dtype, device=inputs.device)
    out[:, :start] = inputs[:, :start]
    for t in range(start, stop + 1):
        out[:, t] = model(out[:, :t], last_only=True)[:, -1].argmax(-1)
    return out


@torch.no_grad()
def sequence_scores(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 1024
                    ) -> tuple[float, float]:
    """(exact-match accuracy under greedy decoding, teacher-forced loss) of a next-token split: a row is
    right when every scored token (the actions and EOS) is generated."""
    scored = y != IGNORE
    first = int(scored.float().argmax(1).min()) + 1  # generation starts at the first scored token
    right, loss_sum = 0, 0.0
    for i in range(0, len(x), batch_size):
        xb, yb, mb = x[i:i + batch_size], y[i:i + batch_size], scored[i:i + batch_size]
        gen = generate_greedy(model, xb, yb, first)
        right += int(((gen[:, 1:] == yb) | ~mb).all(1).sum())
        loss_sum += F.cross_entropy(model(xb).flatten(0, 1), yb.flatten(), ignore_index=IGNORE,
                                    reduction="sum").item()
    return right / len(x), loss_sum / max(1, int(scored.sum()))


@torch.no_grad()
def evaluate(model: torch.nn.Module, task: TaskData, tensors: dict[str, tuple[torch.Tensor, torch.Tensor]],
             logits_out: dict[str, torch.Tensor] | None = None) -> dict[str, float]:
    """Accuracy and loss on every split; on the anchor task's OOD split(s) also the share of trained
    shifts. `logits_out`, if given, receives each split's last-position logits (for `instrument`)."""
    was_training = model.training
    model.eval()
    out: dict[str, float] = {}
    for name, (x, y) in tensors.items():
        if task.objective == "sequence":
            out[f"acc/{name}"], out[f"loss/{name}"] = sequence_scores(model, x, y)
            continue
        logits = last_logits(model, x)
        if logits_out is not None:
            logits_out[name] = logits
        out[f"acc/{name}"] = accuracy(logits, y)
        out[f"loss/{name}"] = F.cross_entropy(logits, y).item()
        if name.startswith("test_ood") and "trained_shifts" in task.meta:
            pred = logits.argmax(-1).cpu().numpy()
            out[f"trained_shift/{name}"] = trained_shift_fraction(
                pred, task.splits[name].keys, task.meta["trained_shifts"])
            if name == "test_ood":  # the paper's unseen pair (4, 3): which shift each answer applies
                out.update(answer_histogram(pred, task.splits[name].keys))
    out["param_norm"] = param_norm(model)
    model.train(was_training)
    return out


def first_step_above(history: pd.DataFrame, metric: str, threshold: float) -> float:
    """First evaluated step whose `metric` exceeds `threshold` (NaN if never)."""
    hit = history.loc[history[metric] > threshold, "step"]
    return float(hit.iloc[0]) if len(hit) else float("nan")


def fitted(train_acc: float | pd.Series) -> bool | pd.Series:
    """Whether a training accuracy counts as the training set fitted (≥ FITTED_TRAIN_ACC)."""
    return train_acc >= FITTED_TRAIN_ACC


def t_mem(history: pd.DataFrame) -> float:
    """First evaluated step at which the training set counts as fitted (`fitted`; NaN if never)."""
    hit = history.loc[fitted(history["acc/train"]), "step"]
    return float(hit.iloc[0]) if len(hit) else float("nan")


UNTRAINED_SHIFTS = sorted(set(ANSWER_SHIFTS) - {trained_label_shift(p, "B") for p in training_pairs("B")}
                          - {composite_shift(4, 3)})  # variant B: answers that neither reason nor recall a pair


def other_rule(last: pd.Series) -> dict[str, float]:
    """The most common answer shift to (4, 3) that is neither x − 10 nor a trained pair's shift, and its share,
    at one evaluation (NaN for a run recorded before the answer histogram was)."""
    cols = {s: f"{ANSWER_PREFIX}{s:+d}" for s in UNTRAINED_SHIFTS}
    if not all(c in last.index for c in cols.values()):
        return {"final_other_shift": float("nan"), "final_other_share": float("nan")}
    shift = max(cols, key=lambda s: (float(last[cols[s]]), -abs(s)))
    return {"final_other_shift": float(shift), "final_other_share": float(last[cols[shift]])}


def summarize(history: pd.DataFrame) -> dict[str, float]:
    """The per-run numbers the claims use. Anchor task: final and max-over-training OOD accuracy, t_mem,
    fit. Other tasks: final and max accuracy of every split, t_mem and the final parameter norm."""
    last = history.iloc[-1]
    if "acc/test_ood" not in history:
        out = {}
        for col in (c for c in history.columns if c.startswith("acc/")):
            split = col.split("/", 1)[1]
            out[f"final_{split}"] = float(last[col])
            out[f"max_{split}"] = float(history[col].max())
        return {**out, "t_mem": t_mem(history), "final_param_norm": float(last["param_norm"])}
    return {
        **other_rule(last),
        "final_ood": float(last["acc/test_ood"]),
        "max_ood": float(history["acc/test_ood"].max()),
        "final_id": float(last["acc/test_id"]),
        "final_train": float(last["acc/train"]),
        "final_trained_shift": float(last["trained_shift/test_ood"]),
        "t_mem": t_mem(history),
        "final_param_norm": float(last["param_norm"]),
    }


# ------------------------------------------------------------------ instrumentation (claim C13, spec §5)
# The paper names a "condensation index" and "subspace alignment" without defining them; these are the
# spec's proposals (§5), grounded in the precursor papers' analyses. Each has a unit test on a matrix
# whose answer is known.
KEY_TOKENS = range(KEY_MIN, KEY_MAX)  # ids of key/noise tokens, in numeric order
ANCHOR_TOKENS = tuple(SHIFTS)  # ids of the four anchors
CONDENSED_COS = 0.7  # [Z24] groups neurons whose input weights have |cos| above this


def _rows_cos(W: torch.Tensor) -> torch.Tensor:
    """|cos| between every pair of distinct rows, as a flat vector."""
    Wn = F.normalize(W.detach().double(), dim=1)
    c = (Wn @ Wn.T).abs()
    off = ~torch.eye(len(W), dtype=torch.bool)
    return c[off]


def condensation_index(W: torch.Tensor) -> float:
    """Mean |cos| between the input-weight vectors (rows) of distinct neurons: 1 when all rows are
    parallel (fully condensed), about sqrt(2/(π·d)) for random rows in d dimensions."""
    return float(_rows_cos(W).mean())


def condensed_fraction(W: torch.Tensor, threshold: float = CONDENSED_COS) -> float:
    """Share of neuron pairs whose input weights are nearly parallel (|cos| > threshold)."""
    return float((_rows_cos(W) > threshold).double().mean())


def stable_rank(W: torch.Tensor) -> float:
    """‖W‖_F² / ‖W‖_2² = Σ (s_i / s_max)²: between 1 (rank one) and rank(W) (flat spectrum)."""
    s = torch.linalg.svdvals(W.detach().double())
    return float(((s / s[0]) ** 2).sum()) if s[0] > 0 else 0.0


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def embedding_order(E: torch.Tensor, values: np.ndarray) -> float:
    """|Spearman ρ| between the first principal component of the centred embedding rows and the
    numbers they stand for: 1 when the embeddings lie on an ordered number line."""
    X = E.detach().double()
    X = X - X.mean(0, keepdim=True)
    pc1 = torch.linalg.svd(X, full_matrices=False).Vh[0]
    return abs(_spearman((X @ pc1).cpu().numpy(), np.asarray(values, dtype=float)))


def top_subspace(X: torch.Tensor, k: int, center: bool = True) -> torch.Tensor:
    """Orthonormal basis (d, k) of the top-k directions spanned by the rows of X (n, d)."""
    X = X.detach().double()
    if center:
        X = X - X.mean(0, keepdim=True)
    return torch.linalg.svd(X, full_matrices=False).Vh[:k].T


def subspace_alignment(U: torch.Tensor, V: torch.Tensor) -> float:
    """‖UᵀV‖_F² / min(k_U, k_V) for orthonormal bases U (d, k_U), V (d, k_V): 1 when the smaller
    subspace lies inside the other, 0 when they are orthogonal."""
    return float((U.double().T @ V.double()).pow(2).sum() / min(U.shape[1], V.shape[1]))


def logit_margin(logits: torch.Tensor, targets: torch.Tensor) -> float:
    """Mean of logit(target) − max other logit: > 0 when the answer wins (the theory's 'mass')."""
    tgt = logits.gather(1, targets[:, None])[:, 0]
    other = logits.scatter(1, targets[:, None], float("-inf")).max(1).values
    return float((tgt - other).double().mean())


@torch.no_grad()
def instrument(model: torch.nn.Module, tensors: dict[str, tuple[torch.Tensor, torch.Tensor]],
               logits: dict[str, torch.Tensor], k: int = 2) -> dict[str, float]:
    """The C13 measurements of the model's inside, for one evaluation step; `logits` are the
    evaluation's last-position logits per split (`evaluate(..., logits_out=...)`)."""
    was_training = model.training
    model.eval()
    C = model.cfg.d_model
    emb = model.tok_emb.weight
    keys = emb[list(KEY_TOKENS)]
    w_q1 = model.blocks[0].attn.qkv.weight[:C]  # rows: query neurons of layer 1
    w_v1 = model.blocks[0].attn.qkv.weight[2 * C:]
    ov1 = model.blocks[0].attn.proj.weight @ w_v1  # x -> W_O W_V x, layer 1
    x_ood, y_ood = tensors["test_ood"]
    h_ood = model.hidden(x_ood, last_only=True)[:, -1]
    anchors = emb[list(ANCHOR_TOKENS)]
    anchor_span = torch.linalg.qr((anchors[:-1] - anchors[-1]).double().T).Q  # (d, 3)
    out = {
        "ci/wq1": condensation_index(w_q1),
        "ci_frac/wq1": condensed_fraction(w_q1),
        "srank/wq1": stable_rank(w_q1),
        "srank/embed": stable_rank(keys),
        "order/embed": embedding_order(keys, np.array(KEY_TOKENS)),
        "align/embed_resid": subspace_alignment(top_subspace(keys, k), top_subspace(h_ood, k)),
        "align/anchor_ov": subspace_alignment(anchor_span, top_subspace(ov1, k, center=False)),
        "margin/test_ood": logit_margin(logits["test_ood"], y_ood),
        "margin/train": logit_margin(logits["train"], tensors["train"][1]),
    }
    model.train(was_training)
    return out
