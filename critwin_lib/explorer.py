"""The explorer for Jupyter: choose window start, window length, γ, λ and seed; a cell already in the
cache is drawn at once, one that is not can be trained live at the smoke or quick size (with a
progress bar) and is then added to the cache, so the next person gets it instantly.

The logic (`cell_config`, `cell_frames`, `lookup`) is plain functions; `explorer()` only wires
ipywidgets to them, so the behaviour is testable without a browser.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from critwin_lib import checks, config, experiment, protocol, sizes
from critwin_lib.schedules import schedule_frame

LIVE_PROFILES = ("smoke", "quick")  # sizes the explorer may train on the spot
SPLITS = {"acc/train": "train pairs", "acc/test_id": "held-out keys (ID)", "acc/test_ood": "unseen pair (4,3)"}


def cell_config(profile: str, window_start_frac: float, window_frac: float, gamma: float, lam: float,
                seed: int, protocol_name: str = protocol.DEFAULT_PROTOCOL) -> config.RunConfig:
    """The run of one explorer cell: λ inside one window [start, start + length) of the run, 0 elsewhere
    (λ = 0: no weight decay). Every value is checked; a bad one raises ConfigError naming it."""
    if profile not in LIVE_PROFILES:
        raise config.ConfigError(f"profile: the explorer trains at {LIVE_PROFILES} only, got {profile!r}")
    protocol.get_protocol(protocol_name, "protocol_name")
    checks.non_negative(lam, "lambda")
    checks.seed(seed)
    P = sizes.get_profile(profile)
    window = protocol.window(P, window_start_frac, window_frac, float(lam))
    wd = config.WDSchedule.none() if lam == 0 else window
    return protocol.anchor_run(P, seed, wd, gamma=gamma, protocol=protocol_name)


def lookup(cfg: config.RunConfig, results_dir: str | Path) -> experiment.Result | None:
    """The cached run of a cell, or None."""
    store = experiment.Store(results_dir)
    key = experiment.run_key(cfg)
    return store.load(key) if store.has(key) else None


def cell_frames(result: experiment.Result) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(accuracy curves in long form: step, split, accuracy; λ(t) as a step function) of one run."""
    h = result.history
    curves = h.melt(id_vars=["step"], value_vars=list(SPLITS), var_name="metric", value_name="accuracy")
    curves["split"] = curves["metric"].map(SPLITS)
    sched = schedule_frame({"λ(t)": result.config.wd}, result.config.train.steps)
    return curves, sched


def cell_chart(result: experiment.Result, title: str) -> Any:
    import altair as alt

    curves, sched = cell_frames(result)
    top = alt.Chart(curves).mark_line(strokeWidth=2).encode(
        x=alt.X("step:Q", title="training step"),
        y=alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), title="accuracy"),
        color=alt.Color("split:N", sort=list(SPLITS.values()), title=None),
        tooltip=["split:N", "step:Q", alt.Tooltip("accuracy:Q", format=".3f")],
    ).properties(title=title, width=520, height=220)
    bottom = alt.Chart(sched).mark_line(interpolate="step-after", color="#555").encode(
        x=alt.X("step:Q", title="training step"), y=alt.Y("lambda:Q", title="λ(t)"),
    ).properties(width=520, height=80)
    return alt.vconcat(top, bottom)


def describe(cfg: config.RunConfig, result: experiment.Result | None, results_dir: str | Path) -> str:
    """One line about a cell: its key, and its fate or how long training it would take (from the speed
    measured on the cache's runs, as sweep estimates are)."""
    key = experiment.run_key(cfg)
    if result is None:
        ms = experiment.Store(results_dir).ms_per_step(cfg)
        seconds = cfg.train.steps * ms / 1000
        took = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
        return f"run {key} is not in the cache: press 'train this cell' (about {took} on one core)"
    last = result.history.iloc[-1]
    return (f"run {key} (cached): final OOD accuracy {last['acc/test_ood']:.2f}, max "
            f"{result.history['acc/test_ood'].max():.2f}, train {last['acc/train']:.2f}")


def live() -> bool:
    """Whether this kernel is one a person works in, not a run that builds the static book (`notebooks.execute`
    sets CRITWIN_ALTAIR_MODE=vendored there, and the book drops the widget's cell output)."""
    return os.environ.get("CRITWIN_ALTAIR_MODE") != "vendored"


def explorer(results_dir: str | Path = "../results", profile: str = "quick") -> Any:
    """The widget: sliders for window start, window length, γ, λ and seed, a profile choice and a train button."""
    import ipywidgets as w
    from IPython.display import display

    from critwin_lib import plotting

    plotting.setup()  # charts render offline in JupyterLab too
    style = {"description_width": "120px"}
    start = w.FloatSlider(value=0.375, min=0.0, max=0.75, step=0.125, description="window start", style=style)
    length = w.FloatSlider(value=0.25, min=0.125, max=1.0, step=0.125, description="window length", style=style)
    gamma = w.FloatSlider(value=1.0, min=0.5, max=1.5, step=0.1, description="γ", style=style)
    lam = w.FloatSlider(value=protocol.get_protocol(protocol.DEFAULT_PROTOCOL).window_lambda, min=0.0, max=12.0,
                        step=0.5, description="λ in window", style=style)
    seed = w.IntSlider(value=0, min=0, max=11, description="seed", style=style)
    prof = w.Dropdown(options=list(LIVE_PROFILES), value=profile, description="profile", style=style)
    button = w.Button(description="train this cell")  # no icon: its font would be fetched from outside the book
    status = w.HTML()
    progress = w.Output()
    out = w.Output()

    def current() -> config.RunConfig:
        return cell_config(prof.value, start.value, length.value, round(gamma.value, 3), lam.value, seed.value)

    def refresh(*_: Any) -> None:
        out.clear_output(wait=True)
        try:
            cfg = current()
        except config.ConfigError as e:
            status.value, button.disabled = f"<b>not a valid cell</b>: {e}", True
            return
        result = lookup(cfg, results_dir)
        status.value, button.disabled = describe(cfg, result, results_dir), result is not None
        if result is not None:
            with out:
                display(cell_chart(result, f"{cfg.wd.label}, γ = {gamma.value:.1f}, seed {seed.value}"))

    def train(_: Any) -> None:
        button.disabled = True
        progress.clear_output()
        with progress:  # the bar stays above the chart once the run is stored
            experiment.run(current(), results_dir, progress=True)
        refresh()

    for control in (start, length, gamma, lam, seed, prof):
        control.observe(refresh, names="value")
    button.on_click(train)
    refresh()
    return w.VBox([w.HBox([w.VBox([start, length, gamma]), w.VBox([lam, seed, prof])]), w.HBox([button, status]),
                   progress, out])
