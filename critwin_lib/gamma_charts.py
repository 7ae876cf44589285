"""Charts of the init-scale pages and the rate model (C5, C6/C7, C10): one colour per γ, edges and basins
against γ, the model's rates and shares. Styling and the shared marks come from `plotting`."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from critwin_lib.plotting import COLORS, HEIGHT, WIDTH, color_scale, edge_marks

BOOK_GAMMAS = (0.25, 0.5, 0.7, 0.9, 1.0, 1.1, 1.3, 1.5)  # every γ a page of the book runs: one colour each


def gamma_color(gammas: list[float]) -> alt.Color:
    """One colour per γ, the same on every page: the scale's domain is every γ of the book (and any other given),
    so a γ keeps its colour whichever γ a chart shows; the legend lists the chart's own."""
    shown = sorted(set(gammas))
    domain = sorted(set(BOOK_GAMMAS) | set(shown))
    return alt.Color("gamma:O", title="γ", scale=alt.Scale(scheme="viridis", domain=domain), sort=domain,
                     legend=alt.Legend(values=shown))


def onset_gamma_chart(table: pd.DataFrame, title: str) -> alt.LayerChart:
    """Mean final OOD accuracy against the window's onset, one line per γ (dashed: no weight decay at
    that γ). `table`: gamma, onset (-1 for none), final_ood, ood_lo, ood_hi, reasoning, seeds."""
    t = table[table["onset"] >= 0]
    none = table[table["onset"] < 0]
    col = gamma_color(table["gamma"].tolist())
    X = alt.X("onset:Q", title="window onset (step)")
    Y = alt.Y("final_ood:Q", title="final OOD accuracy (4,3)", scale=alt.Scale(domain=[0, 1]))
    tip = ["gamma:Q", "onset:Q", alt.Tooltip("final_ood:Q", format=".3f"), "reasoning:Q", "seeds:Q"]
    lines = alt.Chart(t).mark_line(point=True, strokeWidth=2).encode(x=X, y=Y, color=col, tooltip=tip)
    rules = alt.Chart(none).mark_rule(strokeDash=[4, 3], opacity=0.6).encode(
        y="final_ood:Q", color=col, tooltip=["gamma:Q", alt.Tooltip("final_ood:Q", format=".3f", title="none")])
    return (rules + lines).properties(title=title, width=WIDTH, height=HEIGHT)


def edge_vs_gamma_chart(edges: pd.DataFrame, steps: int, title: str) -> alt.LayerChart:
    """The onset edge (dot, ± its bracket) and t_mem (hollow diamond) against γ; with a `predicted`
    column, the theory's edge as a dashed line. A γ without an edge is a cross on the x axis.
    `edges`: gamma, edge, edge_pm, t_mem[, predicted]."""
    X = alt.X("gamma:Q", title="init scale γ (std = γ·σ₀)", scale=alt.Scale(zero=False, padding=12))
    Y = alt.Y("edge:Q", title="step", scale=alt.Scale(domain=[0, steps]))
    tip = ["gamma:Q", alt.Tooltip("t_mem:Q", format=".0f")]
    mem = alt.Chart(edges.dropna(subset=["t_mem"])).mark_point(shape="diamond", size=90, color="#333").encode(
        x=X, y=alt.Y("t_mem:Q", title="step"), tooltip=tip)
    layers = edge_marks(edges, X, Y, alt.value(COLORS["window"]), tip) + mem
    if "predicted" in edges:
        layers += alt.Chart(edges.dropna(subset=["predicted"])).mark_line(
            strokeDash=[6, 4], color="#1f77b4", point=True).encode(
            x=X, y=alt.Y("predicted:Q", title="step"),
            tooltip=["gamma:Q", alt.Tooltip("predicted:Q", format=".0f", title="theory")])
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def basin_chart(basin: pd.DataFrame, title: str, paper: pd.DataFrame | None = None) -> alt.LayerChart:
    """Share of seeds that reason (fitted, final OOD > 0.5) per γ, with its exact binomial interval; `paper`
    (gamma, share) as hollow squares. `basin`: gamma, share, share_lo, share_hi, reasoning, seeds, final_ood."""
    X = alt.X("gamma:Q", title="init scale γ (std = γ·σ₀)", scale=alt.Scale(zero=False, padding=12))
    Y = alt.Y("share:Q", title="seeds that reason", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    bars = alt.Chart(basin).mark_errorbar(thickness=2, color=COLORS["window"]).encode(
        x=X, y=alt.Y("share_lo:Q", title="seeds that reason"), y2="share_hi:Q")
    pts = alt.Chart(basin).mark_line(point=alt.OverlayMarkDef(size=90), color=COLORS["window"]).encode(
        x=X, y=Y, tooltip=["gamma:Q", "reasoning:Q", "seeds:Q", alt.Tooltip("share_lo:Q", format=".2f"),
                           alt.Tooltip("share_hi:Q", format=".2f"), alt.Tooltip("final_ood:Q", format=".3f")])
    layers = bars + pts
    if paper is not None and len(paper):
        layers += alt.Chart(paper.assign(source="paper")).mark_point(shape="square", size=110, color="#333").encode(
            x=X, y=Y, tooltip=["gamma:Q", alt.Tooltip("share:Q", format=".2f"), "source:N"])
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def pooled_basin_chart(pooled: pd.DataFrame, basins: pd.DataFrame, title: str,
                       paper: pd.DataFrame | None = None) -> alt.LayerChart:
    """The basin share per γ (mean over seeds of the share of windows in which a seed reasons, with its bootstrap
    interval; thick line), and each window's share of reasoning seeds alone (thin lines, dashed: no weight
    decay); `paper` (gamma, share) as hollow squares. `pooled`: gamma, share, share_lo, share_hi, seeds;
    `basins`: window, gamma, share, reasoning, seeds."""
    X = alt.X("gamma:Q", title="init scale γ (std = γ·σ₀)", scale=alt.Scale(zero=False, padding=12))
    Y = alt.Y("share:Q", title="share that reasons", scale=alt.Scale(domain=[0, 1]), axis=alt.Axis(format="%"))
    order = list(dict.fromkeys(basins["window"]))
    each = alt.Chart(basins).mark_line(point=alt.OverlayMarkDef(size=30), strokeWidth=1.2, opacity=0.7).encode(
        x=X, y=Y, color=alt.Color("window:N", title="each window alone", sort=order,
                                  scale=alt.Scale(domain=order, scheme="set2")),
        strokeDash=alt.condition(alt.datum.window == "none", alt.value([4, 3]), alt.value([1, 0])),
        tooltip=["window:N", "gamma:Q", "reasoning:Q", "seeds:Q", alt.Tooltip("share:Q", format=".2f")])
    bars = alt.Chart(pooled).mark_errorbar(thickness=2, color=COLORS["window"]).encode(
        x=X, y=alt.Y("share_lo:Q", title="share that reasons"), y2="share_hi:Q")
    line = alt.Chart(pooled).mark_line(point=alt.OverlayMarkDef(size=90), strokeWidth=3,
                                       color=COLORS["window"]).encode(
        x=X, y=Y, tooltip=["gamma:Q", "seeds:Q", alt.Tooltip("share:Q", format=".2f", title="basin share"),
                           alt.Tooltip("share_lo:Q", format=".2f"), alt.Tooltip("share_hi:Q", format=".2f")])
    layers = each + bars + line
    if paper is not None and len(paper):
        layers += alt.Chart(paper.assign(source="paper")).mark_point(shape="square", size=110, color="#333").encode(
            x=X, y=Y, tooltip=["gamma:Q", alt.Tooltip("share:Q", format=".2f"), "source:N"])
    return layers.properties(title=title, width=WIDTH, height=HEIGHT)


def rates_chart(rates: pd.DataFrame, fits: dict[str, dict[str, float]], title: str) -> alt.FacetChart:
    """Early rates per seed (dots) and their mean (line) against γ on log axes, one panel per pathway;
    the fitted γ^k in the panel title. Rates ≤ 0 (a margin that does not grow) sit on a symlog y axis.
    `rates`: gamma, seed, memorization, reasoning."""
    long = rates.melt(id_vars=["gamma", "seed"], value_vars=["memorization", "reasoning"], var_name="pathway",
                      value_name="rate")
    names = {k: (f"{k}: k = {f['exponent']:.2f} [{f['lo']:.2f}, {f['hi']:.2f}]" if np.isfinite(f["exponent"])
                 else f"{k}: no power law") for k, f in fits.items()}
    long["panel"] = long["pathway"].map(names)
    X = alt.X("gamma:Q", title="init scale γ", scale=alt.Scale(type="log"))
    Y = alt.Y("rate:Q", title="margin growth per step", scale=alt.Scale(type="symlog", constant=1e-4))
    dots = alt.Chart().mark_circle(size=40, opacity=0.5).encode(x=X, y=Y, tooltip=["gamma:Q", "seed:N", "rate:Q"])
    mean = alt.Chart().mark_line(point=True, strokeWidth=2).encode(x=X, y="mean(rate):Q")
    return alt.layer(dots, mean, data=long).properties(width=260, height=200).facet(
        column=alt.Column("panel:N", title=None)).resolve_scale(y="independent").properties(title=title)


def share_curves_chart(share: pd.DataFrame, title: str) -> alt.Chart:
    """The rate model's share of reasoning seeds against the window's onset (fraction of the run), one
    line per γ. `share`: gamma, onset_frac, share."""
    return alt.Chart(share).mark_line(strokeWidth=2).encode(
        x=alt.X("onset_frac:Q", title="window onset (fraction of the run)", axis=alt.Axis(format="%")),
        y=alt.Y("share:Q", title="seeds that reason", axis=alt.Axis(format="%"), scale=alt.Scale(domain=[0, 1])),
        color=gamma_color(share["gamma"].tolist()),
        tooltip=["gamma:Q", alt.Tooltip("onset_frac:Q", format=".3f"), alt.Tooltip("share:Q", format=".2f")],
    ).properties(title=title, width=WIDTH, height=HEIGHT)


def margins_chart(margins: pd.DataFrame, title: str) -> alt.FacetChart:
    """Training-pair and OOD logit margins over the first steps (mean and band over seeds), per γ.
    `margins`: gamma, margin, step, mean, lo, hi."""
    base = alt.Chart().encode(x=alt.X("step:Q", title="training step"), color=gamma_color(margins["gamma"].tolist()))
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", title="logit margin"), y2="hi:Q")
    line = base.mark_line(strokeWidth=2).encode(y="mean:Q", tooltip=["gamma:Q", "step:Q",
                                                                      alt.Tooltip("mean:Q", format=".3f")])
    names = {"margin/train": "training pairs (m̂ + r̂)", "margin/test_ood": "unseen pair (4,3) (r̂)"}
    return alt.layer(band, line, data=margins.assign(panel=margins["margin"].map(names))).properties(
        width=260, height=180).facet(column=alt.Column("panel:N", title=None)).properties(title=title)


def loglog_rates_chart(rates: pd.DataFrame, title: str) -> alt.Chart:
    """Initial rates against γ on log–log axes, one line per pathway (a power law is a straight line,
    its slope the exponent). `rates`: gamma, pathway, rate (> 0)."""
    domain = list(dict.fromkeys(rates["pathway"]))
    return alt.Chart(rates).mark_line(point=True, strokeWidth=2).encode(
        x=alt.X("gamma:Q", title="init scale γ", scale=alt.Scale(type="log")),
        y=alt.Y("rate:Q", title="initial growth per step", scale=alt.Scale(type="log")),
        color=alt.Color("pathway:N", scale=color_scale(domain), title=None),
        tooltip=["pathway:N", "gamma:Q", alt.Tooltip("rate:Q", format=".3e")],
    ).properties(title=title, width=WIDTH, height=HEIGHT)


def gamma_curves_chart(curves: pd.DataFrame, title: str, y_title: str = "OOD accuracy (4,3)") -> alt.LayerChart:
    """Mean over seeds (line) and bootstrap band per γ over training, in the book's γ colours (`gamma_color`).
    `curves`: gamma, step, mean, lo, hi, n."""
    col = gamma_color(curves["gamma"].tolist())
    base = alt.Chart(curves).encode(x=alt.X("step:Q", title="training step"), color=col)
    band = base.mark_area(opacity=0.15).encode(y=alt.Y("lo:Q", title=y_title, scale=alt.Scale(domain=[0, 1])),
                                               y2="hi:Q")
    line = base.mark_line(strokeWidth=2).encode(y="mean:Q", tooltip=["gamma:Q", "step:Q",
                                                                     alt.Tooltip("mean:Q", format=".3f"), "n:Q"])
    return (band + line).properties(title=title, width=WIDTH, height=HEIGHT)
