"""Shared fixtures: tiny configs, and the smoke-profile execution of every claim notebook (done once)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from multiprocessing import get_context
from pathlib import Path

import pytest
import torch

from critwin_lib import config

REPO = Path(__file__).resolve().parent.parent
torch.set_num_threads(1)


@pytest.fixture
def tiny_cfg() -> config.RunConfig:
    """A run of a few seconds: small data, few steps."""
    return config.RunConfig(
        task=config.AnchorTask(n_train_per_pair=32, n_eval=32),
        model=config.ModelConfig(init_gamma=2.0),
        train=config.TrainConfig(steps=12, batch_size=16, lr=1e-3, warmup_steps=2, eval_every=4),
        wd=config.WDSchedule.window(4, 4, 0.5),
    )


CELL_TIMEOUT = 900  # s: a smoke cell, or a quick one on stored runs, takes seconds; a hung kernel fails the suite


def _execute_page(notebook: Path, out: Path, params: dict) -> str | None:
    """One page executed (in a worker process); the error it raised, or None."""
    from critwin_lib.notebooks import execute

    try:
        execute(notebook, out, params, log_output=False, cell_timeout=CELL_TIMEOUT)
    except Exception as e:  # noqa: BLE001 - handed back to the test that reads this page
        return f"{type(e).__name__}: {e}"
    return None


def execute_pages(out: Path, params: dict) -> dict[Path, str | None]:
    """Every page executed into `out` with `params`, two at a time (one per core), each in its own process:
    {notebook: the error it raised, or None}. Pages that share runs may both train one; the store keeps one sealed
    copy (test_cache)."""
    from critwin_lib.notebooks import claim_notebooks

    pages = claim_notebooks()
    with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1), mp_context=get_context("spawn")) as pool:
        return dict(zip(pages, pool.map(_execute_page, pages, repeat(out), repeat(params)), strict=True))


@pytest.fixture(scope="session")
def smoke_site(tmp_path_factory) -> Path:
    """Every claim notebook executed at the smoke profile into a copy of the book, which is then built
    exactly as `make html` builds the real one. Returns the copy's root."""
    root = tmp_path_factory.mktemp("site")
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "book", root / "book", ignore=shutil.ignore_patterns("claims", "_build"))
    errors = execute_pages(root / "book" / "claims", {"profile": "smoke", "results_dir": str(root / "results"),
                                                       "workers": 0})
    failed = {nb.stem: err for nb, err in errors.items() if err}
    assert not failed, failed
    jb = Path(sys.executable).parent / "jupyter-book"
    build = subprocess.run([str(jb), "build", str(root), "--all", "--warningiserror", "--nitpick", "--keep-going",
                            "--quiet"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    return root


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "Debian's chromium and chromium-driver are needed (make chromium installs them)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--window-size=1280,2000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    drv = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    yield drv
    drv.quit()


def requested_urls(drv) -> list[str]:
    import json

    urls = []
    for entry in drv.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def wait_for(drv, script: str, timeout: float = 30.0):
    end = time.time() + timeout
    while time.time() < end:
        value = drv.execute_script(script)
        if value:
            return value
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for: {script}")
