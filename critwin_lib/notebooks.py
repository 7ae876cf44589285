"""Execute the claim notebooks with papermill, for the book and for `make reproduce`.

    python -m critwin_lib.notebooks run [--profile P] [--out DIR] [--no-train] [-p NAME VALUE]... NB...

Each executed copy goes to `--out` (default `book/claims/`), rendered for the offline book (charts
load the vendored scripts). A notebook that raises stops the command with one line naming the
notebook and the error, e.g. a bad parameter:
`c01_critical_window: ConfigError: window_start_frac: ... ends after the run`.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import nbformat
import yaml

from critwin_lib import experiment, mkl_lever, paths
from critwin_lib.claims import registry
from critwin_lib.config import ConfigError

REPO, NOTEBOOKS, CLAIMS_OUT = paths.REPO, paths.NOTEBOOKS, paths.BOOK_CLAIMS
VENDOR = "_static/vendor"  # inside the built site


def claim_notebooks() -> list[Path]:
    """The registered pages' notebooks (claims, calibration, explorer), in book order."""
    return [p.notebook for p in registry.PAGES]


def vendor_base(out_dir: Path) -> str:
    """Relative URL from a page built from `out_dir` to the vendored scripts of the built site
    (outside the repository, e.g. in tests, as if it were book/claims/)."""
    try:
        depth = len(out_dir.resolve().relative_to(REPO).parts)
    except ValueError:
        depth = 2
    return "../" * depth + VENDOR


def execute(notebook: Path, out_dir: Path = CLAIMS_OUT, parameters: dict[str, Any] | None = None,
            log_output: bool = True, cell_timeout: float | None = None) -> Path:
    """Run one notebook with papermill into out_dir; raise papermill's error if a cell fails (or, with
    `cell_timeout`, runs longer than that many seconds)."""
    import papermill as pm

    out_dir.mkdir(parents=True, exist_ok=True)
    os.environ["CRITWIN_ALTAIR_MODE"] = "vendored"
    os.environ["CRITWIN_VENDOR_BASE"] = vendor_base(out_dir)
    out = out_dir / notebook.name
    profile = (parameters or {}).get("profile") or registry.notebook_defaults(notebook).get("profile", "")
    # the kernel starts with the MKL AVX-512 shim where it applies: a page that trains in its own process has it too
    try:
        with tempfile.TemporaryDirectory(prefix="critwin-kernel-") as sockets, mkl_lever.preloaded():
            pm.execute_notebook(str(notebook), str(out), parameters=parameters or {}, cwd=str(notebook.parent),
                                kernel_name="python3", progress_bar=False, execution_timeout=cell_timeout,
                                stdout_file=sys.stdout if log_output else None,
                                stderr_file=sys.stderr if log_output else None, config=kernel_config(sockets))
    except BaseException:
        mark(out, profile, FAILED)  # a page that did not finish is never published as if it had
        raise
    nb = nbformat.read(out, as_version=4)  # tidied in memory, written once
    one_parameters_block(nb, out.name)
    drop_removed_widgets(nb)
    nb.metadata[RECORD] = {"profile": profile, "status": OK}
    nbformat.write(nb, out)
    return out


RESUME = "every run already trained is stored and kept; the same command resumes where it stopped"
RECORD, OK, FAILED = "critwin", "ok", "failed"  # an executed page's record: the profile it ran at, and how it ended
BOOK_PROFILES = {"paper": ("paper", "quick")}  # at paper, the pages not run there are the quick ones


def mark(out: Path, profile: str, status: str) -> None:
    """Record on an executed copy (if papermill left one) the profile it ran at and how it ended."""
    if not out.is_file():
        return
    try:
        nb = nbformat.read(out, as_version=4)
    except Exception:  # noqa: BLE001 - a copy too broken to read: remove it, so it cannot be published
        out.unlink()
        return
    nb.metadata[RECORD] = {"profile": profile, "status": status}
    nbformat.write(nb, out)


def page_problem(page: Path, profile: str) -> str | None:
    """Why an executed page may not go into a book built at `profile` (None: it may): it did not finish, it ran
    at another profile, or it carries no record (built before pages recorded how they ran)."""
    try:
        record = nbformat.read(page, as_version=4).metadata.get(RECORD)
    except Exception as e:  # noqa: BLE001 - an unreadable page is a reason, not a traceback
        return f"it cannot be read ({type(e).__name__})"
    if not isinstance(record, dict):
        return "it does not record the profile it ran at"
    if record.get("status") != OK:
        return f"it failed when it ran at the {record.get('profile')} profile"
    allowed = BOOK_PROFILES.get(profile, (profile,))
    if record.get("profile") not in allowed:
        return f"it ran at the {record.get('profile')} profile, not {' or '.join(allowed)}"
    return None


def check_book(out: Path, profile: str) -> list[str]:
    """One line for each executed page in `out` that may not go into a book built at `profile`."""
    return [f"{page}: {why}; `make book PROFILE={profile}` (or `make reproduce`) rebuilds it"
            for page in sorted(out.glob("*.ipynb")) if (why := page_problem(page, profile))]


def kernel_config(sockets: str) -> Any:
    """Talk to the kernel over local IPC sockets in `sockets` (a private temporary folder), not TCP:
    nothing listens on a port, and the kernel has no reason to warn about plain-text TCP."""
    from traitlets.config import Config

    return Config({"KernelManager": {"transport": "ipc", "ip": os.path.join(sockets, "kernel")}})


def drop_removed_widgets(nb: nbformat.NotebookNode) -> None:
    """Clear the outputs of cells tagged remove-output, and drop the notebook's widget state when no output shows a
    widget any more: the book then loads no widget manager for the page (whose fonts it cannot serve offline)."""
    for cell in nb.cells:
        if cell.cell_type == "code" and "remove-output" in cell.metadata.get("tags", []):
            cell.outputs = []
    shown = any("application/vnd.jupyter.widget-view+json" in o.get("data", {})
                for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    if not shown and "widgets" in nb.metadata:
        del nb.metadata["widgets"]


def one_parameters_block(nb: nbformat.NotebookNode, name: str) -> None:
    """In an executed notebook, fold papermill's injected cell into the notebook's own parameters cell: one
    block with the values the page was built with (and the notebook's comments), hidden behind a toggle, after
    a line saying how to change them (`name`: the notebook's file name)."""
    import ast

    tags = [c.metadata.get("tags", []) for c in nb.cells]
    i = next((k for k, t in enumerate(tags) if "parameters" in t), None)
    if i is None:
        return
    used = nb.metadata.get("papermill", {}).get("parameters", {})
    cell = nb.cells[i]
    lines = cell.source.splitlines()
    for node in reversed(ast.parse(cell.source).body):  # from the end: earlier offsets stay valid
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in used:
            v = node.value
            if v is not None and v.lineno == v.end_lineno:
                ln = lines[v.lineno - 1]
                lines[v.lineno - 1] = ln[:v.col_offset] + repr(used[node.target.id]) + ln[v.end_col_offset:]
            elif v is not None:  # a value over several lines: replaced by one line
                first = lines[v.lineno - 1][:v.col_offset] + repr(used[node.target.id])
                lines[v.lineno - 1:v.end_lineno] = [first]
    cell.source = "\n".join(lines)
    cell.metadata["tags"] = ["parameters", "hide-input"]
    nb.cells = [c for k, c in enumerate(nb.cells) if "injected-parameters" not in tags[k]]
    note = nbformat.v4.new_markdown_cell(
        f"**Parameters.** This page was built with the values below (click to show). To change one, run "
        f"`python -m critwin_lib.notebooks run notebooks/{name} -p NAME VALUE` (or `make reproduce`).")
    note.metadata["tags"] = ["parameters-note"]
    nb.cells.insert(nb.cells.index(cell), note)


def plan(notebooks: list[Path], params: dict[str, Any]) -> int:
    """Check every notebook's parameters and print, before anything runs, how many runs they need
    and about how long the missing ones take; return how many are missing. Raises ConfigError
    (naming the notebook) on a bad parameter."""
    by_dir: dict[Path, list] = {}
    for nb in notebooks:
        if nb.stem not in registry.BY_STEM:
            continue
        defaults = registry.profile_defaults(nb, params.get("profile"))
        p = {**defaults, **{k: v for k, v in params.items() if k in defaults}}  # papermill ignores the others
        try:
            runs = registry.planned_runs(nb.stem, p)
        except ConfigError as e:
            raise ConfigError(f"{nb.stem}: ConfigError: {e}") from None
        by_dir.setdefault((nb.parent / str(p["results_dir"])).resolve(), []).extend(runs)
    missing = 0
    for results, runs in by_dir.items():
        workers = params.get("workers", -1)
        missing += experiment.print_plan(runs, results, workers, label=f"reproduce: {len(notebooks)} notebooks need")
    return missing


def missing_runs(notebooks: list[Path], params: dict[str, Any], most: int = 3) -> str:
    """The first `most` runs the notebooks need that are not stored, by folder (a folder that is there without
    its meta.json is an incomplete run, which `make verify` names too)."""
    named: dict[Path, bool] = {}
    for nb in notebooks:
        if nb.stem not in registry.BY_STEM or len(named) >= most:
            continue
        p = {**registry.profile_defaults(nb, params.get("profile")), **params}
        store = experiment.Store((nb.parent / str(p["results_dir"])).resolve())
        for cfg in registry.planned_runs(nb.stem, p):
            key = experiment.run_key(cfg)
            if not store.has(key) and len(named) < most:
                named[store.path(key)] = store.path(key).is_dir()
    return ", ".join(f"{path}" + (" (incomplete: meta.json missing)" if there else "") for path, there in named.items())


SMOKE_RESULTS = paths.BUILD / "results-smoke"  # where smoke runs go unless results_dir is given
_TYPES = {bool: (bool,), int: (int,), float: (int, float), str: (str,), list: (list,), dict: (dict,)}
_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "text", list: "a list", dict: "a mapping"}


def check_params(notebooks: list[Path], params: dict[str, Any]) -> dict[Path, dict[str, Any]]:
    """Each notebook's parameters from the command line: a name no selected notebook declares, or a value of
    another type than the parameter's default (a boolean where a number goes, text where a list goes), is a
    ConfigError naming it, before any kernel starts. Each notebook gets only the names it declares, and the values
    its page declares for the profile (`Page.at_profile`) where the command line does not set them."""
    declared = {nb: registry.notebook_defaults(nb) for nb in notebooks}
    known = {name for d in declared.values() for name in d}
    unknown = sorted(set(params) - known)
    if unknown:
        raise ConfigError(f"{unknown[0]}: no selected notebook has this parameter; known: {sorted(known)}")
    out = {}
    for nb, defaults in declared.items():
        mine = {k: v for k, v in params.items() if k in defaults}
        for name, value in mine.items():
            want = _TYPES.get(type(defaults[name]), (type(defaults[name]),))
            if not isinstance(value, want) or (isinstance(value, bool) and bool not in want):
                kind = _KINDS.get(type(defaults[name]), type(defaults[name]).__name__)
                raise ConfigError(f"{name}: must be {kind} like its default {defaults[name]!r}, got {value!r}")
        page_values = registry.profile_defaults(nb, params.get("profile"))
        out[nb] = {**{k: v for k, v in page_values.items() if v != defaults.get(k)}, **mine}
    return out


class _Values(yaml.SafeLoader):
    """YAML as `-p` reads it: a number in exponent form without a dot ("1e30") is a number, as in YAML 1.2 and
    Python, not text (YAML 1.1 reads "1e30" as text but "1.0e+30" as a number)."""


_Values.add_implicit_resolver("tag:yaml.org,2002:float", re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+$"),
                              list("-+0123456789."))


def parameter_value(name: str, text: str) -> Any:
    """A `-p NAME VALUE` value read as YAML (`_Values`: numbers in any float syntax are numbers, in lists too);
    text that is not valid YAML is a ConfigError naming the parameter."""
    try:
        return yaml.load(text, Loader=_Values)  # noqa: S506 - a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ConfigError(f"{name}: not a valid value ({first}), got {text!r}") from None


def one_line_error(notebook: Path, err: BaseException) -> str:
    """`name: ErrorType: message` on one line (papermill's execution errors carry the kernel's)."""
    ename = getattr(err, "ename", type(err).__name__)
    evalue = str(getattr(err, "evalue", err)).strip().splitlines()
    return f"{notebook.stem}: {ename}: {evalue[0] if evalue else ''}"


def project(profile: str, bench: Path) -> int:
    """Print the runs every page needs at `profile`, and their time at the rate `make bench` measured."""
    import json

    pages = claim_notebooks()
    params: dict[str, Any] = {"profile": profile}
    runs = []
    for nb in pages:
        if nb.stem in registry.BY_STEM:
            runs += registry.planned_runs(nb.stem, {**registry.profile_defaults(nb, profile), **params})
    missing = plan(pages, params)
    unique = {experiment.run_key(c): c for c in runs}
    store = experiment.Store(paths.RESULTS)
    todo = [c for k, c in unique.items() if not store.has(k)]
    steps = sum(c.train.steps for c in todo)
    if not bench.is_file():
        print(f"{profile} plan: {missing} runs to train ({steps:,} steps); `make bench` measures this machine's "
              f"rate, then this command projects their time")
        return 0
    rate = json.loads(bench.read_text())
    hours = steps / rate["steps_per_run"] / rate["runs_per_hour"]
    print(f"{profile} plan: {missing} runs to train ({steps:,} steps); at {rate['runs_per_hour']:.1f} runs of "
          f"{rate['steps_per_run']:,} steps per hour ({rate['device']}, `make bench` of {rate['created']}): "
          f"~{hours:.1f} hours")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.notebooks", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="execute claim notebooks")
    r.add_argument("notebooks", nargs="*", type=Path, help="default: every notebooks/cNN_*.ipynb and xNN_*.ipynb")
    r.add_argument("--profile", default=None, help="smoke | quick | paper (default: the notebook's own)")
    r.add_argument("--out", type=Path, default=CLAIMS_OUT)
    r.add_argument("--no-train", action="store_true", help="use stored results only; fail if any run is missing")
    r.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                   help="set a parameter (YAML value)")
    r.add_argument("--quiet", action="store_true", help="do not echo the notebooks' output")
    r.add_argument("--claims", nargs="+", default=None, metavar="ID",
                   help="only the pages that decide these scoreboard ids (C1 C4b ...)")
    r.add_argument("--missing-only", action="store_true",
                   help="only notebooks without an executed copy in --out that a book at --book may show")
    r.add_argument("--book", default=None, choices=("smoke", "quick", "paper"),
                   help="with --missing-only: the profile of the book (default: --profile)")
    ck = sub.add_parser("check", help="refuse (one line each) executed pages a book at this profile may not show")
    ck.add_argument("--profile", default="quick")
    ck.add_argument("--out", type=Path, default=CLAIMS_OUT)
    pl = sub.add_parser("plan", help="how many runs every page needs at a profile, and how long they take")
    pl.add_argument("--profile", default="paper", choices=("smoke", "quick", "paper"))
    pl.add_argument("--bench", type=Path, default=paths.BUILD / "bench.json",
                    help="the rates `make bench` measured (default: _build/bench.json)")
    args = ap.parse_args(argv)
    if args.cmd == "plan":
        return project(args.profile, args.bench)
    if args.cmd == "check":
        problems = check_book(args.out, args.profile)
        for line in problems:
            print(f"error: book: {line}", file=sys.stderr)
        return 1 if problems else 0

    try:
        params: dict[str, Any] = {name: parameter_value(name, value) for name, value in args.p}
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if args.profile:
        params["profile"] = args.profile
    if args.no_train:
        params["train_missing"] = False
    if params.get("profile") == "smoke" and "results_dir" not in params:  # never into the shipped results/
        params["results_dir"] = str(SMOKE_RESULTS)
    from papermill.exceptions import PapermillExecutionError

    absent = [str(nb) for nb in args.notebooks if not nb.is_file() or nb.stem not in registry.BY_STEM
              or nb.suffix != ".ipynb"]
    if absent:
        print(f"error: not a page of the book: {', '.join(absent)} (the pages are notebooks/cNN_*.ipynb and "
              f"notebooks/xNN_*.ipynb)", file=sys.stderr)
        return 1
    try:
        notebooks = args.notebooks or ([p.notebook for p in registry.by_claims(args.claims)] if args.claims
                                       else claim_notebooks())
        if args.missing_only:  # missing: no executed copy, or one the book at this profile would refuse
            want = args.book or params.get("profile") or "quick"
            notebooks = [nb for nb in notebooks if not (args.out / nb.name).exists()
                         or page_problem(args.out / nb.name, want)]
            if not notebooks:
                print("reproduce: every page is built at this profile; nothing to run", file=sys.stderr)
                return 0
        per_notebook = check_params(notebooks, params)
        missing = plan(notebooks, params)
    except ConfigError as e:  # a bad parameter: one line, before anything is trained
        print(f"error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 1
    if missing and args.no_train:
        print(f"error: {missing} runs are missing from the results and --no-train was given (first: "
              f"{missing_runs(notebooks, params)}); `make reproduce` trains them", file=sys.stderr)
        return 1
    for i, nb in enumerate(notebooks, 1):
        head = f"[{i}/{len(notebooks)}] {nb.stem}"
        if args.quiet:  # one line per notebook: its name now, its time when it is done
            print(f"{head} ...", end="", file=sys.stderr, flush=True)
        else:
            print(f"== {head} {per_notebook[nb]}", file=sys.stderr, flush=True)
        start = time.monotonic()
        try:
            execute(nb, args.out, per_notebook[nb], log_output=not args.quiet)
        except PapermillExecutionError as e:
            print(f"{' failed' if args.quiet else ''}\nerror: {one_line_error(nb, e)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"\ninterrupted at {nb.stem}: {RESUME}", file=sys.stderr)
            return 130
        except Exception as e:  # noqa: BLE001 - a kernel that died, or papermill's own failure: one line
            print(f"{' failed' if args.quiet else ''}\nerror: {nb.stem}: the kernel stopped ({type(e).__name__}: "
                  f"{str(e).strip().splitlines()[0] if str(e).strip() else ''}); {RESUME}", file=sys.stderr)
            return 1
        if args.quiet:
            print(f" {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
