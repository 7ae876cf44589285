"""The four lines a claim page opens with, before its figure: the claim with the paper's numbers, what we find in one
sentence, the verdict, and the one caveat that matters. Written from the page's numbers (nothing here reads runs),
so the box says what the rule below says, in plain words.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from critwin_lib.claims.placement_design import decay_differs
from critwin_lib.sizes import length_name


def box(claim: str, finding: str, verdict: str, caveat: str) -> str:
    """The box as Markdown: a block quote of four lines."""
    return (f"> **The claim.** {claim}  \n> **What we find.** {finding}  \n> **Verdict: {verdict}.**  \n"
            f"> **The caveat.** {caveat}")


def _flips(sensitivity: pd.DataFrame, verdict: str, subject: str = "it", column: str = "verdict") -> str:
    rows = len(sensitivity)
    flips = int((sensitivity[column] != verdict).sum())
    return f"{subject} flips in {flips} of {rows} rows of the sensitivity table" if flips else (
        f"{subject} holds in all {rows} rows of the sensitivity table")


def c01_box(n: dict[str, Any], sensitivity: pd.DataFrame) -> str:
    """C1's box from its page numbers (`numbers` of `window_placement.c01`) and sensitivity table."""
    where = length_name(n["profile"])
    finding = (f"At {where}, weight decay during one 25 % window makes {n['k_window']} of {n['seeds']} seeds reason, "
               f"against {n['k_full']} with full-run weight decay of the same budget and {n['k_none']} without it "
               f"(mean OOD {n['ood_window']:.2f}, {n['ood_full']:.2f} and {n['ood_none']:.2f}).")
    caveat = (f"At the shares these seeds show, this design would end *reproduced* with probability "
              f"{n['power_observed']:.2f}, and {_flips(sensitivity, n['verdict'])}"
              + "".join(f"; with the token and position embeddings not decayed, as in the paper, the rule says *{v}*"
                        for _, v in decay_differs(n, ["C1"])) + ".")
    return box("Weight decay during a single window of 25 % of training matches weight decay over the whole run "
               "(OOD accuracy 0.93 against 0.91; without weight decay ≈ 0.15).", finding, n["verdict"], caveat)


def c02_c03_box(n: dict[str, Any]) -> str:
    """C2's and C3's box from their page numbers (`budget_placement.c02_c03`)."""
    where = length_name(n["profile"])
    finding = (f"At {where}, the same budget in the middle window makes {n['k_middle']} of {n['seeds']} seeds reason, "
               f"early {n['k_early']}, late {n['k_late']}, none without weight decay {n['k_none']}; mean OOD is "
               f"{n['ratio']:.1f}× higher in the middle than early.")
    ratio = f"the ratio's interval is [{n['c2_reaches_size_lo']:.2f}, {n['c2_reaches_size_hi']:.2f}]"
    won, size = n["c2_middle_beats_early_state"], n["c2_reaches_size_state"]
    c2 = (f"the middle beats the early window, but by less than 5–9× ({ratio})" if won == "holds" and
          size == "rejected" else f"{ratio}, which reaches 5×" if size == "holds" else
          f"the seeds cannot yet tell the middle from the early window ({ratio})")
    c3 = {"not reproduced": "early and late windows do not leave the model at chance",
          "reproduced": "early and late windows leave the model at chance, as no weight decay does"}.get(
        n["verdict_c3"], "whether early and late windows leave the model at chance is not decided")
    differs = decay_differs(n, ["C2", "C3"])
    decay = (f"; with the token and position embeddings not decayed, as in the paper, the rules say "
             f"{', '.join(f'{c} *{v}*' for c, v in differs)} ({n['decay_counts']} reason)" if differs else "")
    caveat = f"{c2[0].upper()}{c2[1:]}; {c3}{decay}."
    return box("At equal budget, weight decay placed mid-run gives 5–9× higher OOD accuracy than placed early (C2); "
               "early or late it leaves OOD at chance, ≈ 0.15, as no weight decay (C3).", finding,
               f"C2 {n['verdict_c2']}, C3 {n['verdict_c3']}", caveat)


def c04_box(n: dict[str, Any]) -> str:
    """C4's box from its page numbers (`window_onset.c04`)."""
    where = length_name(n["profile"])
    finding = f"At {where}, {n['range_text']}; {n['edge_text']}."
    caveat = (f"The paper's 100-step cliff is {n['cliff_answer']} on the fine grid: "
              f"{n.get('cliff_switch_text', 'no fine grid was trained')}.")
    return box("Moving the window's onset by 100 steps of 20,000 takes OOD accuracy from chance (0.15) to the "
               "reasoning regime (0.61); 400 steps reach the plateau (0.93).", finding, n["verdict"], caveat)


def _seeds(k: int, n: int) -> str:
    return f"{k} of {n}"


def c04b_box(n: dict[str, Any]) -> str:
    """C4b's box (`window_onset.c04b`): does the onset edge follow the end of fitting?"""
    a, b = n["protocol_a"].replace("-", "_"), n["protocol_b"].replace("-", "_")
    finding = (f"With the training set fitted by step {n[f'{a}_t_mem']:,.0f}, {n[f'{a}_edge_text']}; fitted by step "
               f"{n[f'{b}_t_mem']:,.0f} (a higher learning rate), {n[f'{b}_edge_text']}.")
    caveat = ("Only one of the two protocols has an onset edge, so there is no shift of the edge to set against the "
              "shift of the fit." if n["part_each_protocol_has_an_edge"] != "holds" else
              f"The edge moves {n['ratio']:.2f}× as far as the end of fitting, with {n['seeds']} seeds per onset.")
    return box("(Not in the paper.) If the window works by catching the model before it finishes memorizing, its "
               "onset edge should move with the step at which the training set is fitted.", finding, n["verdict"],
               caveat)


def c05_box(n: dict[str, Any]) -> str:
    """C5's box (`init_scale.c05`): does the window move with the init scale γ?"""
    trend = "shows no clear trend with" if n["trend_p"] >= 0.05 else "moves with"
    finding = (f"Across {n['n_gammas']} init scales ({n['seeds']} seeds each), where the window works {trend} γ: "
               f"rank correlation {n['trend_rho']:.2f}, permutation p {n['trend_p']:.2f}.")
    caveat = (f"The end of fitting does move with γ (from step {n['t_mem_g0p5']:,.0f} at γ 0.5 to "
              f"{n['t_mem_g1p5']:,.0f} at γ 1.5); with {n['seeds']} seeds per cell the window's own position is "
              "poorly pinned." if "t_mem_g0p5" in n and "t_mem_g1p5" in n else
              f"With {n['seeds']} seeds per cell the window's position is poorly pinned.")
    return box("The critical window's position depends on the init scale γ and moves earlier as γ grows (the paper "
               "gives no numbers).", finding, n["verdict"], caveat)


def _gammas(n: dict[str, Any], prefix: str) -> list[tuple[float, str]]:
    """The γ of a page's per-γ numbers `<prefix>g0p5`, ... with their tags, in order."""
    tags = [k[len(prefix):] for k in n if k.startswith(f"{prefix}g")]
    return sorted((float(t[1:].replace("p", ".")), t) for t in tags)


def c06_c07_box(n: dict[str, Any], sensitivity: pd.DataFrame | None = None) -> str:
    """C6's and C7's box (`basin.c06_c07`): the reasoning basin against the init scale, read over every window
    where the page pools them (`pooled_diff` in its numbers), otherwise under its one window."""
    if "pooled_diff" in n:
        shares = ", ".join(f"γ {g:g}: {n[f'basin_{t}']:.2f}" for g, t in _gammas(n, "basin_"))
        finding = (f"Over three windows, the share of windows in which a seed reasons is {shares} (mean over "
                   f"{n['seeds']} seeds); per seed, γ 1.1 minus γ 0.5 is {n['pooled_diff']:+.2f} "
                   f"[{n['pooled_lo']:+.2f}, {n['pooled_hi']:+.2f}].")
        caveat = (f"{n['seeds']} seeds detect the paper's gap with probability {n['pooled_power']:.2f} "
                  f"({n['pooled_power_agree']:.2f} if a seed reasons under all its windows or none)"
                  + ("; the paper's direction is reversed here, not merely unresolved." if n["pooled_hi"] < 0
                     else f"; at the shares these seeds show, C6's rule says *reproduced* in "
                          f"{n['observed_power']:.0%} of designs like this one (one-sided p {n['pooled_p']:.3f})."))
        if n.get("pooled_any_verdict", n["verdict"]) != n["verdict"]:
            caveat += (f" Read from OOD accuracy alone, fitted or not, C6 is *{n['pooled_any_verdict']}*"
                       + (f" (the {n['unfitted_window']} window leaves {n['unfitted_k_g0p5']} of "
                          f"{n['unfitted_n_g0p5']} runs unfitted at γ 0.5, {n['unfitted_k_g1p1']} of "
                          f"{n['unfitted_n_g1p1']} at γ 1.1)" if "unfitted_window" in n else "") + ".")
        if sensitivity is not None:
            caveat += f" {_flips(sensitivity, n['verdict'], subject='C6', column='C6')}."
        return box("The reasoning solution's basin shrinks at small init (8 of 12 seeds reason at γ 0.5, 12 of 12 "
                   "at γ 1.1; C6), and a moderate init scale, γ 0.7 to 1.1, is best (C7).", finding,
                   f"C6 {n['verdict']}, C7 {n['verdict_c7']}", caveat)
    shares = ", ".join(f"γ {g:g}: {_seeds(n[f'k_{t}'], n[f'n_{t}'])}" for g, t in _gammas(n, "k_"))
    finding = f"With the same window, the seeds that reason are {shares}; the best γ is {n['best_gamma']:g}."
    caveat = (f"{n['seeds']} seeds per γ detect the paper's gap with probability {n['power']:.2f}; the paper's "
              "direction is reversed here, not merely unresolved." if n["diff"] < 0 else
              f"{n['seeds']} seeds per γ detect the paper's gap with probability {n['power']:.2f}.")
    return box("The reasoning solution's basin shrinks at small init (8 of 12 seeds reason at γ 0.5, 12 of 12 at "
               "γ 1.1; C6), and a moderate init scale, γ 0.7 to 1.1, is best (C7).", finding,
               f"C6 {n['verdict']}, C7 {n['verdict_c7']}", caveat)


def c08_box(n: dict[str, Any]) -> str:
    """C8's box (`grokking.c08`): grokking has no window; constant weight decay groks faster."""
    grok = ", ".join(f"{w} {n[f'grokked_{w}']} of {n['seeds']}" for w in ("early", "middle", "late"))
    finding = (f"On modular addition the windows grok ({grok} seeds); constant weight decay of the same budget groks "
               f"by step {n['t_grok_same_budget']:,.0f}, and the windows take, relative to it: {n['ratios_text']}.")
    caveat = ("Constant weight decay is not faster than every window at the same budget (times above, median over "
              "seeds with 95 % intervals)." if n["part_faster"] != "holds" else
              "Constant weight decay is faster than every window at the same budget, but not 5× faster (times above)."
              if n["part_size"] != "holds" else
              "Constant weight decay is faster than every window at the same budget (times above).")
    return box("On grokking (modular arithmetic) there is no critical window, and constant weight decay groks about "
               "5× faster than windowed.", finding, n["verdict"], caveat)


def c09_box(n: dict[str, Any]) -> str:
    """C9's box (`scan_split.c09`): SCAN add_prim_jump stays out of reach."""
    finding = (f"On the held-out split every schedule stays at exact match ≤ {n['max_test_any_run']:.3f}, while "
               f"held-out training commands reach ≥ {n['min_val']:.2f}: the model learns the training language "
               "but not the new composition.")
    caveat = (f"{n['seeds']} seeds, {n['steps']:,} steps and weight decay budgets of λ {n['budgets']} (the largest "
              "that every schedule trains under); a longer or larger run could behave otherwise.")
    return box("No weight-decay schedule lets a plain transformer solve SCAN's add-primitive-jump split: every "
               "schedule fails the test set.", finding, n["verdict"], caveat)


def c10_box(n: dict[str, Any]) -> str:
    """C10's box (`rates.c10`): the two timescales of the theory."""
    moved = [name for name, key in (("memorization", "check_mem_stable"), ("reasoning", "check_rea_stable"))
             if "check_lr" in n and not n[key]]
    check = ("" if "check_lr" not in n else "; a third of the learning rate keeps both exponents" if not moved else
             f"; a third of the learning rate moves the {' and the '.join(moved)} "
             f"exponent{'s' if len(moved) > 1 else ''}")
    finding = (f"Under plain SGD (lr {n['sgd_lr']:g}) the early memorization rate grows as γ to the power "
               f"{n['exp_mem_text']} and the reasoning rate as γ to the power {n['exp_rea_text']}{check}; the "
               f"theory's window edge misses the measured one by {n['overlay_mae']:,.0f} steps on average.")
    caveat = (f"The exponents move with the learning rate (at lr {n['check_lr']:g}: memorization "
              f"{n['check_exp_mem']:.2f}, reasoning {n['check_exp_rea']:.2f}), so none of the rates tried puts these "
              "runs in the gradient-flow regime the theory describes; under AdamW, which trains every other page, the "
              f"exponents are {n['adamw_exp_mem_text']} and {n['adamw_exp_rea_text']}." if moved else
              f"Under AdamW, which trains every other page, the exponents are {n['adamw_exp_mem_text']} and "
              f"{n['adamw_exp_rea_text']}: the theory speaks to plain gradient descent, not to the optimizer the "
              "claims use.")
    return box("Two timescales explain the window: memorization proceeds at a rate independent of the init scale γ, "
               "reasoning at a rate growing as γ² (theory, no measured numbers).", finding, n["verdict"], caveat)


def c11_box(n: dict[str, Any]) -> str:
    """C11's box (`depth.c11`): the window at 4 layers."""
    finding = (f"With 4 layers the best window's plateau is OOD {n['plateau_4']:.2f} against {n['plateau_2']:.2f} "
               f"with 2, and seeds spread less (standard deviation {n['sd_4']:.2f} against {n['sd_2']:.2f}); "
               f"{n['reasoning_4']} of {n['windowed_4']} window runs reason at 4 layers, {n['reasoning_2']} of "
               f"{n['windowed_2']} at 2.")
    caveat = (f"At 4 layers an onset edge shows in {n['edge_found']:.1%} of resamples over seeds: the window helps at "
              f"every onset tried, so nothing marks a critical one ({n['seeds']} seeds per onset; without weight "
              f"decay OOD stays {n['N_4']:.2f}).")
    return box("With 4 layers the critical window persists, with a lower plateau and more variance across seeds "
               "(no numbers given).", finding, n["verdict"], caveat)


def c12_box(n: dict[str, Any]) -> str:
    """C12's box (`optimizer.c12`): the window under SGD with momentum."""
    worse = {"holds": "constant weight decay is worse", "rejected": "constant weight decay is not worse"}.get(
        n["part_worse"], "whether constant weight decay is worse is not decided")
    finding = (f"Under SGD with momentum, {n['b_works']} seeds reason with the middle window and not without "
               f"weight decay, {n['c_works']} the other way (McNemar p {n['p_works']:.3f}); against constant "
               f"weight decay it is {n['b_worse']} and {n['c_worse']} (p {n['p_worse']:.2f}): {worse}.")
    masked = {"holds": "AdamW masks part of the gap", "rejected": "AdamW does not mask the gap"}.get(
        n["part_masked"], "whether AdamW masks part of the gap is not decided")
    caveat = (f"{masked[0].upper()}{masked[1:]} (p {n['p_masked']:.2f}); the SGD learning rate {n['sgd_lr']:g} "
              "was chosen on a separate calibration.")
    return box("The window reproduces under SGD with momentum, where constant weight decay is much worse than "
               "windowed; AdamW masks part of this.", finding, n["verdict"], caveat)


def c13_box(n: dict[str, Any]) -> str:
    """C13's box (`instrumentation.c13`): what the weights of the two fates look like."""
    finding = (f"Of {n['n_window_runs']} window runs, {n['n_reasoning']} reason and {n['n_memorizing']} memorize; "
               f"of the 4 predicted differences in the weights, {n['n_hold']} hold, {n['n_rejected']} are "
               "rejected and the rest are undecided.")
    thin = (f"only {n['memorizing_share']:.0%} of window runs memorize, so the memorizing side is thin"
            if n["memorizing_share"] < 0.25 else f"{n['memorizing_share']:.0%} of window runs memorize")
    caveat = f"{thin[0].upper()}{thin[1:]}; {n['sensitivity_text']}."
    return box("Reasoning and memorizing runs differ in how their weights condense, their stable rank, the order "
               "of their embeddings and the alignment of their subspaces (metrics named, no values).", finding,
               n["verdict"], caveat)
