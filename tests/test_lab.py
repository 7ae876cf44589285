"""The live explorer in a real JupyterLab, driven by headless Chromium as a user would: start the server on a free
local port with a token, open `x01_explorer.ipynb` (at the smoke size, on a scratch results folder holding a few
runs), run all cells, move the window-start slider to a stored cell (the chart changes, nothing is trained), then
pick a missing cell, press the train button, and see the progress bar, the chart and the new run in the folder.
The server is shut down in every case."""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from critwin_lib import experiment, explorer, mkl_lever

from .conftest import REPO, wait_for

pytestmark = pytest.mark.slow

CLAIM = "c04b_window_vs_fitting"  # a claim notebook run in JupyterLab at smoke
GRID = {"profile": "smoke", "n_seeds": 1, "gammas": [1.0], "onset_fracs": [0.0, 0.5], "theory_seeds": 2,
        "workers": 0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server on 127.0.0.1 serving a scratch folder with the parameterized explorer notebook."""
    import papermill as pm

    work, results = tmp_path / "work", tmp_path / "results"
    work.mkdir()
    pm.execute_notebook(str(REPO / "notebooks" / "x01_explorer.ipynb"), str(work / "x01_explorer.ipynb"),
                        parameters={**GRID, "results_dir": str(results)}, prepare_only=True, progress_bar=False)
    pm.execute_notebook(str(REPO / "notebooks" / f"{CLAIM}.ipynb"), str(work / f"{CLAIM}.ipynb"), progress_bar=False,
                        parameters={"profile": "smoke", "results_dir": str(results), "workers": 0}, prepare_only=True)
    for start in (0.375, 0.5):  # two stored cells of the live explorer
        experiment.run(explorer.cell_config("smoke", start, 0.25, 1.0, 6.0, 0), results)
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CRITWIN_ALTAIR") and k != "CRITWIN_VENDOR_BASE"}
    env.update({"JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "jrun"),
                "IPYTHONDIR": str(tmp_path / "ipython")})
    cmd = [sys.executable, "-m", "critwin_lib.mkl_lever", "exec",  # as `make lab` starts it
           str(Path(sys.executable).parent / "jupyter-lab"), "--no-browser", "--ServerApp.ip=127.0.0.1",
           f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
           f"--ServerApp.root_dir={work}", f"--LabApp.workspaces_dir={tmp_path / 'ws'}",
           f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
           *(["--allow-root"] if os.geteuid() == 0 else [])]
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115 - closed below, after the server
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        end = time.time() + 120
        while True:
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None or time.time() > end:
                    pytest.fail("JupyterLab did not start:\n" + (tmp_path / "lab.log").read_text()[-3000:])
                time.sleep(0.5)
        yield base, token, results
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _click(browser, element) -> None:
    from selenium.webdriver import ActionChains

    ActionChains(browser).move_to_element(element).click().perform()


def _menu(browser, top: str, item: str) -> None:
    bar = wait_for(browser, f"return [...document.querySelectorAll('.lm-MenuBar-itemLabel')]"
                            f".find(e => e.textContent.trim() === '{top}')")
    _click(browser, bar)
    entry = wait_for(browser, f"return [...document.querySelectorAll('.lm-Menu-itemLabel')]"
                              f".find(e => e.textContent.trim() === '{item}')")
    _click(browser, entry)


def _slider_handle(browser, label: str):
    return wait_for(browser, "return [...document.querySelectorAll('.widget-slider')].find(s => "
                             f"s.querySelector('.widget-label')?.textContent.trim() === '{label}')"
                             "?.querySelector('.noUi-handle')")


def _step_right(browser, label: str) -> None:
    from selenium.webdriver.common.keys import Keys

    handle = _slider_handle(browser, label)
    _click(browser, handle)
    handle.send_keys(Keys.ARROW_RIGHT)


STATUS = ("([...document.querySelectorAll('.widget-html-content')].map(e => e.textContent)"
          ".find(t => t.startsWith('run ')) || '')")  # the explorer's status line
CHART = ("const v = [...document.querySelectorAll('.widget-output .vega-embed')].pop()?.querySelector('canvas, svg');"
         "return v ? (v.tagName === 'CANVAS' ? v.toDataURL() : v.outerHTML) : null;")


def test_the_live_explorer_in_jupyterlab(lab, browser):
    base, token, results = lab
    browser.get(f"{base}/lab/tree/x01_explorer.ipynb?token={token}")
    wait_for(browser, "return document.querySelector('.jp-Notebook .jp-Cell') !== null", timeout=120)
    wait_for(browser, "return document.querySelector('.jp-Notebook-ExecutionIndicator, .jp-KernelStatus') !== null",
             timeout=60)
    time.sleep(2)  # the kernel connects
    _menu(browser, "Run", "Run All Cells")
    first = wait_for(browser, f"const t = {STATUS}; return t.includes('(cached)') ? t : null", timeout=240)
    before = wait_for(browser, CHART, timeout=60)
    stored = set(experiment.Store(results).keys())
    n_runs = len(stored)

    _step_right(browser, "window start")  # 0.375 -> 0.5: the other stored cell
    moved = wait_for(browser, f"const t = {STATUS}; return t.includes('(cached)') && t !== {first!r} ? t : null",
                     timeout=60)
    after = wait_for(browser, f"const c = (() => {{ {CHART} }})(); return c && c !== {before!r} ? c : null",
                     timeout=60)
    assert moved != first and after != before
    assert len(experiment.Store(results).keys()) == n_runs  # drawn from the cache, nothing trained

    _step_right(browser, "seed")  # seed 1: not stored
    wait_for(browser, f"return {STATUS}.includes('not in the cache')", timeout=60)
    button = wait_for(browser, "return [...document.querySelectorAll('button.widget-button')]"
                               ".find(b => b.textContent.includes('train this cell') && !b.disabled)")
    _click(browser, button)
    wait_for(browser, "return [...document.querySelectorAll('.widget-output')].some(o => "
                      "/train: 100%/.test(o.textContent))", timeout=180)
    wait_for(browser, f"return {STATUS}.includes('(cached)')", timeout=60)
    wait_for(browser, f"const c = (() => {{ {CHART} }})(); return c && c !== {after!r}", timeout=60)
    assert len(experiment.Store(results).keys()) == n_runs + 1
    (new,) = set(experiment.Store(results).keys()) - stored  # trained in the kernel, as `make lab` starts it
    assert experiment.Store(results).load(new).meta["mkl_avx512_shim"] == mkl_lever.verified()[0]
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE" and "chart error" in e["message"]]
    assert not errors, errors


def test_a_claim_notebook_runs_in_jupyterlab_at_smoke(lab, browser):
    base, token, _ = lab
    browser.get(f"{base}/lab/tree/{CLAIM}.ipynb?token={token}")
    wait_for(browser, "return document.querySelector('.jp-Notebook .jp-Cell') !== null", timeout=120)
    time.sleep(2)
    _menu(browser, "Run", "Run All Cells")
    failed = re.compile(r"Traceback|\w+Error:")
    text = wait_for(browser, "const t = [...document.querySelectorAll('.jp-OutputArea-output')].map(o => o.textContent)"
                             ".join('\\n'); return t.includes('Verdict:') || /Traceback|\\w+Error:/.test(t) ? t : null",
                    timeout=300)
    assert not failed.search(text), failed.search(text) and text[failed.search(text).start():][:400]
    assert wait_for(browser, "return document.querySelectorAll('.jp-OutputArea-output .vega-embed').length", timeout=60)
