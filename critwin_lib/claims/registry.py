"""One declaration per book page: the claim ids it decides, its notebook, and its two functions (the design,
which lists the runs, and the page, which computes the numbers). The scoreboard, `make reproduce`'s planner
and the command line read this list, so a page added here is planned, scored and run everywhere.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from critwin_lib import config, paths, protocol, store
from critwin_lib.claims import (
    basin,
    budget_placement,
    calibration,
    depth,
    grokking,
    init_scale,
    instrumentation,
    optimizer,
    rates,
    relapse,
    scan_split,
    window_onset,
    window_placement,
)
from critwin_lib.claims.core import RUNTIME_PARAMS, ClaimResult, Design, configs

NOTEBOOKS = paths.NOTEBOOKS


@dataclass(frozen=True)
class Page:
    """A book page: `notebooks/<stem>.ipynb`, the claims it decides (scoreboard ids, none for the calibration
    and explorer pages), `design(**params)` and `page(results_dir=..., **params)`. `at_profile` holds, per
    profile other than the notebook's own, the parameters that differ there (the paper length's seeds); a page
    with an entry for a profile is scored at that profile too."""

    stem: str
    claims: tuple[str, ...]
    design: Callable[..., Design]
    page: Callable[..., ClaimResult]
    at_profile: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    earlier: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # a profile's parameters before its
    # design there last changed (the paper length's protocol): the page reads those runs too and says what they said
    upcoming: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # a design registered before its runs
    # (a profile's parameters that replace the page's there once its runs are stored; scripts/paper_sweep.py
    # --upcoming trains it): until then the page states its rule and keeps reading the design it has

    @property
    def notebook(self) -> Path:
        return NOTEBOOKS / f"{self.stem}.ipynb"

    @property
    def glue_prefix(self) -> str:
        """The page's glue keys start with this: the stem's claim part ('c04b_', 'c06_c07_')."""
        return "_".join(p for p in self.stem.split("_") if p[:1] in "cx" and p[1:2].isdigit()) + "_"


# The core claims at the paper's 20,000 steps, under the protocol calibrated at that length; without the quick
# pages' extras (slider onsets, the other protocol's table).
PAPER_LENGTH = {"n_seeds": 12, "alt_protocol": ""}
PAPER_LOOKS = {"looks": [12, 22, 32]}  # C1's, C2's and C3's sequential design at that length (12: the first look)
# The 25 % window design (registered 2026-12-06, before any of its runs): the calibration page's choice with part 2
# as revised (lr 2e-4, full-run λ 3, the paper's 25 % windows at λ 12, equal budget); a seed reasons only with its
# training set fitted at the end; seeds 4-35 (0-3 are the calibration's); C1 also reads the same window at the
# full-run λ (a quarter of the budget); no span condition and no full-run λ 12.
PAPER_FIT = protocol.FITTED_CHOICES["paper"]
PAPER_RULE = {"first_seed": 4, "fitted_reasoning": True}
PAPER_FITTED_C1 = PAPER_FIT.claim_params() | PAPER_RULE | {"window_start_frac": PAPER_FIT.middle_start,
                                                          "quarter_budget": True, "full_equal_lambda": False}
PAPER_FITTED_C2_C3 = PAPER_FIT.claim_params() | PAPER_RULE | {"placements": PAPER_FIT.placements(), "span": [],
                                                             "sequential_c3": True}
PAPER_FITTED_C4 = PAPER_FIT.claim_params() | PAPER_RULE | {"onset_fracs": PAPER_FIT.onset_fracs()}
# The design before it (2026-12-04 to 2026-12-06): the choice of part 2's first wording, windows half the run at λ 6,
# seeds from 0; it stands as read (`Page.earlier`), under the fate rule of the day (all its runs end fitted).
HALF_RUN = protocol.HALF_RUN_CHOICE
HALF_RUN_C1 = HALF_RUN.claim_params() | {"window_start_frac": HALF_RUN.middle_start, "n_seeds": 32}
HALF_RUN_C2_C3 = HALF_RUN.claim_params() | {"placements": HALF_RUN.placements()}
HALF_RUN_C4 = HALF_RUN.claim_params() | {"onset_fracs": HALF_RUN.onset_fracs()}

# The paper's decay set (token and position embeddings not decayed) as a sensitivity row of C1-C3, registered with
# its check (the calibration page, 2026-12-06) before the claim runs: 32 seeds at quick, 12 at 20,000 steps (from
# the design's first seed), at the claims' λ (the check passed at λ × 1 at quick); no weight decay is shared.
# C1's quick page reads its row (and its quarter-budget reading, registered with the 25 % window design) since
# their runs were stored (2026-12-07), C2/C3's quick page since its were; the paper length since its 48 runs were
# (2026-12-07). The half-run design, read before the decay set existed, has none.
NO_DECAY_ROW = {"decay_protocol": "", "decay_n_seeds": 0}
# C4's fine grid at 20,000 steps, by the rule registered with the 25 % window design: the coarse share crosses 0.5
# once, falling between onsets 12,500 (5 of 8) and 15,000 (0 of 8), so that bracket is tiled every 100 steps with
# the coarse sweep's 8 seeds (26 onsets, 192 runs to train: the first seed's 24 went seed by seed, until
# 2026-12-08; the rest onset by onset, every other onset first, so a cut-off sweep holds a 200-step grid).
C4_FINE_PAPER = {"cliff_fracs": [0.625, 0.75], "cliff_falling": True}
DECAY_PAPER = {"decay_protocol": "quarter-fit-paper-decay-20k", "decay_window_lambda": PAPER_FIT.claim_params()[
    "window_lambda"], "decay_n_seeds": 12}

PAGES = (
    Page("c00_calibration", (), calibration.c00_design, calibration.c00),
    Page("c01_critical_window", ("C1",), window_placement.c01_design, window_placement.c01,
         {"paper": PAPER_LENGTH | PAPER_LOOKS | PAPER_FITTED_C1 | DECAY_PAPER | {"slider_starts": [], "n_seeds": 32}},
         {"paper": PAPER_LENGTH | PAPER_LOOKS | HALF_RUN_C1 | NO_DECAY_ROW | {"slider_starts": [],
                                                                             "quarter_budget": False}}),
    Page("c01_relapse", (), relapse.c01_relapse_design, relapse.c01_relapse),
    Page("c02_c03_budget_placement", ("C2", "C3"), budget_placement.c02_c03_design, budget_placement.c02_c03,
         {"paper": PAPER_LENGTH | PAPER_LOOKS | PAPER_FITTED_C2_C3 | DECAY_PAPER | {"onset_fracs": [],
                                                                                    "n_seeds": 22}},  # look 2
         {"paper": PAPER_LENGTH | PAPER_LOOKS | HALF_RUN_C2_C3 | NO_DECAY_ROW | {"onset_fracs": []}}),
    Page("c04_sharp_onset", ("C4",), window_onset.c04_design, window_onset.c04,
         {"paper": PAPER_LENGTH | PAPER_FITTED_C4 | {"n_seeds": 8, "cliff_fracs": []}},  # its fine grid: after the
         {"paper": PAPER_LENGTH | HALF_RUN_C4 | {"n_seeds": 8, "cliff_fracs": []}},  # coarse edge, where it is
         upcoming={"paper": C4_FINE_PAPER}),
    Page("c04b_window_vs_fitting", ("C4b",), window_onset.c04b_design, window_onset.c04b),
    Page("c05_init_scale_window", ("C5",), init_scale.c05_design, init_scale.c05),
    # C6/C7's notebook holds the three-window design registered on 2026-12-06 before its runs (here as `upcoming`
    # until they were all stored); what the one-window design before it said is recomputed on the page.
    Page("c06_c07_basin", ("C6", "C7"), basin.c06_c07_design, basin.c06_c07),
    Page("c08_grokking", ("C8",), grokking.c08_design, grokking.c08),
    Page("c09_scan", ("C9",), scan_split.c09_design, scan_split.c09),
    Page("c10_two_timescales", ("C10",), rates.c10_design, rates.c10),
    Page("c11_depth", ("C11",), depth.c11_design, depth.c11),
    Page("c12_optimizer", ("C12",), optimizer.c12_design, optimizer.c12),
    Page("c13_instrumentation", ("C13",), instrumentation.c13_design, instrumentation.c13),
    Page("x01_explorer", (), init_scale.x01_design, init_scale.x01),
)
BY_STEM = {p.stem: p for p in PAGES}


def page(stem: str) -> Page:
    if stem not in BY_STEM:
        raise config.ConfigError(f"notebook: {stem!r} is not a registered page; known: {tuple(BY_STEM)}")
    return BY_STEM[stem]


def by_claims(ids: list[str]) -> list[Page]:
    """The pages that decide the given scoreboard ids (C1, C4b, ...), in book order."""
    known = {c for p in PAGES for c in p.claims}
    unknown = [c for c in ids if c not in known]
    if unknown:
        raise config.ConfigError(f"claims: unknown claim ids {unknown}; known: {sorted(known)}")
    return [p for p in PAGES if set(p.claims) & set(ids)]


def notebook_defaults(path: Path) -> dict[str, Any]:
    """The default values of a notebook's parameters cell."""
    import papermill as pm

    return {name: ast.literal_eval(p["default"]) for name, p in pm.inspect_notebook(str(path)).items()}


def design_params(params: dict[str, Any]) -> dict[str, Any]:
    """A page's parameters without the runtime ones (where results live, whether to train, how many workers)."""
    return {k: v for k, v in params.items() if k not in RUNTIME_PARAMS}


def planned_runs(stem: str, params: dict[str, Any]) -> list[config.RunConfig]:
    """The runs a page needs with these parameters (all: no analysis trains beyond its design), checked and listed
    without training or loading anything."""
    return configs(page(stem).design(**design_params(params)).specs)


def profile_defaults(path: Path, profile: str | None = None, earlier: bool = False) -> dict[str, Any]:
    """A page's parameters at `profile` (default: the notebook's own): its notebook's defaults, then the values
    the page declares for that profile (`Page.at_profile`; with `earlier`, those before its design there last
    changed, `Page.earlier`). What the planner, the scoreboard and `make reproduce` pass to the notebook, so all
    three run the same design."""
    d = notebook_defaults(path)
    profile = profile or d.get("profile")
    p = BY_STEM.get(path.stem)
    declared = (p.earlier if earlier else p.at_profile).get(profile, {}) if p else {}
    return {**d, "profile": profile, **declared}


def upcoming_defaults(p: Page, profile: str) -> dict[str, Any]:
    """Page `p`'s parameters at `profile` under the design it has registered there before its runs
    (`Page.upcoming`); a page with none there is an error."""
    if profile not in p.upcoming:
        raise config.ConfigError(f"upcoming: {p.stem} registers no upcoming design at profile {profile!r}; "
                                 f"it has one at {sorted(p.upcoming) or 'none'}")
    return {**profile_defaults(p.notebook, profile), **p.upcoming[profile]}


def design_at(p: Page, profile: str, earlier: bool = False) -> Design:
    """Page `p`'s design at `profile`, built from the parameters it declares there (`profile_defaults`)."""
    return p.design(**design_params(profile_defaults(p.notebook, profile, earlier)))


SHIPPED_PROFILE = "quick"  # the shipped scoreboard's profile: the other profiles' rows join it


def scored_profiles(p: Page, main: str) -> list[str]:
    """The profiles a page is scored at: `main`, and with the shipped profile each profile it declares other
    parameters for (a scoreboard at smoke or paper alone has that profile's rows only)."""
    return [main, *(q for q in p.at_profile if q != main and main == SHIPPED_PROFILE)]


@dataclass
class ProfileSide:
    """A page at one profile, from stored runs only: its result once every run of its design is stored, and
    the design's size (seeds per cell, run length)."""

    profile: str
    stored: int
    needed: int
    seeds: int
    steps: int
    result: ClaimResult | None
    design: str = ""  # the design's one-line summary (protocol, window, λ): known before any run is stored


def at_profile(stem: str, profile: str, results_dir: str | Path, earlier: bool = False) -> ProfileSide:
    """Page `stem` at `profile` (its declared parameters there; with `earlier`, those before its design there last
    changed), computed from the stored runs only: the result when all of them are stored, else how many are
    (nothing is trained)."""
    p = page(stem)
    d = design_at(p, profile, earlier)
    keys = d.keys
    have = store.Store(results_dir)
    stored = sum(have.has(k) for k in keys)
    result = None
    if stored == len(keys):  # only then the page's own parameters: most calls stop at the count
        params = {**profile_defaults(p.notebook, profile, earlier), "results_dir": str(results_dir),
                  "train_missing": False}
        result = p.page(**params)  # reads the design's runs (and stored ones only for a rule history): never trains
    return ProfileSide(profile, stored, len(keys), len(d.seeds), d.run_steps, result, d.summary)
