"""The same conditions at two run lengths side by side: the quick and the paper length put on one
axis, the share of the run trained, so a reader sees whether the curves keep their shape when the run is three
times longer. Styling comes from `plotting`."""

from __future__ import annotations

import altair as alt
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH, data_links

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


LENGTH_COLORS = ["#1f77b4", "#d62728", "#2ca02c"]  # one per run length, in the order given


def answer_chart(shares: pd.DataFrame, references: pd.DataFrame, paper: pd.DataFrame, title: str
                 ) -> alt.LayerChart:
    """The book's answer at a glance (`claims.answer.Glance`'s frames): the share of seeds that reason against the
    window's onset as a share of the run, one colour per run length (line and exact 95 % bars: the coarse sweep;
    dots: the fine grid around its edge), no weight decay and full-run weight decay as bands (dashed and solid
    rule at the share, shaded its exact interval), and the paper's own numbers (grey diamonds; `paper`: frac,
    share, claim, label)."""
    lengths = list(dict.fromkeys([*shares["length"], *references["length"]]))
    legend = alt.Legend(orient="bottom", direction="vertical", labelLimit=420, titleLimit=420)
    color = alt.Color("length:N", title="run length", sort=lengths, legend=legend,
                      scale=alt.Scale(domain=lengths, range=LENGTH_COLORS[:len(lengths)]))
    X = alt.X("frac:Q", title="window onset (share of the run)", scale=alt.Scale(domain=[0, 0.8]),
              axis=alt.Axis(format="%", values=[i / 10 for i in range(9)]))  # every 10 %, as the y axis
    Y = alt.Y("share:Q", title="seeds that reason", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    tip = ["length:N", "reference:N", "reasoning:Q", "seeds:Q", alt.Tooltip("share_lo:Q", format=".2f"),
           alt.Tooltip("share_hi:Q", format=".2f")]
    refs = references.assign(x0=0.0, x1=0.8)
    bands = alt.Chart(refs).mark_rect(opacity=0.05).encode(x="x0:Q", x2="x1:Q", y="share_lo:Q", y2="share_hi:Q",
                                                          color=color)
    rules = alt.Chart(refs).mark_rule(strokeWidth=1.5).encode(
        y="share:Q", color=color, tooltip=tip,
        strokeDash=alt.StrokeDash("reference:N", title="reference (band: its exact 95 % interval)", legend=legend,
                                  sort=list(dict.fromkeys(refs["reference"])), scale=alt.Scale(range=[[5, 3], [1, 0]])))
    coarse, fine = shares[shares["grid"] == "coarse"], shares[shares["grid"] == "fine"]
    stip = ["length:N", "grid:N", "onset:Q", "reasoning:Q", "seeds:Q", alt.Tooltip("share_lo:Q", format=".2f"),
            alt.Tooltip("share_hi:Q", format=".2f")]
    layers = [bands, rules,
              alt.Chart(coarse).mark_errorbar(thickness=1.5).encode(x=X, y=alt.Y("share_lo:Q", title=""),
                                                                    y2="share_hi:Q", color=color),
              alt.Chart(coarse).mark_line(point=True, strokeWidth=2.5).encode(x=X, y=Y, color=color, tooltip=stip)]
    if len(fine):
        layers += [alt.Chart(fine).mark_errorbar(thickness=0.8, opacity=0.5).encode(
                       x=X, y=alt.Y("share_lo:Q", title=""), y2="share_hi:Q", color=color),
                   alt.Chart(fine).mark_point(size=18, filled=True, opacity=0.7).encode(x=X, y=Y, color=color,
                                                                                         tooltip=stip)]
    layers += [alt.Chart(paper).mark_point(shape="diamond", size=110, filled=True, color="#555").encode(
                   x=X, y=Y, tooltip=["claim:N", alt.Tooltip("share:Q", format=".2f")]),
               alt.Chart(paper).mark_text(dy=-12, fontSize=11, color="#555").encode(x=X, y=Y, text="label:N")]
    return alt.layer(*layers).properties(title=title, width=WIDTH, height=HEIGHT + 40)


def static_html(chart: alt.TopLevelMixin) -> str:
    """A chart as inline SVG with its data as CSV links: HTML that any page can paste (the intro glues the answer
    figure from the C4 page), drawn without JavaScript or a path to the vendored scripts."""
    import vl_convert

    spec = chart.to_dict()
    return f'<div class="critwin-static">{vl_convert.vegalite_to_svg(spec)}</div>' + data_links(spec)
