"""C13's contrast by fate (issue #10): reasoning against memorizing runs of one weight-decay exposure."""

import numpy as np
import pandas as pd
import pytest

from critwin_lib.claims import instrumentation
from critwin_lib.config import ConfigError


def _end(n_r: int, n_m: int, shift: float) -> pd.DataFrame:
    """End-of-training rows: reasoning runs have every predicted measurement moved by `shift` in the predicted
    direction (negative shift: the other way); a little spread so that the tests have something to permute."""
    from critwin_lib.claims import rules

    rng = np.random.default_rng(0)
    rows = []
    for fate, n in (("reasoning", n_r), ("memorizing", n_m)):
        for i in range(n):
            row = {"fate": fate, "seed": i}
            for k in instrumentation.C13_METRICS:
                move = shift * rules.C13_DIRECTION.get(k, 0) if fate == "reasoning" else 0.0
                row[k] = 1.0 + move + 0.01 * rng.standard_normal()
            rows.append(row)
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n, shift, state", [(12, 0.5, "holds"), (12, -0.5, "rejected"), (11, 0.5, "undecided")])
def test_fate_contrasts_decide_only_with_enough_runs_of_each_fate(n, shift, state):
    t = instrumentation.fate_contrasts(_end(n, n, shift), n_boot=200)
    parts = t.loc[t["part"] != "", "part"]
    assert len(parts) == 4 and set(parts) == {state}
    assert (t.loc["ci/wq1", "difference"] > 0) == (shift > 0)


def test_c13_placements_are_checked_before_any_training(tmp_path):
    with pytest.raises(ConfigError, match="^placements:"):
        instrumentation.c13(profile="smoke", n_seeds=2, gamma=1.0, placements={"late": 0.9}, window_frac=0.25,
                            results_dir=str(tmp_path / "results"))
    assert not (tmp_path / "results").exists()


@pytest.mark.parametrize("n_r, n_m, expect", [
    (40, 12, "both fates reach the floor of 12"),
    (33, 6, "memorizing is the rarer fate under a window (6 of 48 runs)"),
    (3, 30, "reasoning is the rarer fate under a window (3 of 48 runs)"),
    (40, 0, "no window run is memorizing"),
])
def test_the_floor_sentence_says_whether_the_floor_is_reached(n_r, n_m, expect):
    text = instrumentation.floor_text(n_r, n_m, 48)
    assert expect in text
    assert ("times as many" in text) == (0 < min(n_r, n_m) < instrumentation.C13_MIN_RUNS)


def test_holm_and_the_exposure_margin_let_c13s_parts_say_a_metric_tracks_weight_decay():
    """The four predicted parts are one Holm family; a fate difference whose 90 % interval lies within a tenth of
    the window-vs-none difference is rejected (the metric tracks exposure, not fate)."""
    import numpy as np
    import pandas as pd

    from critwin_lib import stats
    from critwin_lib.claims import instrumentation, rules

    assert stats.holm([0.01, 0.04, 0.03, float("nan")])[:3] == pytest.approx([0.03, 0.06, 0.06])
    rng = np.random.default_rng(0)
    rows = [{"fate": f, "condition": "w", **{k: float(rng.normal(0, 0.01)) for k in instrumentation.C13_METRICS}}
            for f in ["reasoning"] * 20 + ["memorizing"] * 20]
    end = pd.DataFrame(rows)
    flat = instrumentation.fate_contrasts(end, n_boot=500, exposure={k: 1.0 for k in instrumentation.C13_METRICS})
    assert set(flat.loc[list(rules.C13_DIRECTION), "part"]) == {rules.REJECTED}  # within ± 0.1 of a move of 1.0
    open_ = instrumentation.fate_contrasts(end, n_boot=500)
    assert set(open_.loc[list(rules.C13_DIRECTION), "part"]) == {rules.UNDECIDED}  # without a margin: undecided
