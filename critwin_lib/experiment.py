"""Training runs into the results cache (`store`), one at a time or as sweeps on Dask distributed.

Before a sweep trains anything it checks that the results folder can take the runs and clears the temporary
folders of interrupted saves. Sweeps run on a Dask `LocalCluster` (one single-threaded worker process per
core) by default, or on an existing cluster given its scheduler address (`scheduler=` or
`$CRITWIN_SCHEDULER`). Workers only compute; the client writes the cache, so workers need no shared disk.
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm import tqdm

from critwin_lib import metrics, mkl_lever, paths
from critwin_lib.config import ConfigError, RunConfig, canonical_json, from_dict, to_dict
from critwin_lib.store import (  # noqa: F401 - the store's names, as callers have always found them here
    RESULTS_VERSION,
    DamagedRun,
    MissingResults,
    Result,
    ResultsNotWritable,
    Store,
    run_key,
)


class SweepFailed(RuntimeError):
    """Some runs of a sweep raised; the others were saved."""


# ---------------------------------------------------------------------------------------- runs
def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(paths.REPO), "describe", "--always", "--dirty", "--abbrev=40"],
                             capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def cpu_model() -> str:
    """The CPU's model name and whether it has AVX-512 (Linux), else what platform knows: long runs reproduce
    exactly only on the same kind of CPU."""
    try:
        info = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor() or platform.machine()
    name = next((ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), platform.machine())
    flags = next((ln.split(":", 1)[1].split() for ln in info if ln.startswith("flags")), [])
    return f"{name}, {'AVX-512' if 'avx512f' in flags else 'no AVX-512'}"


def _meta(cfgs: Sequence[RunConfig], wall_s: float, device: str, applied: dict[str, Any]) -> dict[str, Any]:
    import torch

    cfg = cfgs[0]
    return {
        "wall_s": round(wall_s / len(cfgs), 2),  # an ensemble's members share its time
        "steps": cfg.train.steps,
        "batch_size": cfg.train.batch_size,
        "n_layer": cfg.model.n_layer,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "host": platform.node(),
        "cpu": cpu_model(),
        "device": device,
        **({"ensemble": len(cfgs)} if len(cfgs) > 1 else {}),
        "pid": os.getpid(),
        **applied,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def execute(cfg_dict: dict[str, Any], compile: bool | None = None, progress: bool = False,
            device: str | None = "cpu") -> tuple[dict[str, list], dict[str, Any]]:
    """Train one run (in this process, or on a Dask worker) and return (history columns, meta)."""
    from critwin_lib.speed import configure_process
    from critwin_lib.train import resolve_device, train

    applied = configure_process()
    cfg = from_dict(cfg_dict)
    dev = resolve_device(device)
    t0 = time.time()
    history = train(cfg, compile=compile, progress=progress, device=dev)
    diverged = history.attrs.get("diverged_at")
    meta = _meta([cfg], time.time() - t0, dev.type, applied) | ({"diverged_at": diverged} if diverged is not None
                                                                 else {})
    return history.to_dict(orient="list"), meta


def execute_many(cfg_dicts: list[dict[str, Any]], compile: bool | None = None, device: str | None = "cpu"
                 ) -> list[tuple[dict[str, list], dict[str, Any]]]:
    """Train a unit of work: one run alone, or several compatible runs as one ensemble (`ensemble`)."""
    if len(cfg_dicts) == 1:
        return [execute(cfg_dicts[0], compile, device=device)]
    from critwin_lib.ensemble import train_ensemble
    from critwin_lib.speed import configure_process
    from critwin_lib.train import resolve_device

    applied = configure_process()
    cfgs = [from_dict(d) for d in cfg_dicts]
    dev = resolve_device(device)
    t0 = time.time()
    histories = train_ensemble(cfgs, device=dev)
    meta = _meta(cfgs, time.time() - t0, dev.type, applied)
    return [(h.to_dict(orient="list"), meta) for h in histories]


def where_to_train(device: str | None = None, ensemble: int | None = None) -> tuple[str, int]:
    """(device, ensemble size) of a sweep. device None: $CRITWIN_DEVICE, else "auto" (CUDA where torch sees a
    GPU). ensemble None: $CRITWIN_ENSEMBLE, else 64 runs per batched model on a GPU and 1 (solo runs, one per
    worker) on the CPU, where `make bench` finds that batching does not pay."""
    from critwin_lib.train import resolve_device

    dev = resolve_device(device).type
    if ensemble is None:
        ensemble = int(os.environ.get("CRITWIN_ENSEMBLE") or (GPU_ENSEMBLE if dev == "cuda" else 1))
    if ensemble < 1:
        raise ValueError(f"ensemble: must be at least 1 run per batched model, got {ensemble}")
    return dev, ensemble


GPU_ENSEMBLE = 64


def run(cfg: RunConfig, root: str | os.PathLike, train_missing: bool = True, compile: bool | None = None,
        progress: bool = False, device: str | None = None) -> Result:
    """Load the run from the store, or train it here and store it (`progress`: a bar over its steps;
    `device`: as `where_to_train`)."""
    store = Store(root)
    key = run_key(cfg)
    if store.has(key):
        return store.load(key)
    if not train_missing:
        raise MissingResults(f"run {key} is not in {store.runs}; run `make reproduce` to train it")
    columns, meta = execute(to_dict(cfg), compile, progress, device=where_to_train(device, 1)[0])
    return store.save(cfg, pd.DataFrame(columns), {**meta, "git": git_commit()})


def _client(workers: int, scheduler: str | None):
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler, timeout="30s"), None
    with mkl_lever.preloaded():  # the workers start with the AVX-512 shim where it applies (mkl_lever)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
    return Client(cluster), cluster


@dataclass
class Sweep:
    """What a sweep gives back: results in the order of the configs (None where a run failed)."""

    results: list[Result | None]
    failures: list[tuple[RunConfig, str]] = field(default_factory=list)


def _where(workers: int | None, scheduler: str | None) -> tuple[int, str | None]:
    """Worker processes (None or -1: one per core) and the scheduler address (default $CRITWIN_SCHEDULER)."""
    cores = os.cpu_count() or 1
    if isinstance(workers, bool) or (workers is not None and not isinstance(workers, int)):
        raise ConfigError(f"workers: must be a whole number of worker processes, got {workers!r}")
    if workers is not None and workers > MAX_WORKERS_PER_CORE * cores:
        raise ConfigError(f"workers: at most {MAX_WORKERS_PER_CORE * cores} worker processes on this machine "
                          f"({cores} cores; -1 starts one per core), got {workers}")
    workers = cores if workers is None or workers < 0 else workers
    return workers, scheduler or os.environ.get("CRITWIN_SCHEDULER") or None


MAX_WORKERS_PER_CORE = 2  # more single-threaded workers than this per core only slows every run


def sweep(cfgs: Sequence[RunConfig], root: str | os.PathLike, workers: int | None = None,
          scheduler: str | None = None, train_missing: bool = True, compile: bool | None = None,
          allow_failures: bool = False, progress: bool = True, client=None, device: str | None = None,
          ensemble: int | None = None) -> Sweep:
    """Make sure every config has a stored result, training the missing ones in parallel.

    workers: Dask worker processes of the local cluster (None or -1: one per core; 0: train here, serially).
    scheduler: address of an existing Dask scheduler (default `$CRITWIN_SCHEDULER`), instead of a local one.
    client: a connected `distributed.Client` to use (and leave open) instead of either.
    device, ensemble: where runs train and how many share one batched model (`where_to_train`); on a local
    GPU the runs train in this process, ensemble after ensemble.
    Raises `MissingResults` before any training when runs are missing and `train_missing` is False,
    and `SweepFailed` at the end when a run raised (the others are stored) unless `allow_failures`.
    """
    store = Store(root)
    keys = [run_key(c) for c in cfgs]
    todo = {k: c for k, c in zip(keys, cfgs, strict=True) if not store.has(k)}
    workers, scheduler = _where(workers, scheduler)
    if todo and not train_missing:
        named = ", ".join(list(todo)[:3]) + (", ..." if len(todo) > 3 else "")
        raise MissingResults(f"{len(todo)} of {len(set(keys))} runs are not in {store.runs} ({named}); "
                             f"run `make reproduce` to train them")
    failures: list[tuple[RunConfig, str]] = []
    if todo:
        store.check_writable(len(todo))
        store.clear_stale()
        dev, size = where_to_train(device, ensemble)
        if dev == "cuda" and not scheduler and client is None:
            workers = 0  # one GPU: this process feeds it, one ensemble at a time
        units = _units(list(todo.values()), size)
        where = "the given cluster" if client is not None else (f"cluster {scheduler}" if scheduler else None)
        how = f" ({dev}{f', ensembles of up to {size} runs' if size > 1 else ''})" if dev != "cpu" or size > 1 else ""
        _print_estimate(store, list(todo.values()), len(set(keys)), workers, where, how=how)
        commit = git_commit()
        bar = tqdm(total=len(todo), desc="runs", unit="run", disable=not progress, file=sys.stderr,
                   mininterval=5)
        if workers == 0 and not scheduler and client is None:
            for unit in units:
                try:
                    for cfg, (columns, meta) in zip(unit, execute_many([to_dict(c) for c in unit], compile, dev),
                                                    strict=True):
                        store.save(cfg, pd.DataFrame(columns), {**meta, "git": commit})
                except ResultsNotWritable:  # the disk is full: the sweep stops, what is stored stays
                    raise
                except Exception as e:  # noqa: BLE001 - reported with its config, the sweep goes on
                    failures.extend((cfg, f"{type(e).__name__}: {e}") for cfg in unit if not store.has(run_key(cfg)))
                bar.update(len(unit))
        else:
            failures = _run_on_dask(store, units, min(workers, len(units)), scheduler, compile, commit, bar, client,
                                    dev)
        bar.close()
    for cfg, err in failures:
        print(f"run {run_key(cfg)} failed: {err}\n  config: {canonical_json(cfg)}", file=sys.stderr)
    if failures and not allow_failures:
        raise SweepFailed(f"{len(failures)} of {len(todo)} runs failed (first: {failures[0][1]}); "
                          "the other runs are stored, re-running the sweep retries only what is missing")
    loaded = {k: store.load(k) for k in set(keys) if store.has(k)}
    return Sweep([loaded.get(k) for k in keys], failures)


def _units(todo: list[RunConfig], size: int) -> list[list[RunConfig]]:
    """The sweep's units of work: single runs, or ensembles of up to `size` compatible runs."""
    if size <= 1:
        return [[c] for c in todo]
    from critwin_lib.ensemble import chunks

    return chunks(todo, size)


def _run_on_dask(store: Store, units: list[list[RunConfig]], workers: int, scheduler: str | None,
                 compile: bool | None, commit: str | None, bar, client=None, device: str = "cpu"
                 ) -> list[tuple[RunConfig, str]]:
    from distributed import as_completed

    failures: list[tuple[RunConfig, str]] = []
    own = client is None
    cluster = None
    if own:
        client, cluster = _client(workers, scheduler)
    futures: dict = {}
    try:
        futures = {client.submit(execute_many, [to_dict(c) for c in unit], compile, device,
                                 key=f"critwin-{run_key(unit[0])}-x{len(unit)}", pure=False): unit
                   for unit in units}
        for fut in as_completed(futures):
            unit = futures[fut]
            try:
                for cfg, (columns, meta) in zip(unit, fut.result(), strict=True):
                    store.save(cfg, pd.DataFrame(columns), {**meta, "git": commit})
            except ResultsNotWritable:  # the disk is full: the queued runs are cancelled below, what is stored stays
                raise
            except Exception as e:  # noqa: BLE001 - a failed run is reported, the sweep goes on
                failures.extend((cfg, f"{type(e).__name__}: {e}") for cfg in unit if not store.has(run_key(cfg)))
            bar.update(len(unit))
    finally:  # on an interrupt: stop what is still queued or running (a remote cluster would go on)
        client.cancel([f for f in futures if not f.done()])
        if own:
            client.close()
        if cluster is not None:
            cluster.close()
    return failures


def _print_estimate(store: Store, todo: list[RunConfig], total: int, workers: int, where: str | None,
                    label: str = "sweep", note: str = "", how: str = "") -> None:
    """One line before training: how many runs, and roughly how long (from this store's measured speed)."""
    measured = store.measured_ms_per_step()
    seconds = sum(store.ms_per_step(c, measured) * c.train.steps / 1000 for c in todo)
    lanes = None if where else max(1, min(workers, len(todo)))
    where = where or f"{lanes} worker{'s' * (lanes != 1)}"
    wall = f"~{seconds / lanes / 60:.1f} min" if lanes else f"~{seconds / 60:.1f} worker-min"
    print(f"{label}: {total} runs, {total - len(todo)} stored, {len(todo)} to train on {where}{how}: {wall} "
          f"(estimate{note})", file=sys.stderr)


def print_plan(cfgs: Sequence[RunConfig], root: str | os.PathLike, workers: int | None = None,
               scheduler: str | None = None, label: str = "plan", note: str = "", again: bool = False) -> int:
    """The estimate line for a set of runs before anything starts (`again`: all of them are trained again, stored
    or not, as `verify` does); returns how many will train."""
    store = Store(root)
    unique = {run_key(c): c for c in cfgs}
    todo = [c for k, c in unique.items() if again or not store.has(k)]
    workers, scheduler = _where(workers, scheduler)
    _print_estimate(store, todo, len(unique), workers, f"cluster {scheduler}" if scheduler else None, label, note)
    return len(todo)


# -------------------------------------------------------------------------------------- frames
def frame(results: Sequence[Result | None], labels: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Long frame of all histories, each row tagged with its run's labels and key."""
    parts = [r.history.assign(key=r.key, **lab) for r, lab in zip(results, labels, strict=True) if r is not None]
    return pd.concat(parts, ignore_index=True)


def summaries(results: Sequence[Result | None], labels: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """One row per run: its labels and `metrics.summarize` of its history."""
    rows = [{**lab, "key": r.key, **metrics.summarize(r.history)} for r, lab in zip(results, labels, strict=True)
            if r is not None]
    return pd.DataFrame(rows)
