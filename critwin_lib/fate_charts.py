"""Charts of fates over seeds: how many seeds reach each fate per condition, and the share that reasons
against the window's onset with its exact interval; the fine onset grid in mean OOD accuracy beside the paper's
cliff. Styling comes from `plotting`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH, color_scale, plain_protocols

TRAINED_COLORS = ["#1f77b4", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#aec7e8", "#c5b0d5",
                  "#c49c94", "#f7b6d2", "#c7c7c7", "#dbdb8d", "#9edae5"]  # a trained pair's shift, one each
FATE_COLORS = {"reasoning": "#2ca02c", "memorizing": "#7f7f7f", "other rule": "#ff7f0e", "not fitted": "#d62728"}


def fate_scale() -> alt.Scale:
    """The fates' colours, the same on every page."""
    return alt.Scale(domain=list(FATE_COLORS), range=list(FATE_COLORS.values()))


def fate_chart(table: pd.DataFrame, order: list[str], title: str, x: str = "condition") -> alt.Chart:
    """Seeds of each fate per condition, stacked (`table`: a `fates.share_table`)."""
    cols = [f.replace(" ", "_") for f in FATE_COLORS]
    long = table[[x, *cols]].melt(id_vars=[x], value_vars=cols, var_name="fate", value_name="seeds")
    long["fate"] = long["fate"].str.replace("_", " ")
    return alt.Chart(long).mark_bar().encode(
        x=alt.X(f"{x}:N", sort=order, title=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("seeds:Q", title="seeds", stack="zero"),
        color=alt.Color("fate:N", scale=alt.Scale(domain=list(FATE_COLORS), range=list(FATE_COLORS.values())),
                        title="fate", legend=alt.Legend(symbolType="square", symbolSize=120)),  # the theme's
        # stroke symbol suits lines; a bar's legend needs a filled swatch
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


def shares_by_chart(table: pd.DataFrame, color: str, title: str, x: str = "onset",
                    x_title: str = "window onset (step)", level: float | None = None) -> alt.LayerChart:
    """The share of seeds that reason against `x`, one line (with exact 95 % bars) per value of `color` (e.g.
    protocol); rows with x < 0 or NaN (no weight decay) are left out. `table`: a `fates.share_table`."""
    table = plain_protocols(table)
    t = table[table[x].notna() & (table[x] >= 0)]
    col = alt.Color(f"{color}:N", title=None, scale=color_scale(sorted(set(table[color].dropna()))))  # a value
    # keeps its colour, and charts drawn side by side share one domain even where one of them has no rows
    X = alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(tickCount=5, labelOverlap="greedy"))  # narrow: no collisions
    bars = alt.Chart(t).mark_errorbar(thickness=1.5).encode(
        x=X, y=alt.Y("share_lo:Q", title="seeds that reason"), y2="share_hi:Q", color=col)
    line = alt.Chart(t).mark_line(point=True, strokeWidth=2).encode(
        x=X, y=alt.Y("share:Q", title="seeds that reason", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=col, tooltip=[f"{color}:N", alt.Tooltip(f"{x}:Q", format=".3g"), "reasoning:Q", "seeds:Q"])
    layers = bars + line
    if level is not None:
        layers += alt.Chart(pd.DataFrame({"y": [level]})).mark_rule(strokeDash=[1, 3], color="#555").encode(y="y:Q")
    return layers.properties(title=title, width=260, height=HEIGHT)


def answers_chart(answers: pd.DataFrame, start: int, end: int, title: str) -> alt.FacetChart:
    """What a run answers on (4, 3) over training: the share of answers of each kind (x − 10, each trained pair's
    shift, the most common other shift), one panel per run, the decay window shaded.
    `answers`: run, step, answer, share (see `claims.relapse.answer_shares`)."""
    window = alt.Chart(pd.DataFrame({"start": [start], "end": [end]})).mark_rect(opacity=0.12, color="#888").encode(
        x="start:Q", x2="end:Q")
    kinds = list(dict.fromkeys(answers["answer"]))
    trained = iter(TRAINED_COLORS * 3)
    colors = [FATE_COLORS["reasoning"] if "reasoning" in k else FATE_COLORS["other rule"] if "other" in k
              else next(trained) for k in kinds]
    dash = [[1, 0] if "trained" not in k else [4, 2] for k in kinds]
    lines = alt.Chart(answers).mark_line(strokeWidth=2).encode(
        x=alt.X("step:Q", title="training step"),
        y=alt.Y("share:Q", title="share of (4, 3) answers", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%")),
        color=alt.Color("answer:N", scale=alt.Scale(domain=kinds, range=colors), title="answer"),
        strokeDash=alt.StrokeDash("answer:N", scale=alt.Scale(domain=kinds, range=dash), legend=None),
        tooltip=["run:N", "step:Q", "answer:N", alt.Tooltip("share:Q", format=".2f")])
    return alt.layer(window, lines, data=answers).properties(width=300, height=HEIGHT).facet(
        column=alt.Column("run:N", title=None)).properties(title=title)


def cliff_chart(table: pd.DataFrame, paper: pd.DataFrame, title: str) -> alt.LayerChart:
    """Mean final OOD accuracy against the onset on a fine grid (line) with its 95 % BCa interval over seeds
    (bars), the no-weight-decay mean as a dashed line, and the paper's cliff in the same metric (grey, dashed;
    `paper`: onset, ood). `table`: a `fates.share_table` by onset (-1: no weight decay)."""
    t = table[table["onset"] >= 0]
    X = alt.X("onset:Q", title="window onset (step)")
    Y = alt.Y("final_ood:Q", title="mean OOD accuracy (4,3)", scale=alt.Scale(domain=[0, 1]))
    bars = alt.Chart(t).mark_errorbar(thickness=1.5, color=COLORS["window"]).encode(
        x=X, y=alt.Y("ood_lo:Q", title="mean OOD accuracy (4,3)"), y2="ood_hi:Q")
    line = alt.Chart(t).mark_line(point=True, strokeWidth=2, color=COLORS["window"]).encode(
        x=X, y=Y, tooltip=["onset:Q", "seeds:Q", "reasoning:Q", alt.Tooltip("final_ood:Q", format=".2f"),
                           alt.Tooltip("ood_lo:Q", format=".2f"), alt.Tooltip("ood_hi:Q", format=".2f")])
    claimed = alt.Chart(paper.assign(curve="the paper's cliff")).mark_line(strokeDash=[6, 3], color="#999").encode(
        x="onset:Q", y="ood:Q", tooltip=["curve:N", "onset:Q", alt.Tooltip("ood:Q", format=".2f")])
    label = alt.Chart(paper.tail(1).assign(text="the paper's cliff")).mark_text(
        align="right", dy=-8, fontSize=11, color="#777").encode(x="onset:Q", y="ood:Q", text="text:N")
    layers = alt.layer(claimed, label, bars, line)
    none = table[table["onset"] < 0]
    if len(none):
        layers += alt.Chart(none.assign(text="no weight decay")).mark_rule(strokeDash=[4, 3], color="#555").encode(
            y="final_ood:Q", tooltip=["text:N", alt.Tooltip("final_ood:Q", title="mean OOD", format=".2f")])
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def seed_grid_chart(runs: pd.DataFrame, title: str) -> alt.Chart:
    """Each seed's fate at each onset of a fine grid, one row per seed (`runs`: onset, seed, fate, final_ood and
    the seed's `switch onset`, NaN where it never switches): whether the seeds switch together (a column where
    the colour changes in every row) or each at its own onset (a staircase)."""
    grid = sorted(runs["onset"].unique())
    every = max(1, len(grid) // 8)
    shown = [int(o) for o in grid[::every]]
    return alt.Chart(runs).mark_rect(stroke="white", strokeWidth=0.5).encode(
        x=alt.X("onset:O", title="window onset (step)",
                axis=alt.Axis(values=shown, labelAngle=0, labelExpr="format(datum.value, ',')")),
        y=alt.Y("seed:O", title="seed"),
        color=alt.Color("fate:N", scale=fate_scale(), title="fate",
                        legend=alt.Legend(symbolType="square", symbolSize=120)),
        tooltip=["seed:O", "onset:Q", "fate:N", alt.Tooltip("final_ood:Q", title="final OOD", format=".2f"),
                 alt.Tooltip("switch onset:Q", format=",.0f")],
    ).properties(title=title, width=WIDTH, height=alt.Step(18))
