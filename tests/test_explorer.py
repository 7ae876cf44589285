"""The Jupyter explorer: cells map to runs, cached cells are drawn at once, missing ones train into the cache."""

import pytest

from critwin_lib import experiment, explorer, protocol
from critwin_lib.config import ConfigError


def test_a_cell_is_the_run_the_claims_use():
    cfg = explorer.cell_config("quick", 0.375, 0.25, 1.0, protocol.get_protocol(protocol.DEFAULT_PROTOCOL)
                               .window_lambda, 2)
    P = cfg.train
    assert cfg.wd.windows == ((2400, 4000, 6.0),) and P.seed == 2 and P.wd_params == "matrices"
    none = explorer.cell_config("quick", 0.375, 0.25, 1.0, 0.0, 2)
    assert none.wd.is_none and none.train.wd_params == "all"  # the shared no-weight-decay run


@pytest.mark.parametrize(("args", "name"), [(("paper", 0.375, 0.25, 1.0, 6.0, 0), "profile"),
                                            (("quick", 0.9, 0.25, 1.0, 6.0, 0), "window_start_frac"),
                                            (("quick", 0.375, 0.25, 0.0, 6.0, 0), "model.init_gamma"),
                                            (("quick", 0.375, 0.25, 1.0, -1.0, 0), "lambda"),
                                            (("quick", 0.375, 0.25, 1.0, 6.0, -3), "seed")])
def test_a_bad_cell_names_the_value(args, name):
    with pytest.raises(ConfigError, match=f"^{name}:"):
        explorer.cell_config(*args)


def test_a_missing_cell_trains_into_the_cache_and_is_then_found(tmp_path):
    cfg = explorer.cell_config("smoke", 0.25, 0.25, 1.0, 1.0, 0)
    assert explorer.lookup(cfg, tmp_path) is None
    assert "not in the cache" in explorer.describe(cfg, None, tmp_path)
    experiment.run(cfg, tmp_path, progress=True)
    found = explorer.lookup(cfg, tmp_path)
    assert found is not None and "(cached)" in explorer.describe(cfg, found, tmp_path)
    curves, sched = explorer.cell_frames(found)
    assert set(curves["split"]) == set(explorer.SPLITS.values())
    assert sched["lambda"].max() == 1.0 and sched["step"].max() == cfg.train.steps
    explorer.cell_chart(found, "t").to_dict()  # a valid Vega-Lite spec


def test_the_widget_builds_and_reacts(tmp_path):
    pytest.importorskip("ipywidgets")
    box = explorer.explorer(tmp_path, profile="smoke")
    sliders = box.children[0].children[0].children
    status = box.children[1].children[1]
    assert "not in the cache" in status.value
    sliders[0].value, sliders[1].value = 0.75, 0.5  # the window would end after the run
    assert "not a valid cell" in status.value and box.children[1].children[0].disabled


def test_the_static_explorer_has_two_sliders_that_select_the_cell():
    import numpy as np
    import pandas as pd

    from critwin_lib import plotting

    rows = [{"gamma": g, "window_start": ws, "condition": "window" if ws == ws else "none", "step": s,
             "mean": 0.5, "lo": 0.4, "hi": 0.6, "n": 4}
            for g in (0.5, 1.0, 1.5) for ws in (0.0, 800.0, np.nan) for s in (0, 100)]
    sched = pd.DataFrame([{"window_start": ws, "condition": "window", "step": t, "lambda": lam}
                          for ws in (0.0, 800.0) for t, lam in ((0, 0.0), (ws, 6.0), (ws + 800, 0.0), (6400, 0.0))])
    theory = pd.DataFrame([{"gamma": 1.0, "window_start": 800.0, "text": "theory: 12/12 reason"}])
    spec = plotting.window_gamma_chart(pd.DataFrame(rows), sched, "t", theory=theory).to_dict()
    params = {p["name"]: p for p in spec["params"]}
    assert params["explore_start"]["bind"]["max"] == 800.0 and params["explore_start"]["bind"]["step"] == 800.0
    assert params["explore_gamma"]["bind"]["min"] == 0.5 and params["explore_gamma"]["bind"]["step"] == 0.5
    text = str(spec)
    assert "explore_gamma" in text and "explore_start" in text and "theory: 12/12 reason" in text


def test_the_static_explorers_controls_stop_on_every_grid_value_and_an_empty_cell_says_so():
    """An even grid gets a slider whose step is the grid's exactly (0.1, not 0.10000000000000009); an uneven one (the
    book's γ) gets one button per value; a position of the controls without runs draws a line saying so."""
    import pandas as pd

    from critwin_lib import plotting

    even = plotting._range_slider("a", [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1], None, "γ ").param.to_dict()
    assert even["bind"]["input"] == "range" and even["bind"]["step"] == 0.1
    uneven = plotting._range_slider("b", [0.5, 0.7, 1.0, 1.1, 1.5], 1.0, "γ ").param.to_dict()
    assert uneven["bind"]["input"] == "radio" and uneven["bind"]["options"] == [0.5, 0.7, 1.0, 1.1, 1.5]
    rows = [{"gamma": g, "window_start": w, "condition": "window", "step": s, "mean": 0.5, "lo": 0.4, "hi": 0.6,
             "n": 2} for g, w in [(0.5, 0.0), (0.5, 800.0), (1.0, 0.0)] for s in (0, 100)]
    curves = pd.DataFrame(rows)
    sched = pd.DataFrame([{"window_start": w, "condition": "window", "step": s, "lambda": 1.0 if s else 0.0}
                          for w in (0.0, 800.0) for s in (0, 100)])
    spec = plotting.window_gamma_chart(curves, sched, title="t").to_json()
    assert "no runs at γ 1 with the window at step 800" in spec and "no runs at γ 0.5" not in spec
