"""The same conditions at two run lengths side by side: the quick and the paper length put on one
axis, the share of the run trained, so a reader sees whether the curves keep their shape when the run is three
times longer. Styling comes from `plotting`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH

# viridis at eight points: a run of ordered conditions (window onsets) from early (dark) to late (light)
_RAMP = ["#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#a0da39", "#fde725"]


def _ordered_scale(domain: list[str]) -> alt.Scale:
    """Known conditions in their book colours, the others (ordered, like onsets) along a viridis ramp."""
    rest = [d for d in domain if d not in COLORS]
    ramp = {d: _RAMP[round(i * (len(_RAMP) - 1) / max(1, len(rest) - 1))] for i, d in enumerate(rest)}
    return alt.Scale(domain=domain, range=[COLORS.get(d) or ramp[d] for d in domain])


def lengths_chart(curves: pd.DataFrame, title: str, y_title: str = "OOD accuracy (4,3)") -> alt.FacetChart:
    """The same conditions at two run lengths, one panel each, on a shared axis of the run's share (step / T):
    mean over seeds and bootstrap band. `curves`: `lengths.Lengths.curves` (length, condition, frac, mean, lo,
    hi, n); a length without stored runs has no panel."""
    domain = list(dict.fromkeys(curves["condition"]))
    base = alt.Chart(curves).encode(
        x=alt.X("frac:Q", title="share of training (step / T)", scale=alt.Scale(domain=[0, 1])))
    color = alt.Color("condition:N", scale=_ordered_scale(domain), sort=domain, title="weight decay",
                      legend=alt.Legend(symbolType="stroke", symbolStrokeWidth=3, symbolOpacity=1))
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
                                               y2="hi:Q", color=color)
    line = base.mark_line(strokeWidth=2).encode(
        color=color, y="mean:Q", tooltip=["length:N", "condition:N", "step:Q", alt.Tooltip("mean:Q", format=".3f"),
                             alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), "n:Q"])
    order = list(dict.fromkeys(curves["length"]))
    return (band + line).properties(width=WIDTH // 2, height=HEIGHT).facet(
        column=alt.Column("length:N", title=None, sort=order)).properties(title=title)
