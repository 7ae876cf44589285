"""A page's seeds looked at block by block (a pre-registered group-sequential design, `critwin_lib.sequential`):
at each look the page's rule is applied to the seeds so far with every test held to that look's nominal level,
and the design stops at the first look whose verdict is not *inconclusive*, or at its maximum. A look the stored
seeds do not reach yet is not taken; until the design stops, the page says which look it has reached.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from critwin_lib import sequential
from critwin_lib.claims import fates

Decide = Callable[..., tuple[str, dict[str, fates.Comparison]]]  # decide(by_condition, levels)
UNDECIDED_VERDICT = "inconclusive"
POWER_DRAWS = 4000


@dataclass
class Look:
    look: int  # 1-based
    seeds: int
    levels: fates.Levels
    verdict: str
    parts: dict[str, fates.Comparison]


@dataclass
class Progress:
    """The looks taken, in order: the design's verdict is the last one's; `stopped` when that look decided (or
    was the design's last)."""

    looks_planned: list[int]
    taken: list[Look]

    @property
    def verdict(self) -> str:
        return self.taken[-1].verdict if self.taken else UNDECIDED_VERDICT

    @property
    def stopped(self) -> bool:
        return bool(self.taken) and (self.verdict != UNDECIDED_VERDICT or
                                     self.taken[-1].seeds == self.looks_planned[-1])

    def status(self) -> str:
        """Where the design stands, in words."""
        if not self.taken:
            return f"no look reached yet (the first is at {self.looks_planned[0]} seeds)"
        last, k = self.taken[-1], len(self.looks_planned)
        if self.verdict != UNDECIDED_VERDICT:
            return f"the rule stopped at look {last.look} of {k} ({last.seeds} seeds): {self.verdict}"
        if self.stopped:
            return f"the design reached its maximum, {last.seeds} seeds (look {k} of {k}), undecided"
        nxt = self.looks_planned[last.look]
        return (f"look {last.look} of {k} ({last.seeds} seeds) did not decide; the next, look {last.look + 1}, "
                f"is at {nxt} seeds")

    def table(self) -> pd.DataFrame:
        """One row per planned look: seeds, the levels its tests are held to, and (for looks taken) the verdict
        and each part's state."""
        rows = []
        for k, n in enumerate(self.looks_planned):
            lv = fates.look_levels(self.looks_planned, k)
            row: dict[str, Any] = {"look": k + 1, "seeds": n, "beats: p below": lv.beats,
                                   "beats/size interval": lv.interval, "matches interval": lv.matches}
            taken = self.taken[k] if k < len(self.taken) else None
            row["verdict"] = taken.verdict if taken else "not taken"
            row["parts"] = "; ".join(f"{p}: {c.state}" for p, c in taken.parts.items()) if taken else ""
            row["where it fell"] = "; ".join(f"{p}: {_observed(c)}" for p, c in taken.parts.items()) if taken else ""
            rows.append(row)
        return pd.DataFrame(rows)


def _observed(c: fates.Comparison) -> str:
    """A part's statistic at a look: its p for "beats", its interval otherwise."""
    if c.test == "beats":
        return f"{c.k_a}/{c.n} vs {c.k_b}/{c.n}, p {c.p:.4f}"
    return f"{c.diff:+.2f} [{c.lo:+.2f}, {c.hi:+.2f}]"


def run(decide: Decide, by_condition: dict[str, pd.Series], looks: list[int]) -> Progress:
    """Every look the seeds shared by all conditions reach (the first n seeds by number), stopping at the first
    that decides."""
    looks = sequential.check_looks(looks)
    common = sorted(set.intersection(*(set(s.index) for s in by_condition.values())))
    taken = []
    for k, n in enumerate(looks):
        if n > len(common):
            break
        lv = fates.look_levels(looks, k)
        verdict, parts = decide({c: s.loc[common[:n]] for c, s in by_condition.items()}, lv)
        taken.append(Look(k + 1, n, lv, verdict, parts))
        if verdict != UNDECIDED_VERDICT:
            break
    return Progress(looks, taken)


def power(decide: Decide, shares: dict[str, float], looks: list[int], draws: int = POWER_DRAWS, seed: int = 0,
          paired: bool = False) -> dict[str, float]:
    """The design against the paper's effect (each condition's seeds reasoning with the paper's share): the chance
    it ends *reproduced*, the mean seeds it takes, and the chance it stops at each look. The conditions of a seed
    are drawn independently, or (`paired`) from one draw per seed (`fates.draw_fates`)."""
    looks = sequential.check_looks(looks)
    rng = np.random.default_rng(seed)
    draw = fates.draw_fates(rng, shares, (draws, looks[-1]), paired)
    levels = [fates.look_levels(looks, k) for k in range(len(looks))]
    hits, used, stop = 0, 0, [0] * len(looks)
    for i in range(draws):
        for k, n in enumerate(looks):
            verdict, _ = decide({c: v[i, :n] for c, v in draw.items()}, levels[k])
            if verdict != UNDECIDED_VERDICT or k == len(looks) - 1:
                hits += verdict == "reproduced"
                used += n
                stop[k] += 1
                break
    return {"power": hits / draws, "mean_seeds": used / draws,
            **{f"stop_{k + 1}": s / draws for k, s in enumerate(stop)}}


def numbers(prefix: str, seq: Progress, pw: dict[str, float]) -> dict[str, Any]:
    """A design's glued numbers (`<prefix>seq_...`)."""
    return {f"{prefix}seq_verdict": seq.verdict, f"{prefix}seq_status": seq.status(),
            f"{prefix}seq_looks": ", ".join(str(n) for n in seq.looks_planned),
            f"{prefix}seq_max": seq.looks_planned[-1], f"{prefix}seq_taken": len(seq.taken),
            f"{prefix}seq_power": pw["power"], f"{prefix}seq_mean_seeds": pw["mean_seeds"]}


def power_observed(decide: Decide, by_condition: dict[str, pd.Series], looks: list[int], draws: int = POWER_DRAWS,
                   seed: int = 0) -> float:
    """The chance the design ends *reproduced* if the truth were what the seeds show: seeds drawn with replacement
    from the observed ones, each keeping all its conditions (so the arms stay paired, as they are: same init, same
    batch order), run through every look. Beside the power against the paper's effect, which draws the arms
    independently from the paper's shares."""
    looks = sequential.check_looks(looks)
    common = sorted(set.intersection(*(set(s.index) for s in by_condition.values())))
    if not common:
        return float("nan")
    table = {c: s.loc[common].to_numpy() for c, s in by_condition.items()}
    rng = np.random.default_rng(seed)
    levels = [fates.look_levels(looks, k) for k in range(len(looks))]
    hits = 0
    for _ in range(draws):
        idx = rng.integers(0, len(common), looks[-1])
        for k, n in enumerate(looks):
            verdict, _ = decide({c: v[idx[:n]] for c, v in table.items()}, levels[k])
            if verdict != UNDECIDED_VERDICT or k == len(looks) - 1:
                hits += verdict == "reproduced"
                break
    return hits / draws
