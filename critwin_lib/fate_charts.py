"""Charts of fates over seeds: how many seeds reach each fate per condition, and the share that reasons
against the window's onset with its exact interval. Styling comes from `plotting`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH

FATE_COLORS = {"reasoning": "#2ca02c", "memorizing": "#7f7f7f", "other rule": "#ff7f0e", "not fitted": "#d62728"}


def fate_chart(table: pd.DataFrame, order: list[str], title: str, x: str = "condition") -> alt.Chart:
    """Seeds of each fate per condition, stacked (`table`: a `fates.share_table`)."""
    cols = [f.replace(" ", "_") for f in FATE_COLORS]
    long = table[[x, *cols]].melt(id_vars=[x], value_vars=cols, var_name="fate", value_name="seeds")
    long["fate"] = long["fate"].str.replace("_", " ")
    return alt.Chart(long).mark_bar().encode(
        x=alt.X(f"{x}:N", sort=order, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("seeds:Q", title="seeds", stack="zero"),
        color=alt.Color("fate:N", scale=alt.Scale(domain=list(FATE_COLORS), range=list(FATE_COLORS.values())),
                        title="fate"),
        order=alt.Order("fate_order:Q"), tooltip=[f"{x}:N", "fate:N", "seeds:Q"],
    ).transform_calculate(fate_order=f"indexof({list(FATE_COLORS)!r}, datum.fate)").properties(
        title=title, width=WIDTH, height=HEIGHT)


def share_chart(table: pd.DataFrame, title: str, level: float | None = None, x: str = "onset",
                x_title: str = "window onset (step)") -> alt.LayerChart:
    """The share of seeds that reason against the onset (line) with its exact 95 % interval (bars); the
    no-weight-decay share as a dashed line, and `level` (the edge's) as a dotted one.
    `table`: a `fates.share_table` by onset (-1: no weight decay)."""
    t = table[table[x] >= 0]
    X = alt.X(f"{x}:Q", title=x_title)
    Y = alt.Y("share:Q", title="seeds that reason", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    bars = alt.Chart(t).mark_errorbar(thickness=1.5, color=COLORS["window"]).encode(
        x=X, y=alt.Y("share_lo:Q", title="seeds that reason"), y2="share_hi:Q")
    line = alt.Chart(t).mark_line(point=True, strokeWidth=2, color=COLORS["window"]).encode(
        x=X, y=Y, tooltip=[f"{x}:Q", "reasoning:Q", "seeds:Q", alt.Tooltip("share_lo:Q", format=".2f"),
                           alt.Tooltip("share_hi:Q", format=".2f")])
    layers = bars + line
    none = table[table[x] < 0]
    if len(none):
        layers += alt.Chart(none).mark_rule(strokeDash=[4, 3], color="#555").encode(
            y="share:Q", tooltip=[alt.Tooltip("share:Q", title="no weight decay", format=".2f")])
    if level is not None:
        layers += alt.Chart(pd.DataFrame({"y": [level]})).mark_rule(strokeDash=[1, 3], color="#555").encode(y="y:Q")
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)
