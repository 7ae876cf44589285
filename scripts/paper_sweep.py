"""Train the missing runs of the 20,000-step designs, claim by claim, in the background of a working session.

`make reproduce PROFILE=paper` trains the designs as the registry declares them, which is the look a sequential
design has reached. This script also trains a look ahead (`--seeds C1=22`: the next look's seeds) before the
registry moves to it, so the page keeps showing the look it has until the next one is stored whole. Runs land in
`results/runs/` one by one (an interrupted sweep loses no finished run) and are committed like any other.

    python scripts/paper_sweep.py C1 C2C3 C4            # the declared designs, windows first
    python scripts/paper_sweep.py C1 --seeds C1=22      # C1's second look
    python scripts/paper_sweep.py C4 --upcoming         # a design registered before its runs
"""

from __future__ import annotations

import argparse

from critwin_lib import experiment
from critwin_lib.claims import registry
from critwin_lib.config import ConfigError

STEMS = {"C1": "c01_critical_window", "C2C3": "c02_c03_budget_placement", "C4": "c04_sharp_onset",
         "C6C7": "c06_c07_basin"}


def order(spec: tuple) -> tuple:
    """Windows first, then the conditions they are compared with, C1's second reading (quarter budget) last, seed
    by seed: an interrupted sweep has then stored what the primary verdict needs, look by look. An onset sweep
    keeps its design's order (onset by onset, the fine grid's every other onset first), so that a cut-off sweep
    has tiled its bracket at twice the spacing with every seed."""
    labels = spec[0]
    cond = str(labels.get("condition", ""))
    return cond != "window", "quarter" in cond, 0 if "onset" in labels else labels.get("seed", 0)


def configs(names: list[str], seeds: dict[str, int], profile: str = "paper", upcoming: bool = False) -> list:
    """The runs of the named designs at `profile` (with `upcoming`: the designs registered there before their
    runs, `Page.upcoming`), each once, in `order` within a design."""
    out, seen = [], set()
    for name in names:
        p = registry.page(STEMS[name])
        params = (registry.upcoming_defaults(p, profile) if upcoming
                  else registry.profile_defaults(p.notebook, profile))
        if name in seeds:
            params["n_seeds"] = seeds[name]
        specs = p.design(**registry.design_params(params)).specs
        for _, cfg in sorted(specs, key=order):
            key = experiment.run_key(cfg)
            if key not in seen:
                seen.add(key)
                out.append(cfg)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("designs", nargs="+", choices=sorted(STEMS))
    ap.add_argument("--seeds", action="append", default=[], metavar="DESIGN=N",
                    help="seeds per condition for a design (a later look than the registry's)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--profile", default="paper", help="the profile whose designs to train (default: paper)")
    ap.add_argument("--upcoming", action="store_true",
                    help="train the designs registered before their runs (Page.upcoming) instead of the declared ones")
    args = ap.parse_args()
    seeds = {}
    for item in args.seeds:
        name, _, n = item.partition("=")
        if name not in STEMS or not n.isdigit():
            ap.error(f"--seeds {item!r}: expected DESIGN=N with DESIGN one of {sorted(STEMS)}")
        seeds[name] = int(n)
    try:
        runs = configs(args.designs, seeds, args.profile, args.upcoming)
    except ConfigError as e:
        ap.error(str(e))
    experiment.sweep(runs, "results", workers=args.workers)


if __name__ == "__main__":
    main()
