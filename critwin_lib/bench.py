"""`make bench`: how fast critwin trains on this machine, measured as ratios within one run.

* ms per training step of the project's path (last-position shortcut, compiled loss, fused AdamW,
  one thread) and of `PlainTransformer`, the same model written the straightforward way (full
  forward with PyTorch's fused attention, default AdamW, eager), at batch 256 and 2048, 2 and 4 layers;
* achieved GFLOP/s of the project's path against this machine's measured large-matmul peak (1 thread);
* the glibc malloc tuning (`speed.tune_malloc`) on and off: in a fresh process, and in a Dask worker;
* the MKL AVX-512 lever (`mkl_lever`): whether it applies, and the step time with and without it in fresh
  processes;
* sweep throughput with 1 and with 2 Dask workers;
* runs per hour of ensembles (`ensemble`: K runs as one batched model) of K = 1, 8, 64, 256 on the device it
  finds (CUDA where torch sees one), against solo runs one per worker; written to `_build/bench.json`, from
  which `python -m critwin_lib.notebooks plan --profile paper` projects the time of the paper plan.

The last line is `bench: speedup_vs_eager=<x> peak_fraction=<y> sweep_scaling_2workers=<z> mkl_avx512_lever=<on|off>`
(batch 256, 2 layers; the project's step as a sweep runs it, i.e. with the lever where it applies, against
plain eager without it). Medians over interleaved rounds; the machine is noisy.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from critwin_lib import mkl_lever
from critwin_lib.config import AnchorTask, ModelConfig, RunConfig, TrainConfig, WDSchedule
from critwin_lib.sizes import get_profile
from critwin_lib.train import build_model, build_optimizer, training_step


# ------------------------------------------------------------------------------ the plain model
class PlainBlock(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        self.n_head = cfg.n_head
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.ModuleDict({"qkv": nn.Linear(d, 3 * d), "proj": nn.Linear(d, d)})
        self.mlp = nn.ModuleDict({"fc": nn.Linear(d, cfg.d_mlp), "proj": nn.Linear(cfg.d_mlp, d)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.attn["qkv"](self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(B, T, C)
        x = x + self.attn["proj"](y)
        return x + self.mlp["proj"](F.gelu(self.mlp["fc"](self.ln2(x))))


class PlainTransformer(nn.Module):
    """The paper's model as a user would first write it: every position through every layer."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_pos, cfg.d_model)
        self.blocks = nn.ModuleList(PlainBlock(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def plain_step_fn(cfg: RunConfig, x: torch.Tensor, y: torch.Tensor, dtype=torch.float32
                  ) -> tuple[PlainTransformer, torch.optim.Optimizer, Callable[[float, float], None]]:
    """A plain model initialised like the project's, its default AdamW, and one training step."""
    model = PlainTransformer(cfg.model).to(dtype)
    model.load_state_dict(build_model(cfg, dtype).state_dict())
    t = cfg.train
    opt = torch.optim.AdamW(model.parameters(), lr=t.lr, betas=(t.beta1, t.beta2), eps=t.eps, weight_decay=0.0)

    def step(lr: float, wd: float, xb=x, yb=y) -> None:
        for g in opt.param_groups:
            g["lr"], g["weight_decay"] = lr, wd
        loss = F.cross_entropy(model(xb)[:, -1], yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), t.grad_clip)
        opt.step()

    return model, opt, step


def project_step_fn(cfg: RunConfig, x: torch.Tensor, y: torch.Tensor, dtype=torch.float32, compile: bool = True
                    ) -> tuple[nn.Module, torch.optim.Optimizer, Callable[[float, float], None]]:
    """The project's path: `train.training_step` on the project's model and optimizer."""
    model = build_model(cfg, dtype)
    opt = build_optimizer(model, cfg)
    step = training_step(model, opt, cfg, compile)
    return model, opt, lambda lr, wd, xb=x, yb=y: step(lr, wd, xb, yb)


# ---------------------------------------------------------------------------------- measuring
def bench_cfg(batch: int, n_layer: int) -> RunConfig:
    return RunConfig(model=ModelConfig(n_layer=n_layer, init_gamma=2.0),
                     train=TrainConfig(steps=20_000, batch_size=batch, lr=3e-4), wd=WDSchedule.constant(0.1))


def flops_per_step(cfg: ModelConfig, batch: int, seq: int = 9, last_only: bool = True) -> float:
    """Matmul FLOPs of forward + backward (3 × forward) per step, counting the work actually done."""
    d, f, v = cfg.d_model, cfg.d_mlp, cfg.vocab_size
    full_layer = seq * (3 * d * d + d * d + 2 * d * f) + 2 * seq * seq * d
    last_layer = seq * 2 * d * d + (d * d + d * d + 2 * d * f) + 2 * seq * d if last_only else full_layer
    macs = (cfg.n_layer - 1) * full_layer + last_layer + d * v * (1 if last_only else seq)
    return 6.0 * macs * batch


def matmul_peak(n: int = 1024, reps: int = 7) -> float:
    """Single-thread fp32 GFLOP/s of a large square matmul."""
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    inner = max(1, int(4e9 // (2 * n**3)))
    torch.mm(a, b, out=c)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(inner):
            torch.mm(a, b, out=c)
        times.append((time.perf_counter() - t0) / inner)
    return 2 * n**3 / statistics.median(times) / 1e9


def step_times(configs: dict[str, Callable[[float, float], None]], batch_of: dict[str, int], rounds: int = 5,
               seconds: float = 1.5) -> dict[str, float]:
    """Median ms per step of each step function, timed round-robin so background load hits all alike."""
    for fn in configs.values():
        for _ in range(3):
            fn(3e-4, 0.1)
    times: dict[str, list[float]] = {k: [] for k in configs}
    for _ in range(rounds):
        for key, fn in configs.items():
            n = max(2, int(seconds / (batch_of[key] * 1e-4)))
            t0 = time.perf_counter()
            for _ in range(n):
                fn(3e-4, 0.1)
            times[key].append((time.perf_counter() - t0) / n * 1000)
    return {k: statistics.median(v) for k, v in times.items()}


LEVER_PAIRS = 5  # fresh-process pairs (without, with the shim) behind the lever's gain


def _child_step_ms(malloc_tune: bool, batch: int = 256, n_layer: int = 2, shim: bool = False) -> float:
    """ms per step of the project's path in a fresh process (with the MKL AVX-512 shim preloaded if `shim`)."""
    env = {**os.environ, "CRITWIN_MALLOC_TUNE": "1" if malloc_tune else "0",
           **(mkl_lever.environment() if shim else {})}
    if not shim:
        env.pop("LD_PRELOAD", None)
    out = subprocess.run([sys.executable, "-m", "critwin_lib.bench", "_child", str(batch), str(n_layer)], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["ms"]


def _child(batch: int, n_layer: int) -> None:
    from critwin_lib.speed import configure_process

    configure_process()
    cfg = bench_cfg(batch, n_layer)
    x, y = torch.randint(20, 100, (batch, 9)), torch.randint(4, 110, (batch,))
    _, _, fn = project_step_fn(cfg, x, y)
    print(json.dumps({"ms": step_times({"p": fn}, {"p": batch}, rounds=3)["p"]}))


def _set_env(key: str, value: str) -> None:  # runs on a worker (a bound os.environ method would not)
    os.environ[key] = value


def sweep_throughput(workers: int, n_runs: int, steps: int, malloc_tune: bool = True) -> float:
    """Runs per minute of a sweep of short runs (batch 256, eager) on a started local Dask cluster."""
    import logging

    from distributed import Client, LocalCluster

    from critwin_lib import experiment

    p = get_profile("quick")
    cfgs = [RunConfig(task=AnchorTask(**{**p.task, "n_eval": 256}), model=ModelConfig(init_gamma=2.0),
                      train=TrainConfig(steps=steps, batch_size=256, lr=3e-4, warmup_steps=10, eval_every=steps,
                                        seed=s)) for s in range(n_runs)]
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client, \
            tempfile.TemporaryDirectory() as root:
        client.run(lambda: __import__("critwin_lib.train"))  # imports done before the clock starts
        client.run(_set_env, "CRITWIN_MALLOC_TUNE", "1" if malloc_tune else "0")
        t0 = time.perf_counter()
        experiment.sweep(cfgs, root, client=client, compile=False, progress=False)
        return n_runs / (time.perf_counter() - t0) * 60


def ensemble_runs_per_hour(ks: tuple[int, ...] = (1, 8, 64, 256), device: str | None = None,
                           steps_per_run: int = 20_000, seconds: float = 3.0) -> dict[int, float]:
    """Runs per hour of one process training ensembles of K runs (batch 256, 2 layers; training steps only,
    evaluations excluded) on `device` (default: `train.resolve_device`)."""
    from critwin_lib.ensemble import Ensemble
    from critwin_lib.train import resolve_device

    dev = resolve_device(device)
    out = {}
    for k in ks:
        cfgs = [RunConfig(model=ModelConfig(init_gamma=2.0), wd=WDSchedule.constant(0.1),
                          train=TrainConfig(steps=steps_per_run, batch_size=256, lr=3e-4, seed=s)) for s in range(k)]
        ens = Ensemble(cfgs, device=dev)
        x = torch.randint(20, 100, (k, 256, 9), device=dev)
        y = torch.randint(4, 110, (k, 256), device=dev)
        for i in range(2):
            ens.step(i, x, y)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        n, t0 = 0, time.perf_counter()
        while n < 3 or time.perf_counter() - t0 < seconds:
            ens.step(n, x, y)
            n += 1
        if dev.type == "cuda":
            torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) / n * 1000
        out[k] = k * 3600 / (ms / 1000 * steps_per_run)
        print(f"ensemble of {k:3d} on {dev.type}: {ms:8.1f} ms per step of all {k}, "
              f"{out[k]:7.1f} runs of {steps_per_run} steps per hour (training steps only)", flush=True)
        if ms > MAX_STEP_MS and k != ks[-1]:
            print(f"larger ensembles not timed: a step of {k} already takes {ms / 1000:.1f} s on {dev.type}",
                  flush=True)
            break
    return out


MAX_STEP_MS = 2000  # an ensemble this slow per step only gets slower per run when larger (CPU)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "_child":
        return _child(int(argv[1]), int(argv[2]))
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sweep-runs", type=int, default=8)
    ap.add_argument("--sweep-steps", type=int, default=300)
    ap.add_argument("--ensembles", default="1,8,64,256", help="ensemble sizes K to time (comma-separated)")
    ap.add_argument("--only-ensembles", action="store_true", help="time the ensembles only (as on a GPU machine)")
    ap.add_argument("--out", type=Path, default=Path("_build/bench.json"))
    args = ap.parse_args(argv)
    ks = tuple(int(k) for k in args.ensembles.split(","))
    if args.only_ensembles:
        return _ensembles(ks, None, args.out)
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread per process, {os.cpu_count()} cores; {mkl_lever.cpu()}", flush=True)

    peak = matmul_peak()
    print(f"large-matmul peak (fp32, 1 thread, n=1024): {peak:.1f} GFLOP/s", flush=True)

    rows = []
    for n_layer in (2, 4):
        for batch in (256, 2048):
            cfg = bench_cfg(batch, n_layer)
            x, y = torch.randint(20, 100, (batch, 9)), torch.randint(4, 110, (batch,))
            fns = {"ours": project_step_fn(cfg, x, y)[2], "plain": plain_step_fn(cfg, x, y)[2]}
            ms = step_times(fns, {k: batch for k in fns}, rounds=args.rounds)
            gflops = flops_per_step(cfg.model, batch) / ms["ours"] / 1e6
            rows.append({"layers": n_layer, "batch": batch, "ours_ms": ms["ours"], "plain_ms": ms["plain"],
                         "speedup": ms["plain"] / ms["ours"], "ours_gflops": gflops, "peak_fraction": gflops / peak})
            r = rows[-1]
            print(f"layers {n_layer} batch {batch:5d}: ours {r['ours_ms']:8.2f} ms  plain eager {r['plain_ms']:8.2f} ms"
                  f"  speedup {r['speedup']:.2f}x  {r['ours_gflops']:.1f} GFLOP/s = {r['peak_fraction']:.0%} of peak",
                  flush=True)

    off = statistics.median(_child_step_ms(False) for _ in range(3))
    on = statistics.median(_child_step_ms(True) for _ in range(3))
    print(f"malloc tuning in a fresh process (batch 256, 2 layers, compiled): off {off:.2f} ms/step, "
          f"on {on:.2f} ms/step ({off / on:.2f}x)", flush=True)
    lever, why = mkl_lever.verified()
    head = next(r for r in rows if r["layers"] == 2 and r["batch"] == 256)
    swept_ms = head["ours_ms"]
    if lever:
        # five interleaved pairs: with three, one slow process once turned a 1.07x gain into 0.89x
        pairs = [(_child_step_ms(True), _child_step_ms(True, shim=True)) for _ in range(LEVER_PAIRS)]
        without, with_ = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
        swept_ms = head["ours_ms"] * with_ / without  # the in-process time, scaled by the shim's gain
        print(f"MKL AVX-512 lever: {why}; fresh process, batch 256, 2 layers: without {without:.2f} ms/step, "
              f"with {with_:.2f} ms/step ({without / with_:.2f}x); sweeps on a local cluster use it", flush=True)
    else:
        print(f"MKL AVX-512 lever: does not apply: {why}; sweeps run without it", flush=True)

    n, steps = args.sweep_runs, args.sweep_steps
    untuned = sweep_throughput(1, n, steps, malloc_tune=False)
    one = sweep_throughput(1, n, steps)
    two = sweep_throughput(2, n, steps)
    print(f"sweep throughput ({n} runs of {steps} steps, eager): 1 worker {one:.1f} runs/min "
          f"(malloc tuning off, Dask's defaults: {untuned:.1f}, so {one / untuned:.2f}x), "
          f"2 workers {two:.1f} runs/min", flush=True)

    scaling = two / one if one > 0 else math.nan
    per_worker = 3600 / (swept_ms / 1000 * 20_000)  # a sweep's worker: compiled, with the lever where it applies
    _ensembles(ks, per_worker * (scaling if (os.cpu_count() or 1) >= 2 else 1.0), args.out)
    print(f"bench: speedup_vs_eager={head['plain_ms'] / swept_ms:.2f} peak_fraction={head['peak_fraction']:.2f} "
          f"sweep_scaling_2workers={scaling:.2f} mkl_avx512_lever={'on' if lever else 'off'}")


def _ensembles(ks: tuple[int, ...], solo_per_hour: float | None, out: Path) -> None:
    """Time the ensembles, compare with solo runs on the workers (CPU), and write the rates for `plan`."""
    from critwin_lib.train import resolve_device

    dev = resolve_device().type
    rates = ensemble_runs_per_hour(ks)
    lanes = 1 if dev == "cuda" else min(2, os.cpu_count() or 1)
    best_k = max(rates, key=rates.get)
    best = rates[best_k] * lanes  # on the CPU one ensemble per worker
    line = f"ensembles on {dev}: best K = {best_k}, {best:.1f} paper-length runs per hour"
    if solo_per_hour is not None:
        verdict = "win" if best > solo_per_hour else "do not win"
        line += f" (solo runs on {lanes} workers: {solo_per_hour:.1f}; ensembles {verdict})"
    print(line, flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    choice = max(best, solo_per_hour or 0.0)
    out.write_text(json.dumps({"device": dev, "ensemble_runs_per_hour": {str(k): v for k, v in rates.items()},
                               "lanes": lanes, "solo_runs_per_hour": solo_per_hour,
                               "runs_per_hour": choice, "steps_per_run": 20_000,
                               "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1) + "\n")


if __name__ == "__main__":
    main()
