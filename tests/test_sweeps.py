"""Sweeps on real Dask processes: a scheduler and workers started here, a worker killed mid-sweep, and a
client interrupted mid-sweep. Nothing finished is lost and re-running trains only what is missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from critwin_lib import config, experiment
from critwin_lib.experiment import Store, run_key

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def short_runs(n: int, steps: int = 400) -> list[config.RunConfig]:
    """Runs of a second or two each."""
    return [config.RunConfig(task=config.AnchorTask(n_train_per_pair=64, n_eval=64),
                             model=config.ModelConfig(init_gamma=2.0),
                             train=config.TrainConfig(steps=steps, batch_size=32, lr=1e-3, warmup_steps=10,
                                                      eval_every=200, seed=s)) for s in range(n)]


def wait_until(cond, timeout: float, what: str) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return
        time.sleep(0.2)
    pytest.fail(f"timed out waiting for {what}")


def assert_complete_once(root: Path, cfgs: list[config.RunConfig]) -> None:
    runs = root / "runs"
    names = sorted(p.name for p in runs.iterdir())
    assert [n for n in names if n.startswith(".")] == [], "temporary folders left behind"
    assert names == sorted({run_key(c) for c in cfgs})
    for key in names:
        assert {p.name for p in (runs / key).iterdir()} == {"config.json", "history.parquet", "meta.json",
                                                          "sha256.json"}


@pytest.fixture
def dask_cluster(tmp_path):
    """`dask scheduler` and two `dask worker` processes on 127.0.0.1 (no nanny: a killed worker stays dead)."""
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--no-dashboard", "--scheduler-file", str(sched_file)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    wait_until(sched_file.exists, 60, "the scheduler")
    import json

    address = json.loads(sched_file.read_text())["address"]
    for _ in range(2):
        procs.append(subprocess.Popen([str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-nanny",
                                       "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      start_new_session=True))
    from distributed import Client

    with Client(address, timeout="60s") as c:
        c.wait_for_workers(2, timeout=120)
    yield address, procs[1:]
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()


def test_sweep_on_a_scheduler_and_two_workers(tmp_path, dask_cluster):
    address, _ = dask_cluster
    cfgs = short_runs(6, steps=200)
    out = experiment.sweep(cfgs, tmp_path / "res", scheduler=address, progress=False)
    assert [r.config for r in out.results] == cfgs and out.failures == []
    assert_complete_once(tmp_path / "res", cfgs)
    assert len({r.meta["pid"] for r in out.results}) == 2  # both workers trained
    assert all(r.meta["pid"] != os.getpid() for r in out.results)


def test_a_worker_killed_mid_sweep_loses_nothing(tmp_path, dask_cluster):
    address, workers = dask_cluster
    root = tmp_path / "res"
    cfgs = short_runs(8)
    done: dict = {}
    thread = threading.Thread(target=lambda: done.setdefault(
        "sweep", experiment.sweep(cfgs, root, scheduler=address, progress=False, allow_failures=True)))
    thread.start()
    wait_until(lambda: len(Store(root).keys()) >= 1, 300, "a first finished run")
    os.killpg(workers[0].pid, signal.SIGKILL)
    assert len(Store(root).keys()) < len(cfgs)  # the kill really came mid-sweep
    thread.join(600)
    assert not thread.is_alive()
    stored = len(Store(root).keys())
    assert stored >= 1
    again = experiment.sweep(cfgs, root, scheduler=address, progress=False)  # the surviving worker finishes it
    assert again.failures == [] and all(r is not None for r in again.results)
    assert_complete_once(root, cfgs)


INTERRUPTED_SWEEP = """
import signal
import sys
# Ctrl-C as in a terminal: a child inherits an ignored or blocked SIGINT from whatever ran before it in the
# test process, so the default disposition is restored first (and what was inherited is reported).
print("inherited SIGINT:", signal.getsignal(signal.SIGINT), signal.pthread_sigmask(signal.SIG_BLOCK, []),
      file=sys.stderr, flush=True)
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
signal.signal(signal.SIGINT, signal.default_int_handler)
from critwin_lib import experiment
sys.path.insert(0, {tests!r})
from test_sweeps import interrupted_runs
experiment.sweep(interrupted_runs(), {root!r}, workers=2, progress=False)
"""


def interrupted_runs() -> list[config.RunConfig]:
    """Enough work after the first two runs (about 12 s on two workers) that the interrupt lands mid-sweep even
    on a loaded machine."""
    return short_runs(10, steps=800)


def test_an_interrupted_client_resumes_with_only_the_missing_runs(tmp_path, capfd):
    root = tmp_path / "res"
    cfgs = interrupted_runs()
    script = INTERRUPTED_SWEEP.format(tests=str(Path(__file__).parent), root=str(root))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_until(lambda: len(Store(root).keys()) >= 2, 300, "two finished runs")
    proc.send_signal(signal.SIGINT)  # Ctrl-C in the client
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and b"KeyboardInterrupt" in err, (proc.returncode, err.decode()[-2000:])
    stored = len(Store(root).keys())
    assert 2 <= stored < len(cfgs)
    assert [p for p in (root / "runs").iterdir() if p.name.startswith(".")] == []
    capfd.readouterr()
    experiment.sweep(cfgs, root, workers=0, progress=False)
    assert f"{len(cfgs)} runs, {stored} stored, {len(cfgs) - stored} to train" in capfd.readouterr().err
    assert_complete_once(root, cfgs)
