"""Charts of the pages that compare conditions by a time or an outcome rather than by curves of the window: the
grokking reference run and times to fit and to grok (C8), outcomes on several splits (C9, C11), and paired
contrasts between optimizers (C12). Styling comes from `plotting`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH, color_scale


def grokking_chart(reference: pd.DataFrame, t_fit: float, t_grok: float, title: str) -> alt.LayerChart:
    """Training and test accuracy of one run over log-scaled steps, with rules where the training set is
    fitted and where test accuracy passes 0.99. `reference`: columns step, split, accuracy."""
    data = reference[reference["step"] > 0]
    X = alt.X("step:Q", title="training step (log scale)", scale=alt.Scale(type="log"))
    lines = alt.Chart(data).mark_line(strokeWidth=2).encode(
        x=X, y=alt.Y("accuracy:Q", title="accuracy", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("split:N", scale=alt.Scale(domain=["train", "test"], range=[COLORS["train"], "#d62728"]),
                        title=None),
        tooltip=["split:N", "step:Q", alt.Tooltip("accuracy:Q", format=".3f")])
    marks = pd.DataFrame([{"step": v, "label": f"{name} (step {v:.0f})"}
                          for name, v in (("training set fitted", t_fit), ("test > 0.99", t_grok)) if v == v])
    layers = lines
    if len(marks):
        rule = alt.Chart(marks).mark_rule(strokeDash=[4, 3], color="#555").encode(x="step:Q", tooltip=["label:N"])
        text = alt.Chart(marks).mark_text(align="left", dx=4, y=12, color="#555").encode(x="step:Q", text="label:N")
        layers = lines + rule + text
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def time_to_chart(per_run: pd.DataFrame, column: str, steps: int, order: list[str], title: str, x_title: str
                  ) -> alt.LayerChart:
    """One dot per seed at the step it reached a threshold (`column`, NaN: never, drawn past the end of the
    run), one row per condition, with the median as a tick."""
    domain = list(dict.fromkeys(order))
    never = steps * 1.08
    data = per_run.assign(at=per_run[column].fillna(never), when=np.where(per_run[column].isna(), "never",
                                                                          per_run[column].map("{:.0f}".format)))
    X = alt.X("at:Q", title=x_title, scale=alt.Scale(domain=[0, steps * 1.12]))
    Y = alt.Y("condition:N", sort=order, title=None)
    dots = alt.Chart(data).mark_circle(size=70, opacity=0.85).encode(
        x=X, y=Y, yOffset=alt.YOffset("seed:N"), color=alt.Color("condition:N", scale=color_scale(domain), legend=None),
        tooltip=["condition:N", "seed:N", alt.Tooltip("when:N", title=x_title)])
    med = data.groupby("condition", as_index=False)["at"].median()
    ticks = alt.Chart(med).mark_tick(thickness=3, size=24, color="black").encode(
        x="at:Q", y=Y, tooltip=["condition:N", alt.Tooltip("at:Q", title="median", format=".0f")])
    end = alt.Chart(pd.DataFrame([{"x": steps, "label": "end of run"}, {"x": never, "label": "never"}])).mark_rule(
        strokeDash=[4, 3], color="#555").encode(x="x:Q", tooltip=["label:N"])
    return (end + dots + ticks).properties(title=title, width=WIDTH, height=34 * len(domain))


def split_outcome_chart(per_run: pd.DataFrame, order: list[str], splits: dict[str, str], title: str,
                        y_title: str = "exact match") -> alt.FacetChart:
    """Final accuracy per run (dots) and mean over seeds (bar) per condition, one panel per split;
    `splits` maps a column of `per_run` to its panel title."""
    domain = list(dict.fromkeys(order))
    long = per_run.melt(id_vars=["condition", "seed"], value_vars=list(splits), var_name="split", value_name="acc")
    long["split"] = long["split"].map(splits)
    enc_x = alt.X("condition:N", sort=order, title=None, axis=alt.Axis(labelAngle=-30))
    color = alt.Color("condition:N", scale=color_scale(domain), legend=None)
    base = alt.Chart(long)
    bars = base.mark_bar(opacity=0.35).encode(x=enc_x, y=alt.Y("mean(acc):Q", title=y_title,
                                                               scale=alt.Scale(domain=[0, 1])), color=color)
    dots = base.mark_circle(size=45, opacity=0.9).encode(
        x=enc_x, y="acc:Q", xOffset=alt.XOffset("seed:N"), color=color,
        tooltip=["condition:N", "seed:N", "split:N", alt.Tooltip("acc:Q", format=".3f")])
    return (bars + dots).properties(width=200, height=HEIGHT).facet(
        column=alt.Column("split:N", sort=list(splits.values()), title=None)).properties(title=title)


def contrast_chart(contrasts: pd.DataFrame, order: list[str], title: str, group: str = "optimizer",
                   y_title: str = "paired difference in final OOD accuracy") -> alt.LayerChart:
    """Mean paired difference between two conditions (dot) with its bootstrap interval (bar), one colour per
    `group`, side by side per contrast; a rule at 0 (no difference). `contrasts`: columns group, contrast,
    mean, lo, hi, n (see `optimizer.paired_contrasts`)."""
    domain = list(dict.fromkeys(contrasts[group]))
    X = alt.X("contrast:N", sort=order, title=None, axis=alt.Axis(labelAngle=0))
    color = alt.Color(f"{group}:N", scale=color_scale(domain), title=None)
    base = alt.Chart(contrasts).encode(x=X, xOffset=alt.XOffset(f"{group}:N", sort=domain), color=color)
    bars = base.mark_errorbar(thickness=2.5).encode(y=alt.Y("lo:Q", title=y_title, scale=alt.Scale(domain=[-1, 1])),
                                                    y2="hi:Q")
    dots = base.mark_point(filled=True, size=90).encode(
        y="mean:Q", tooltip=[f"{group}:N", "contrast:N", alt.Tooltip("mean:Q", format="+.3f"),
                             alt.Tooltip("lo:Q", format="+.3f"), alt.Tooltip("hi:Q", format="+.3f"), "n:Q"])
    zero = alt.Chart(pd.DataFrame({"y": [0.0]})).mark_rule(color="#555", strokeDash=[4, 3]).encode(y="y:Q")
    return (zero + bars + dots).properties(title=title, width=WIDTH, height=HEIGHT)

