"""Instrumentation, C13: do reasoning and memorizing runs differ in condensation, stable rank, embedding
order and subspace alignment (the measurements of `metrics.instrument`, logged at every evaluation)?
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import config, protocol, stats
from critwin_lib.claims import rules
from critwin_lib.claims.core import ClaimResult, Design, fetch
from critwin_lib.sizes import get_profile

C13_METRICS = {
    "acc/test_ood": "OOD accuracy",
    "ci/wq1": "condensation index of W_Q (layer 1)",
    "srank/embed": "stable rank of the key embeddings",
    "srank/wq1": "stable rank of W_Q (layer 1)",
    "order/embed": "embedding order |ρ(PC1, value)|",
    "align/embed_resid": "alignment: key embeddings vs OOD residual stream",
    "align/anchor_ov": "alignment: anchor differences vs layer-1 OV",
}


def c13_design(*, profile: str, n_seeds: int, gamma: float, window_start_frac: float, window_frac: float,
               protocol_name: str = protocol.DEFAULT_PROTOCOL) -> Design:
    """C13's runs: the C1 window and no weight decay, same seeds, instrumented."""
    P = get_profile(profile)
    seeds = P.seeds(n_seeds)
    pr = protocol.get_protocol(protocol_name, "protocol_name")
    conds = {"none": config.WDSchedule.none(),
             "window": protocol.window(P, window_start_frac, window_frac, pr.window_lambda)}
    specs = [({"condition": c, "seed": s}, protocol.anchor_run(P, s, wd, gamma=gamma, protocol=protocol_name,
                                                               instrument=True))
             for c, wd in conds.items() for s in seeds]
    return Design(specs, f"profile {P.name}: {P.steps} steps, {len(seeds)} seeds, {len(specs)} instrumented runs",
                  seeds)


@dataclass
class InstrumentResult(ClaimResult):
    history: pd.DataFrame
    per_run: pd.DataFrame
    table: pd.DataFrame
    curves: pd.DataFrame


def c13(*, results_dir: str, train_missing: bool = True, workers: int = -1, **params: Any) -> InstrumentResult:
    """C13: the structural measurements over training, for the C1 window (reasoning) and no weight
    decay (memorizing), same seeds."""
    d = c13_design(**params)
    P = get_profile(params["profile"])
    proto = params.get("protocol_name", protocol.DEFAULT_PROTOCOL)
    history, per_run = fetch(d.specs, results_dir, train_missing, workers)
    last = history[history["step"] == P.steps]
    diffs, rows = {}, []
    for k in C13_METRICS:
        w = last[last["condition"] == "window"].set_index("seed")[k]
        n = last[last["condition"] == "none"].set_index("seed")[k]
        diff = (w - n.reindex(w.index)).to_numpy()
        lo, hi = stats.bootstrap_ci(diff)
        diffs[k] = (float(np.mean(diff)), lo, hi)
        rows.append({"metric": C13_METRICS[k], "key": k, "window": float(w.mean()), "none": float(n.mean()),
                     "difference": float(np.mean(diff)), "lo": lo, "hi": hi,
                     "predicted sign": {1: "+", -1: "−"}.get(rules.C13_DIRECTION.get(k, 0), "")})
    agree = [C13_METRICS[k] for k in rules.agreeing_c13(diffs)]
    verdict = rules.verdict_c13(len(agree))
    ood = {r["key"]: r for r in rows}["acc/test_ood"]
    numbers = {"profile": P.name, "seeds": len(d.seeds), "verdict": verdict, "n_agree": len(agree),
               "protocol": proto, "window_lambda": protocol.get_protocol(proto).window_lambda,
               "ood_window": ood["window"], "ood_none": ood["none"]}
    for k, (m, lo, hi) in diffs.items():
        key = k.replace("/", "_")
        numbers.update({f"d_{key}": m, f"d_{key}_lo": lo, f"d_{key}_hi": hi})
    row = {"claim": "C13", "statement": "reasoning and memorizing runs differ in condensation, stable rank, "
                                        "embedding order and subspace alignment",
           "paper": "metrics named, values not given", "ours": f"{len(agree)} of 4 in the predicted direction "
                                                              f"(95% CI excludes 0): " + (", ".join(agree) or "none"),
           "profile": P.name, "seeds": len(d.seeds), "verdict": verdict}
    long = history.melt(id_vars=["condition", "seed", "step"], value_vars=list(C13_METRICS),
                        var_name="key", value_name="value")
    curves = stats.mean_ci(long, ["condition", "key", "step"], "value")
    curves["metric"] = curves["key"].map(C13_METRICS)
    return InstrumentResult([row], numbers, d.summary, history, per_run, pd.DataFrame(rows), curves)
