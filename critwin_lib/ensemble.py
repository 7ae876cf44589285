"""K runs that share shapes, trained as one batched model: what makes a GPU worth having for this project.

A claim's runs differ in seed, learning rate, weight-decay schedule and init scale, never in shapes. Stacking
the K runs' parameters along a leading axis and mapping the one-run loss over it with `torch.func.vmap` turns K
small matmuls into one large batched one. Each member keeps everything that makes it its own run: its init
(drawn on the CPU exactly as `train.build_model` draws it), its batch order (`train.batches` with its seed),
its lr(t) and λ(t), its gradient clipping and its optimizer state. The update is AdamW (decoupled decay) or
SGD with momentum (coupled L2) written out on the stacked tensors, step for step as torch's optimizers do it,
so an ensemble member's history equals the solo run's within floating-point tolerance (a test checks it in
float64). Evaluations run member by member through the solo code (`metrics.evaluate`), so every history
column means what it means for a solo run.

Only runs with the last-position objective and without `train.instrument` are batched; `compatible` says
which configs can share an ensemble (`group`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.func import functional_call, vmap
from tqdm import tqdm

from critwin_lib.config import RunConfig
from critwin_lib.metrics import evaluate
from critwin_lib.model import decay_groups
from critwin_lib.schedules import lr_at, wd_at
from critwin_lib.tasks import TaskData, make_task
from critwin_lib.train import batches, build_model, resolve_device

CLIP_EPS = 1e-6  # torch.nn.utils.clip_grad_norm_ divides by (norm + 1e-6)


def batchable(cfg: RunConfig) -> bool:
    """Whether a run can be a member of an ensemble: an answer-at-the-end task, no C13 instrumentation."""
    return cfg.task.name != "scan" and not cfg.train.instrument


def group(cfg: RunConfig) -> tuple:
    """Configs with equal groups can share an ensemble: same task and data, same shapes, same optimizer
    settings except the learning rate; seed, lr, init scale and λ schedule may differ."""
    m = cfg.model
    shapes = (m.n_layer, m.d_model, m.n_head, m.d_mlp, m.max_pos, m.vocab_size)
    return cfg.task, shapes, dataclasses.replace(cfg.train, seed=0, lr=1.0)


def compatible(cfgs: Sequence[RunConfig]) -> bool:
    return all(batchable(c) for c in cfgs) and len({group(c) for c in cfgs}) <= 1


def chunks(cfgs: Sequence[RunConfig], size: int) -> list[list[RunConfig]]:
    """Configs split into ensembles of at most `size` members, each of one group (first-seen order)."""
    by_group: dict[tuple, list[RunConfig]] = {}
    for c in cfgs:
        by_group.setdefault(group(c) if batchable(c) else ("solo", id(c)), []).append(c)
    return [members[i:i + size] for members in by_group.values() for i in range(0, len(members), size)]


def _stack(tensors: list[torch.Tensor]) -> torch.Tensor:
    return torch.stack([t.detach() for t in tensors])


def _per_member(values: Sequence[float], like: torch.Tensor) -> torch.Tensor:
    """A (K,) vector shaped to broadcast against a stacked parameter (K, ...)."""
    v = torch.tensor(values, dtype=like.dtype, device=like.device)
    return v.view(-1, *([1] * (like.dim() - 1)))


class Ensemble:
    """K compatible runs' stacked parameters and optimizer state on one device; `step` trains all K one step
    on their own batches, `member` loads one run's parameters into a solo model (for evaluation)."""

    def __init__(self, cfgs: Sequence[RunConfig], dtype: torch.dtype = torch.float32,
                 device: str | torch.device | None = None) -> None:
        if not cfgs or not compatible(cfgs):
            raise ValueError("ensemble: the runs differ in more than seed, lr, init scale and λ schedule "
                             "(or one uses SCAN or instrumentation); split them with ensemble.chunks")
        self.cfgs = list(cfgs)
        self.device = resolve_device(device)
        models = [build_model(c, dtype) for c in cfgs]  # each member's own init, drawn as a solo run draws it
        self.names = [n for n, _ in models[0].named_parameters()]
        self.params = {n: _stack([dict(m.named_parameters())[n] for m in models]).to(self.device).requires_grad_()
                       for n in self.names}
        decayed_ids = {id(p) for p in decay_groups(models[0], cfgs[0].train.wd_params)[0]}
        self.decayed = {n for n, p in models[0].named_parameters() if id(p) in decayed_ids}
        self.model = models[0].to(self.device)  # the shapes for functional_call, the vessel for one member
        buffers = dict(self.model.named_buffers())
        self.state = {n: (torch.zeros_like(p), torch.zeros_like(p)) for n, p in self.params.items()}

        def member_loss(p: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            logits = functional_call(self.model, {**p, **buffers}, (x,), {"last_only": True})
            return F.cross_entropy(logits[:, -1], y)

        self._losses = vmap(member_loss)

    def __len__(self) -> int:
        return len(self.cfgs)

    def step(self, step: int, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Train every member one step on its batch, x (K, B, T), y (K, B); return the K batch losses."""
        losses = self._losses(self.params, x, y)
        grads = torch.autograd.grad(losses.sum(), list(self.params.values()))  # members are independent
        with torch.no_grad():
            _update(self.params, dict(zip(self.names, grads, strict=True)), self.state, self.decayed, self.cfgs,
                    step)
        return losses.detach()

    @torch.no_grad()
    def member(self, k: int) -> torch.nn.Module:
        """The solo model holding member k's current parameters (the same module object for every k)."""
        for n, p in self.model.named_parameters():
            p.copy_(self.params[n][k])
        return self.model


def train_ensemble(cfgs: Sequence[RunConfig], task: TaskData | None = None, progress: bool = False,
                   dtype: torch.dtype = torch.float32, device: str | torch.device | None = None
                   ) -> list[pd.DataFrame]:
    """Train K compatible runs as one batched model; return their histories in the order of `cfgs`, each as
    `train.train` would give it for that config alone."""
    if not cfgs:
        return []
    ens = Ensemble(cfgs, dtype, device)
    dev, t, K = ens.device, cfgs[0].train, len(cfgs)
    task = task if task is not None else make_task(cfgs[0].task)
    x_train = torch.from_numpy(task.train_inputs).to(dev)
    y_train = torch.from_numpy(task.train_targets).to(dev)
    evals = {name: (torch.from_numpy(s.inputs).to(dev), torch.from_numpy(s.targets).to(dev))
             for name, s in task.splits.items()}
    orders = [batches(len(x_train), min(t.batch_size, len(x_train)), c.train.seed) for c in cfgs]

    rows: list[list[dict[str, float]]] = [[] for _ in cfgs]
    loss_sum = torch.zeros(K, dtype=torch.float64, device=dev)
    loss_n = 0
    bar = tqdm(total=t.steps, desc=f"train ×{K}", disable=not progress)
    for step in range(t.steps + 1):
        if step % t.eval_every == 0 or step == t.steps:
            mean_loss = (loss_sum / loss_n).tolist() if loss_n else [float("nan")] * K
            at = min(step, t.steps - 1)
            for k, c in enumerate(cfgs):
                row = {"step": step, "lr": lr_at(c.train, at), "wd": wd_at(c.wd, at), "loss/batch": mean_loss[k]}
                row.update(evaluate(ens.member(k), task, evals))
                rows[k].append(row)
            loss_sum.zero_()
            loss_n = 0
            bar.set_postfix({"best": f"{max(r[-1][task.headline] for r in rows):.2f}"})
        if step == t.steps:
            break
        idx = torch.from_numpy(np.stack([next(o).numpy() for o in orders])).to(dev)  # (K, B): own orders
        loss_sum += ens.step(step, x_train[idx], y_train[idx]).double()
        loss_n += 1
        bar.update(1)
    bar.close()
    return [pd.DataFrame(r) for r in rows]


def _update(params: dict[str, torch.Tensor], grads: dict[str, torch.Tensor],
            state: dict[str, tuple[torch.Tensor, torch.Tensor]], decayed: set[str],
            cfgs: Sequence[RunConfig], step: int) -> None:
    """One optimizer step for every member at once, as torch's AdamW / SGD would take it for each alone."""
    t = cfgs[0].train
    lrs = [lr_at(c.train, step) for c in cfgs]
    wds = [wd_at(c.wd, step) for c in cfgs]
    if t.grad_clip > 0:  # per member: the global norm over all of its parameters
        sq = sum(g.pow(2).flatten(1).sum(1) for g in grads.values())
        coef = (t.grad_clip / (sq.sqrt() + CLIP_EPS)).clamp(max=1.0)
        for g in grads.values():
            g.mul_(coef.view(-1, *([1] * (g.dim() - 1))))
    n = step + 1
    for name, p in params.items():
        g = grads[name]
        lr = _per_member(lrs, p)
        wd = _per_member(wds, p) if name in decayed else torch.zeros_like(lr)
        first, second = state[name]
        if t.optimizer == "sgd":  # coupled L2, then momentum (the buffer starts at the first gradient)
            g = g + wd * p
            if t.momentum > 0:
                if n == 1:
                    first.copy_(g)
                else:
                    first.mul_(t.momentum).add_(g)
                g = first
            p.sub_(lr * g)
            continue
        p.mul_(1 - lr * wd)  # AdamW: decoupled decay first
        first.lerp_(g, 1 - t.beta1)
        second.mul_(t.beta2).addcmul_(g, g, value=1 - t.beta2)
        step_size = lr / (1 - t.beta1 ** n)
        denom = (second.sqrt() / math.sqrt(1 - t.beta2 ** n)).add_(t.eps)
        p.sub_(step_size * first / denom)
