"""Altair charts with one style and one colour map, and the offline renderer the book uses.

`setup()` enables the theme; with `CRITWIN_ALTAIR_MODE=vendored` (set by the book build) charts load
vega / vega-lite / vega-embed from the book's own `_static/vendor` folder instead of a CDN, so the
built site fetches nothing from the internet. In Jupyter, Altair's default renderer is kept.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import uuid
from typing import Any
from urllib.parse import quote

import altair as alt
import numpy as np
import pandas as pd

from critwin_lib import protocol, tables

WIDTH, HEIGHT = 560, 260
FONT = "Helvetica Neue, Helvetica, Arial, sans-serif"

# One colour per condition across the whole book.
COLORS: dict[str, str] = {
    "none": "#7f7f7f",
    "full, equal budget": "#1f77b4",
    "full, equal λ": "#17becf",
    "window": "#d62728",
    "early": "#ff7f0e",
    "mid": "#d62728",
    "middle": "#d62728",
    "late": "#9467bd",
    "train": "#2ca02c",
    "test_id": "#8c564b",
    "test_ood": "#d62728",
}
_FALLBACK = ["#e377c2", "#bcbd22", "#393b79", "#637939", "#8c6d31", "#843c39"]


def color_scale(domain: list[str]) -> alt.Scale:
    extra = itertools.cycle(_FALLBACK)  # past the fallback list its colours repeat rather than raise
    return alt.Scale(domain=domain, range=[COLORS.get(d) or next(extra) for d in domain])


# ------------------------------------------------------------------------------------- renderer
_TEMPLATE = """<div id="{div}"></div>
<script type="text/javascript">
(function (spec, opt) {{
  var el = document.getElementById("{div}"), base = "{base}";
  function show(embed) {{ embed(el, spec, opt).catch(function (e) {{ el.textContent = "chart error: " + e; }}); }}
  if (typeof define === "function" && define.amd) {{
    require.config({{paths: {{"vega": base + "/vega.min", "vega-lite": base + "/vega-lite.min",
                              "vega-embed": base + "/vega-embed.min"}}}});
    require(["vega-embed"], show);
    return;
  }}
  if (!window.critwinVega) {{
    window.critwinVega = ["vega.min.js", "vega-lite.min.js", "vega-embed.min.js"].reduce(function (p, f) {{
      return p.then(function () {{ return new Promise(function (ok, fail) {{
        var s = document.createElement("script");
        s.src = base + "/" + f; s.onload = ok; s.onerror = function () {{ fail("cannot load " + s.src); }};
        document.head.appendChild(s);
      }}); }});
    }}, Promise.resolve());
  }}
  window.critwinVega.then(function () {{ show(window.vegaEmbed); }},
                          function (e) {{ el.textContent = "chart error: " + e; }});
}})({spec}, {opt});
</script>"""


def data_links(spec: dict[str, Any]) -> str:
    """HTML links that download each dataset of a chart as CSV (data: URLs, so they work offline), named after
    the chart's title: a reader can re-plot any figure without Python."""
    title = spec.get("title", "")
    title = title.get("text", "") if isinstance(title, dict) else title
    title = " ".join(title) if isinstance(title, list) else str(title)
    stem = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:60] or "figure"
    links = []
    for i, rows in enumerate(v for v in spec.get("datasets", {}).values() if v):
        name = f"{stem}{'-' + str(i + 1) if len(spec['datasets']) > 1 else ''}.csv"
        csv = pd.DataFrame(rows).to_csv(index=False)
        links.append(f'<a download="{name}" href="data:text/csv;charset=utf-8,{quote(csv)}">{name}</a>')
    return (f'<p class="critwin-data">Data: {", ".join(links)}</p>') if links else ""


def _vendored_renderer(spec: dict[str, Any], **_: Any) -> dict[str, str]:
    base = os.environ.get("CRITWIN_VENDOR_BASE", "../../_static/vendor")
    html = _TEMPLATE.format(div=f"critwin-{uuid.uuid4().hex[:12]}", base=base, spec=json.dumps(spec),
                            opt=json.dumps({"mode": "vega-lite", "actions": False}))
    return {"text/html": html + data_links(spec)}


def setup() -> None:
    """Enable the critwin theme and an offline renderer: the vendored scripts when building the book; in a live
    kernel (JupyterLab), Altair's chart widget with its JavaScript bundled from the installed packages (anywidget,
    vl-convert), so that nothing is fetched from the internet there either."""
    alt.renderers.register("critwin-vendored", _vendored_renderer)
    if os.environ.get("CRITWIN_ALTAIR_MODE") == "vendored":
        alt.renderers.enable("critwin-vendored")
    else:
        alt.renderers.enable("jupyter", offline=True)
    alt.theme.enable("critwin")
    tables.setup()  # every DataFrame a page displays, as a reader reads it


@alt.theme.register("critwin", enable=False)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "view": {"continuousWidth": WIDTH, "continuousHeight": HEIGHT, "stroke": None},
            "font": FONT,
            "axis": {"labelFontSize": 12, "titleFontSize": 13, "grid": True, "gridOpacity": 0.4},
            "legend": {"labelFontSize": 12, "titleFontSize": 12, "orient": "top", "direction": "horizontal",
                       "symbolOpacity": 1, "symbolType": "stroke", "symbolStrokeWidth": 3},
            "title": {"fontSize": 15, "anchor": "start"},
        }
    }


# --------------------------------------------------------------------------------------- charts
def _window_spans(schedules: pd.DataFrame) -> pd.DataFrame:
    """[start, end) of the decay window of each windowed schedule in a `schedule_frame`."""
    rows = []
    for ws, g in schedules.dropna(subset=["window_start"]).groupby("window_start"):
        g = g.sort_values("step")
        on = g.loc[g["lambda"] > 0, "step"]
        if len(on):
            after = g.loc[(g["step"] > on.iloc[0]) & (g["lambda"] == 0), "step"]
            end = after.iloc[0] if len(after) else g["step"].max()
            rows.append({"window_start": ws, "start": on.iloc[0], "end": end})
    return pd.DataFrame(rows, columns=["window_start", "start", "end"])


BAND_OPACITY = 0.18  # a 95 % band stays behind its mean line, also when a legend selection dims the others


def _curve_layers(data: pd.DataFrame, domain: list[str], y_title: str, color_title: str = "weight decay",
                  pick: alt.Parameter | None = None) -> alt.LayerChart:
    """Band (behind) and mean line per condition; with `pick` (a legend selection) the unselected conditions fade,
    each layer keeping its own opacity (one condition on the whole layer would make the bands opaque)."""
    base = alt.Chart(data).encode(
        x=alt.X("step:Q", title="training step"),
        color=alt.Color("condition:N", scale=color_scale(domain), title=color_title),
    )
    band = base.mark_area().encode(y=alt.Y("lo:Q", title=y_title, scale=alt.Scale(domain=[0, 1])), y2="hi:Q",
                                   opacity=(alt.condition(pick, alt.value(BAND_OPACITY), alt.value(0.03)) if pick
                                            else alt.value(BAND_OPACITY)))
    line = base.mark_line(strokeWidth=2).encode(
        y="mean:Q",
        tooltip=["condition:N", "step:Q", alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("lo:Q", format=".3f"), alt.Tooltip("hi:Q", format=".3f"), "n:Q"],
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.12)) if pick else alt.value(1.0),
    )
    return band + line


def curves_chart(curves: pd.DataFrame, title: str, y_title: str = "OOD accuracy (4,3)",
                 color_title: str = "weight decay") -> alt.LayerChart:
    """Mean over seeds (line) and bootstrap interval (band) per condition and step.
    `curves` has columns condition, step, mean, lo, hi, n (see `stats.mean_ci`)."""
    domain = list(dict.fromkeys(curves["condition"]))
    return _curve_layers(curves, domain, y_title, color_title).properties(title=title)


def _range_slider(name: str, values: list[float], default: float | None, label: str) -> alt.Parameter:
    """A control over sorted grid `values` that stops on every value of the grid and on nothing else: a slider
    when the grid is evenly spaced (its step rounded, so that 0.1 is 0.1 and not 0.10000000000000009), buttons
    otherwise (a slider cannot stop exactly on 0.5, 0.7, 1.0, 1.1, 1.5); starting at `default` or the middle one."""
    value = default if default is not None else (values[len(values) // 2] if values else 0)
    gaps = np.diff(values)
    if len(values) > 1 and not np.allclose(gaps, gaps[0], rtol=1e-9, atol=0):
        return alt.param(name=name, value=value, bind=alt.binding_radio(options=list(values), name=label))
    step = float(f"{gaps[0]:.12g}") if len(values) > 1 else 1.0
    return alt.param(name=name, value=value, bind=alt.binding_range(min=min(values, default=0),
                                                                    max=max(values, default=0), step=step, name=label))


def _schedule_strip(schedules: pd.DataFrame, domain: list[str]) -> alt.Chart:
    return alt.Chart(schedules).mark_line(interpolate="step-after", strokeWidth=2).encode(
        x=alt.X("step:Q", title="training step"), y=alt.Y("lambda:Q", title="weight decay λ(t)"),
        color=alt.Color("condition:N", scale=color_scale(domain), title="weight decay"),
        strokeDash=alt.StrokeDash("condition:N", legend=None),
        tooltip=["condition:N", "step:Q", alt.Tooltip("lambda:Q", format=".3g")]).properties(width=WIDTH, height=110)


def window_slider_chart(curves: pd.DataFrame, schedules: pd.DataFrame, title: str, default_start: float | None = None,
                        y_title: str = "OOD accuracy (4,3)", slider_name: str = "window start (step) "
                        ) -> alt.VConcatChart:
    """Curves of reference conditions (window_start NaN) always; windowed runs only for the window
    start picked with a slider. Below: λ(t) of what is shown. Works in a static page (no kernel)."""
    starts = sorted(curves["window_start"].dropna().unique().tolist())
    pick = _range_slider("window_start_pick", starts, default_start, slider_name)
    shown = "!isValid(datum.window_start) || datum.window_start == window_start_pick"
    domain = list(dict.fromkeys(curves["condition"]))
    spans = _window_spans(schedules)
    shade = alt.Chart(spans).mark_rect(color=COLORS["window"], opacity=0.08).encode(
        x="start:Q", x2="end:Q").transform_filter("datum.window_start == window_start_pick")
    top = (shade + _curve_layers(curves, domain, y_title).transform_filter(shown)).properties(title=title)
    bottom = _schedule_strip(schedules, domain).transform_filter(shown)
    return alt.vconcat(top, bottom).add_params(pick).resolve_scale(color="shared")


def plain_protocols(df: pd.DataFrame) -> pd.DataFrame:
    """`df` with its protocol column (if any) in the book's words: a chart's legend and facets name a protocol as
    the pages do."""
    return df.assign(protocol=df["protocol"].map(protocol.plain)) if "protocol" in df.columns else df


def fates_chart(curves: pd.DataFrame, title: str) -> alt.FacetChart:
    """Train / ID-test / OOD accuracy over training (mean and band over seeds), one row per protocol:
    the calibration page's evidence that both fates are reachable.
    `curves`: columns protocol, condition, metric, step, mean, lo, hi, n."""
    domain = list(dict.fromkeys(curves["condition"]))
    names = {"train": "train pairs", "test_id": "held-out keys (ID)", "test_ood": "unseen pair (4,3) (OOD)"}
    data = plain_protocols(curves).assign(split=curves["metric"].map(names))
    layers = _curve_layers(data, domain, "accuracy").properties(width=180, height=160)
    return layers.facet(row=alt.Row("protocol:N", title=None),
                        column=alt.Column("split:N", title=None, sort=list(names.values()))
                        ).properties(title=title)


def outcome_chart(per_run: pd.DataFrame, order: list[str], title: str, x: str = "condition",
                  x_title: str = "weight decay") -> alt.LayerChart:
    """Final OOD accuracy per run (dots) with the mean over seeds (bar) and max-over-training (tick)."""
    domain = list(dict.fromkeys(order))
    enc_x = alt.X(f"{x}:N", sort=order, title=x_title, axis=alt.Axis(labelAngle=0))
    means = per_run.groupby(x, as_index=False)[["final_ood", "max_ood"]].mean()
    bars = alt.Chart(means).mark_bar(opacity=0.35, size=28).encode(
        x=enc_x, y=alt.Y("final_ood:Q", title="OOD accuracy (4,3)", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color(f"{x}:N", scale=color_scale(domain), legend=None),
        tooltip=[f"{x}:N", alt.Tooltip("final_ood:Q", format=".3f", title="mean final"),
                 alt.Tooltip("max_ood:Q", format=".3f", title="mean max")])
    ticks = alt.Chart(means).mark_tick(thickness=2, size=30, color="black").encode(x=enc_x, y="max_ood:Q")
    dots = alt.Chart(per_run).mark_circle(size=60, opacity=0.9).encode(
        x=enc_x, y="final_ood:Q", color=alt.Color(f"{x}:N", scale=color_scale(domain), legend=None),
        xOffset=alt.XOffset("seed:N"),
        tooltip=[f"{x}:N", "seed:N", alt.Tooltip("final_ood:Q", format=".3f"),
                 alt.Tooltip("max_ood:Q", format=".3f"), "fate:N", "t_mem:Q"])
    return (bars + ticks + dots).properties(title=title, width=WIDTH, height=HEIGHT)


def onset_chart(table: pd.DataFrame, per_run: pd.DataFrame, title: str, x: str = "onset",
                x_title: str = "window onset (step)", color: str | None = None,
                rules: pd.DataFrame | None = None) -> alt.LayerChart:
    """Mean final OOD accuracy (line, bootstrap interval) against the window's onset, every seed as a
    dot; `rules` (columns y, label) draws horizontal reference lines (no weight decay, threshold)."""
    t = table[table["onset"] >= 0]
    r = per_run[per_run["onset"] >= 0]
    col = (alt.Color(f"{color}:N", scale=color_scale(list(dict.fromkeys(t[color]))), title=None)
           if color else alt.value(COLORS["window"]))
    X = alt.X(f"{x}:Q", title=x_title)
    line = alt.Chart(t).mark_line(point=True, strokeWidth=2).encode(
        x=X, y=alt.Y("final_ood:Q", title="final OOD accuracy (4,3)", scale=alt.Scale(domain=[0, 1])), color=col,
        tooltip=[f"{x}:Q", "onset:Q", alt.Tooltip("final_ood:Q", format=".3f"), alt.Tooltip("ood_lo:Q", format=".3f"),
                 alt.Tooltip("ood_hi:Q", format=".3f"), alt.Tooltip("max_ood:Q", format=".3f"), "reasoning:Q",
                 "seeds:Q"])
    band = alt.Chart(t).mark_errorbar(thickness=1.5).encode(
        x=X, y=alt.Y("ood_lo:Q", title="final OOD accuracy (4,3)"), y2="ood_hi:Q", color=col)
    dots = alt.Chart(r).mark_circle(size=28, opacity=0.45).encode(
        x=X, y="final_ood:Q", color=col, tooltip=["onset:Q", "seed:N", alt.Tooltip("final_ood:Q", format=".3f"),
                                                  "fate:N"])
    layers = band + dots + line
    if rules is not None and len(rules):
        layers += alt.Chart(rules).mark_rule(strokeDash=[4, 3], color="#555").encode(y="y:Q", tooltip=["label:N"])
        layers += alt.Chart(rules).mark_text(align="left", dx=4, dy=-6, color="#555").encode(
            y="y:Q", x=alt.value(2), text="label:N")
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def metrics_chart(curves: pd.DataFrame, title: str, columns: int = 2, by: str = "condition",
                  legend: str = "weight decay", scale: alt.Scale | None = None) -> alt.FacetChart:
    """One small panel per measurement over training (mean and band over seeds or runs), the groups of column `by`
    (conditions, or fates with their `scale`) in colour. `curves`: columns `by`, metric, step, mean, lo, hi, n."""
    scale = scale or color_scale(list(dict.fromkeys(curves[by])))
    base = alt.Chart().encode(x=alt.X("step:Q", title="training step"),
                              color=alt.Color(f"{by}:N", scale=scale, title=legend))
    band = base.mark_area(opacity=0.18).encode(y=alt.Y("lo:Q", title=None), y2="hi:Q")
    line = base.mark_line(strokeWidth=2).encode(y="mean:Q", tooltip=[f"{by}:N", "step:Q", "n:Q",
                                                                      alt.Tooltip("mean:Q", format=".3f")])
    return alt.layer(band, line, data=curves).properties(width=260, height=150).facet(
        facet=alt.Facet("metric:N", title=None, sort=list(dict.fromkeys(curves["metric"]))), columns=columns
    ).resolve_scale(y="independent").properties(title=title)


def edge_marks(edges: pd.DataFrame, X: alt.X, Y: alt.Y, color: Any, tooltip: list) -> alt.LayerChart:
    """Each found onset edge as a dot with its bracket (columns lo, hi; else ± edge_pm), a missing one as a cross
    on the x axis. `edges`: edge, lo and hi or edge_pm, and the columns X, `color` and `tooltip` use."""
    found = edges.dropna(subset=["edge"])
    if "lo" not in found:
        found = found.assign(lo=found["edge"] - found["edge_pm"], hi=found["edge"] + found["edge_pm"])
    y_lo = alt.Y("lo:Q", title=Y.to_dict().get("title"))  # the bracket's axis is the edge's
    bars = alt.Chart(found).mark_errorbar(thickness=2).encode(x=X, y=y_lo, y2="hi:Q", color=color)
    pts = alt.Chart(found).mark_point(size=90, filled=True, opacity=1).encode(
        x=X, y=Y, color=color, tooltip=[*tooltip, "edge:Q", "lo:Q", "hi:Q"])
    missing = edges[edges["edge"].isna()].assign(edge=0)
    crosses = alt.Chart(missing).mark_point(shape="cross", size=120, filled=True).encode(
        x=X, y=Y, color=color, tooltip=[*tooltip, alt.Tooltip("note:N")]).transform_calculate(note="'no edge'")
    return bars + pts + crosses


def edge_vs_tmem_chart(edges: pd.DataFrame, steps: int, title: str) -> alt.LayerChart:
    """Each protocol's onset edge (with its interval) against its t_mem, over the diagonal
    edge = t_mem. A protocol without an edge appears as a cross on the x axis.
    `edges`: columns protocol, t_mem, edge, and lo, hi or edge_pm."""
    edges = plain_protocols(edges)
    domain = sorted(set(edges["protocol"]))  # sorted, as the share charts beside it: a protocol keeps its colour
    col = alt.Color("protocol:N", scale=color_scale(domain), title=None)
    X = alt.X("t_mem:Q", title="t_mem without weight decay (step)", scale=alt.Scale(domain=[0, steps]))
    Y = alt.Y("edge:Q", title="onset edge (step)", scale=alt.Scale(domain=[0, steps]))
    diag = alt.Chart(pd.DataFrame({"t_mem": [0, steps], "edge": [0, steps]})).mark_line(
        strokeDash=[4, 3], color="#999").encode(x=X, y=Y)
    marks = edge_marks(edges, X, Y, col, ["protocol:N", "t_mem:Q"])
    return (diag + marks).properties(title=title, width=260, height=260)


def window_gamma_chart(curves: pd.DataFrame, schedules: pd.DataFrame, title: str,
                       theory: pd.DataFrame | None = None, default_start: float | None = None,
                       default_gamma: float | None = None, y_title: str = "OOD accuracy (4,3)") -> alt.VConcatChart:
    """The explorer of the static book: two sliders, window start and γ, over a precomputed grid.
    Shows the selected cell's curves (mean and band over seeds) with the references of the same γ
    (window_start NaN, e.g. no weight decay), λ(t) below, and, if given, the theory's prediction for the
    cell as a line of text. `curves`: gamma, window_start, condition, step, mean, lo, hi, n;
    `schedules`: window_start, condition, step, lambda; `theory`: gamma, window_start, text."""
    starts = sorted(curves["window_start"].dropna().unique().tolist())
    gammas = sorted(curves["gamma"].unique().tolist())
    pick_start = _range_slider("explore_start", starts, default_start, "window start (step) ")
    pick_gamma = _range_slider("explore_gamma", gammas, default_gamma, "γ ")
    same_gamma = "abs(datum.gamma - explore_gamma) < 1e-6"
    shown = f"{same_gamma} && (!isValid(datum.window_start) || datum.window_start == explore_start)"
    domain = list(dict.fromkeys(curves["condition"]))
    spans = _window_spans(schedules)
    shade = alt.Chart(spans).mark_rect(color=COLORS["window"], opacity=0.08).encode(
        x="start:Q", x2="end:Q").transform_filter("datum.window_start == explore_start")
    top = shade + _curve_layers(curves, domain, y_title).transform_filter(shown)
    have = {(float(g), float(w)) for g, w in curves[["gamma", "window_start"]].dropna().itertuples(index=False)}
    empty = pd.DataFrame([{"gamma": g, "window_start": w, "text": f"no runs at γ {g:g} with the window at step {w:,.0f}"
                                                                  " (make lab trains this cell)"}
                          for g in gammas for w in starts if (float(g), float(w)) not in have])
    if len(empty):  # a position of the controls without runs says so, instead of an empty chart
        top = top + alt.Chart(empty).mark_text(align="left", baseline="middle", dx=8, fontSize=13, color="#444").encode(
            x=alt.value(0), y=alt.value(HEIGHT / 2), text="text:N").transform_filter(
            f"{same_gamma} && datum.window_start == explore_start")
    if theory is not None and len(theory):
        note = alt.Chart(theory).mark_text(align="left", baseline="top", dx=4, dy=4, fontSize=12).encode(
            x=alt.value(0), y=alt.value(0), text="text:N").transform_filter(
            f"{same_gamma} && datum.window_start == explore_start")
        top = top + note
    bottom = _schedule_strip(schedules, domain).transform_filter(
        "!isValid(datum.window_start) || datum.window_start == explore_start")
    return (alt.vconcat(top.properties(title=title), bottom).add_params(pick_start, pick_gamma)
            .resolve_scale(color="shared"))


# ------------------------------------------------------------------------- other tasks (C8, C9)
def curves_with_schedules_chart(curves: pd.DataFrame, schedules: pd.DataFrame, order: list[str], title: str,
                                y_title: str) -> alt.VConcatChart:
    """Mean curve and bootstrap band per condition, with each condition's λ(t) below on the same steps;
    click a legend entry to show one condition alone."""
    domain = list(dict.fromkeys(order))
    pick = alt.selection_point(fields=["condition"], bind="legend")
    top = _curve_layers(curves, domain, y_title, pick=pick).add_params(pick).properties(title=title, width=WIDTH,
                                                                                        height=HEIGHT)
    return alt.vconcat(top, _schedule_strip(schedules, domain)).resolve_scale(color="shared")
