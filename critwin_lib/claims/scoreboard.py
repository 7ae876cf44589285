"""`results/claims.csv` and `results/numbers.json`: every page's scoreboard rows and every number its page
glues into the book, recomputed from the stored results with the notebooks' default parameters, so the
scoreboard, the book and the committed files cannot disagree (a test recomputes both). A page that declares
parameters for another profile (the paper length, `Page.at_profile`) has rows at that profile too: its verdict
once all of that design's runs are stored, NOT_RUN with the count stored until then.

    python -m critwin_lib.claims [--profile P] [--results DIR] [--out FILE|-]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

from critwin_lib import paths
from critwin_lib.claims import registry
from critwin_lib.config import ConfigError
from critwin_lib.store import DamagedRun, MissingResults

CLAIMS_CSV_COLUMNS = ["claim", "statement", "paper", "ours", "profile", "seeds", "verdict"]
NOT_RUN = "not run yet"  # a profile's row before all of its design's runs are stored


def page_params(p: registry.Page, profile: str, results_dir: str | Path) -> dict[str, Any]:
    """A page's notebook defaults at `profile`, reading the stored results only."""
    return {**registry.profile_defaults(p.notebook, profile), "results_dir": str(results_dir),
            "train_missing": False}


def compute(profile: str, results_dir: str | Path) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Every claim's rows and every page's glued numbers ({stem: {glue key: value}}), recomputed from the
    stored results with the notebooks' default parameters; then, for pages that declare another profile, that
    profile's rows and numbers (keys `<prefix><profile>_...`) from its stored runs. At the shipped profile a
    missing run is an error; at another (`--profile paper` after `make reproduce PROFILE=paper CLAIMS=...`) a page
    whose runs are not all stored has NOT_RUN rows."""
    rows, numbers = [], {}
    for p in registry.PAGES:
        if profile == registry.SHIPPED_PROFILE:
            result = p.page(**page_params(p, profile, results_dir))
            page_rows, page_numbers = result.rows, {k: _plain(v) for k, v in result.numbers.items()}
        else:
            page_rows, page_numbers = profile_side(p, profile, results_dir, {})
        rows += page_rows
        numbers[p.stem] = {p.glue_prefix + k: v for k, v in page_numbers.items()}
    main = {r["claim"]: r for r in rows}
    for p in registry.PAGES:
        for other in registry.scored_profiles(p, profile)[1:]:
            side_rows, side = profile_side(p, other, results_dir, main)
            rows += side_rows
            numbers[p.stem].update({f"{p.glue_prefix}{other}_{k}": v for k, v in side.items()})
    return rows, numbers


def profile_side(p: registry.Page, profile: str, results_dir: str | Path, main: dict[str, dict[str, Any]]
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Page `p`'s rows and numbers at `profile` from the stored runs; NOT_RUN rows (with how many of the design's
    runs are stored; statement and paper from `main`, the rows by claim at the main profile) until every run is."""
    return read_side(p, registry.at_profile(p.stem, profile, results_dir), main)


def read_side(p: registry.Page, side: registry.ProfileSide, main: dict[str, dict[str, Any]]
              ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`profile_side` for a page already read at that profile (`registry.at_profile`)."""
    profile = side.profile
    head = {"profile": profile, "stored": side.stored, "needed": side.needed, "seeds": side.seeds,
            "steps": side.steps, "design": side.design}
    if side.result is not None:
        return side.result.rows, {**head, **{k: _plain(v) for k, v in side.result.numbers.items()}}
    ours = (f"{side.stored} of {side.needed} runs of this design stored; `make reproduce PROFILE={profile} "
            f"CLAIMS=\"{' '.join(p.claims)}\"` trains the rest")
    rows = [{**main.get(c, {"claim": c, "statement": "", "paper": ""}), "ours": ours, "profile": profile,
             "seeds": side.seeds, "verdict": NOT_RUN} for c in p.claims]
    return rows, {**head, **dict.fromkeys(verdict_keys(p.claims), NOT_RUN)}


def verdict_keys(claims: tuple[str, ...]) -> list[str]:
    """The numbers a page glues its verdicts under: "verdict", or "verdict_c2", "verdict_c3", ... for a page of
    several claims."""
    return [f"verdict_{c.lower()}" for c in claims] if len(claims) > 1 else ["verdict"]


def scoreboard(profile: str, results_dir: str | Path) -> list[dict[str, Any]]:
    """Every claim's rows, recomputed from the stored results with the notebooks' default parameters."""
    return compute(profile, results_dir)[0]


def _plain(v: Any) -> Any:
    """numpy scalars as Python numbers, for JSON."""
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def numbers_json(numbers: dict[str, dict[str, Any]]) -> str:
    return json.dumps(numbers, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def to_csv(rows: list[dict[str, Any]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CLAIMS_CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.claims",
                                 description="write results/claims.csv from the stored results")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--results", type=Path, default=paths.RESULTS)
    ap.add_argument("--out", type=Path, default=None,
                    help="default: <results>/claims.csv (quick) or claims_<profile>.csv; '-' for stdout (then "
                         "numbers.json is not written)")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        print(f"error: no results folder {args.results} (`make reproduce PROFILE={args.profile}` trains into it)",
              file=sys.stderr)
        return 1
    try:
        rows, numbers = compute(args.profile, args.results)
    except (DamagedRun, MissingResults, ConfigError) as e:  # each names the run or parameter and the repair
        print(f"error: {e}", file=sys.stderr)
        return 1
    text = to_csv(rows)
    if str(args.out) == "-":
        sys.stdout.write(text)
        return 0
    suffix = "" if args.profile == "quick" else f"_{args.profile}"
    (args.out or args.results / f"claims{suffix}.csv").write_text(text)
    (args.results / f"numbers{suffix}.json").write_text(numbers_json(numbers))
    return 0
