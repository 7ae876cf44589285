"""The library's structure, read from its source with ast: no import cycle, no private name imported from
another module, claim families that depend on the core and the lower library only, small modules."""

import ast
from pathlib import Path

from .conftest import REPO

LIB = REPO / "critwin_lib"
FAMILIES = {"calibration", "window_placement", "budget_placement", "window_onset", "init_scale", "basin", "rates",
            "instrumentation", "grokking", "scan_split", "depth", "optimizer", "relapse"}
MAX_LINES = 420  # "no module over ~400 lines"


def _module(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, names taken from it) for every import of critwin_lib in the file, at any depth."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names if a.name.startswith("critwin_lib")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("critwin_lib"):
            names = [a.name for a in node.names]
            submodules = [n for n in names if (LIB / Path(*node.module.split(".")[1:]) / f"{n}.py").exists()
                          or (LIB / Path(*node.module.split(".")[1:]) / n).is_dir()]
            out += [(f"{node.module}.{n}", []) for n in submodules]
            out.append((node.module, [n for n in names if n not in submodules]))
    return out


GRAPH = {_module(p): _imports(p) for p in LIB.rglob("*.py")}


def test_no_import_cycle():
    edges = {m: {t for t, _ in imps if t in GRAPH and t != m} for m, imps in GRAPH.items()}
    state: dict[str, int] = {}

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(edges[m]):
            assert state.get(t) != 1, "import cycle: " + " → ".join([*path, m, t])
            if t not in state:
                visit(t, [*path, m])
        state[m] = 2

    for m in sorted(GRAPH):
        if m not in state:
            visit(m, [])


def test_no_private_name_is_imported_from_another_module():
    bad = [(m, t, n) for m, imps in GRAPH.items() for t, names in imps for n in names if n.startswith("_")]
    assert not bad, bad


def test_a_claim_family_imports_the_core_and_the_lower_library_only():
    for fam in FAMILIES:
        m = f"critwin_lib.claims.{fam}"
        targets = {t for t, _ in GRAPH[m]}
        assert not {f"critwin_lib.claims.{f}" for f in FAMILIES - {fam}} & targets, m
        assert "critwin_lib.claims.registry" not in targets and "critwin_lib.notebooks" not in targets, m
        assert "critwin_lib.plotting" not in targets, m  # analysis does not depend on the chart module
    lower = [m for m in GRAPH if not m.startswith("critwin_lib.claims") and m != "critwin_lib.notebooks"]
    for m in lower:  # the library below the claims layer does not reach up into it
        assert not any(t.startswith("critwin_lib.claims") for t, _ in GRAPH[m]), m


def test_modules_stay_small():
    big = {str(p.relative_to(REPO)): n for p in LIB.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not big, big
