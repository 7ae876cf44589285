"""Claim notebooks: committed clean, executable at the smoke profile, and strict about bad parameters."""

import json
import re
import subprocess
import sys

import nbformat
import pytest

from critwin_lib import store
from critwin_lib.claims import registry
from critwin_lib.claims.core import VERDICTS
from critwin_lib.notebooks import claim_notebooks

from .conftest import REPO, execute_pages

NOTEBOOKS = claim_notebooks()


def test_there_are_claim_notebooks():
    assert [nb.stem for nb in NOTEBOOKS] == [
        "c00_calibration", "c01_critical_window", "c01_relapse", "c02_c03_budget_placement", "c04_sharp_onset",
        "c04b_window_vs_fitting", "c05_init_scale_window", "c06_c07_basin", "c08_grokking", "c09_scan",
        "c10_two_timescales", "c11_depth", "c12_optimizer", "c13_instrumentation", "x01_explorer"]
    # every committed notebook is a registered page, and each page's file names the claims it decides
    assert sorted(p.stem for p in (REPO / "notebooks").glob("*.ipynb")) == sorted(nb.stem for nb in NOTEBOOKS)
    for p in (p for p in registry.PAGES if p.claims):  # c02_c03_... decides C2 and C3, c04b_... C4b
        parts = [re.match(r"c(\d+)(\w*)", part) for part in p.glue_prefix.rstrip("_").split("_")]
        assert tuple(f"C{int(m.group(1))}{m.group(2)}" for m in parts) == p.claims, p.stem


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebook_has_no_outputs_and_one_parameters_cell(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in nb.cells if c.cell_type == "code")
    assert "widgets" not in nb.metadata


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_reads_every_parameter_of_the_parameters_cell(path):
    # papermill skips a line it cannot parse (e.g. a comment with "=" in it) and keeps going: the default
    # would then silently be missing from the plan, the scoreboard and `-p` overrides
    import ast

    from critwin_lib.claims.registry import notebook_defaults

    cell = next(c for c in nbformat.read(path, as_version=4).cells if "parameters" in c.metadata.get("tags", []))
    assigned = [n.target.id for n in ast.parse(cell.source).body if isinstance(n, ast.AnnAssign)]
    assert assigned and list(notebook_defaults(path)) == assigned


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_at_smoke_and_glues_a_verdict(smoke_site, path):
    nb = nbformat.read(smoke_site / "book" / "claims" / path.name, as_version=4)
    assert nb.metadata["papermill"]["parameters"]["profile"] == "smoke"
    glued = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                pytest.fail(f"{path.stem}: {out['ename']}: {out['evalue']}")
            meta = out.get("metadata", {}).get("scrapbook", {})
            if meta:
                glued[meta["name"]] = out["data"]
    prefix = registry.page(path.stem).glue_prefix.rstrip("_")
    if prefix.startswith("x"):  # an explorer page: a grid of cells, no verdict
        assert glued.get(f"{prefix}_n_cells")
        return
    if prefix == "c00":  # the calibration page states which protocols give both fates, no verdict
        assert {"c00_mid_fit_both_fates", "c00_early_fit_both_fates"} <= set(glued)
        return
    if path.stem == "c01_relapse":  # branches compared, no claim decided
        assert {"c01_relapse_k_off", "c01_relapse_k_full", "c01_relapse_p_ramp", "c01_relapse_state_all"} <= set(glued)
        return
    verdicts = [k for k in glued if k.startswith(f"{prefix}_verdict")]
    assert verdicts
    for key in verdicts:
        text = next(iter(json.loads(json.dumps(glued[key])).values()))
        assert text.strip("'\"") in VERDICTS


@pytest.mark.slow
def test_a_quiet_run_prints_one_line_per_notebook_and_no_kernel_warning(tmp_path):
    pages = [REPO / "notebooks" / "c00_calibration.ipynb", REPO / "notebooks" / "c09_scan.ipynb"]
    proc = subprocess.run(
        [sys.executable, "-m", "critwin_lib.notebooks", "run", "--quiet", "--no-train", "--profile", "quick",
         "--out", str(tmp_path), *map(str, pages)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = (proc.stdout + proc.stderr).strip().splitlines()
    assert lines[0].startswith("reproduce: 2 notebooks need:"), lines
    assert [re.sub(r"\d+ s$", "N s", line) for line in lines[1:]] == [
        "[1/2] c00_calibration ... N s", "[2/2] c09_scan ... N s"], lines
    assert not list(tmp_path.glob("kernel*")) and not list((REPO / "notebooks").glob("kernel-*"))


def test_a_missing_notebook_is_one_line(capsys):
    from critwin_lib import notebooks

    assert notebooks.main(["run", "notebooks/c00_setup.ipynb"]) == 1
    assert capsys.readouterr().err.strip() == ("error: not a page of the book: notebooks/c00_setup.ipynb (the pages "
                                               "are notebooks/cNN_*.ipynb and notebooks/xNN_*.ipynb)")
    assert notebooks.main(["run", str(REPO / "README.md")]) == 1  # a file that is not a page: one line too
    assert capsys.readouterr().err.strip().startswith("error: not a page of the book: ")
    with pytest.raises(SystemExit):
        notebooks.main(["plan", "--profile", "bogus"])
    assert "invalid choice: 'bogus'" in capsys.readouterr().err


def test_ctrl_c_or_a_dead_kernel_ends_with_one_line_that_says_how_to_resume(tmp_path, monkeypatch, capsys):
    from critwin_lib import notebooks

    monkeypatch.setattr(notebooks, "plan", lambda nbs, params: 0)
    for raised, code in [(KeyboardInterrupt(), 130), (RuntimeError("Kernel died before replying"), 1)]:
        def stop(*a, exc=raised, **k):
            raise exc
        monkeypatch.setattr(notebooks, "execute", stop)
        assert notebooks.main(["run", "--quiet", "--out", str(tmp_path), str(NOTEBOOKS[1])]) == code
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        assert "the same command resumes where it stopped" in err[-1] and "Traceback" not in "\n".join(err)


@pytest.mark.slow
def test_a_bad_parameter_fails_at_once_with_one_line_naming_it(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "critwin_lib.notebooks", "run", "--quiet", "--profile", "smoke",
         "--out", str(tmp_path / "out"), "-p", "results_dir", str(tmp_path / "results"),
         "-p", "window_start_frac", "0.9", str(REPO / "notebooks" / "c01_critical_window.ipynb")],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: c01_critical_window: ConfigError: window_start_frac:"), last
    assert "ends after the run" in last
    assert not (tmp_path / "results").exists()  # failed before any training


@pytest.fixture(scope="module")
def quick_pages(tmp_path_factory):
    """Every page executed at the quick profile from the shipped results only, as `make book` does."""
    out = tmp_path_factory.mktemp("quick")
    return out, execute_pages(out, {"profile": "quick", "train_missing": False})


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_shipped_quick_results_are_complete(quick_pages, path):
    # `make book`: every run a notebook needs at the quick profile is in results/, so nothing is trained.
    out, errors = quick_pages
    assert errors[path] is None, errors[path]
    assert nbformat.read(out / path.name, as_version=4).metadata["papermill"]["exception"] is None


@pytest.mark.slow
@pytest.mark.parametrize(("stem", "key"), [("c01_critical_window", "seq_status"),
                                           ("c02_c03_budget_placement", "c2_seq_status")])
def test_c1_and_c2_pages_show_the_paper_lengths_looks_beside_their_own(quick_pages, stem, key):
    # The sequential design at the other length, once its runs are all stored: its status and one row per look
    # (12, 22, 32 seeds); before that, no such table (the side-by-side paragraph says how many runs are stored).
    out, _ = quick_pages
    shown = ["".join(o.get("data", {}).get("text/markdown", "") or o.get("data", {}).get("text/plain", ""))
             for c in nbformat.read(out / f"{stem}.ipynb", as_version=4).cells for o in c.get("outputs", [])]
    heads = [i for i, t in enumerate(shown) if t.startswith("**The sequential design at the paper's length:**")]
    paper = registry.at_profile(stem, "paper", REPO / "results").result
    if paper is None:
        assert heads == []
        return
    at = heads[0]
    assert shown[at].endswith(f" {paper.numbers[key]}.")
    rows = [line.split()[:3] for line in shown[at + 1].splitlines()[1:4]]
    assert rows == [["0", "1", "12"], ["1", "2", "22"], ["2", "3", "32"]]


def test_reproduce_prints_the_whole_plan_before_anything_runs(tmp_path, capsys):
    from critwin_lib import notebooks

    notebooks.plan(NOTEBOOKS, {"profile": "paper", "results_dir": str(tmp_path / "results")})
    line = capsys.readouterr().err.strip().splitlines()[-1]
    m = __import__("re").match(r"reproduce: \d+ notebooks need: (\d+) runs, 0 stored, (\d+) to train on .*min", line)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) > 100, line
    assert not (tmp_path / "results").exists()  # planning trains and writes nothing
    defaults = registry.notebook_defaults(REPO / "notebooks" / "c04_sharp_onset.ipynb")
    runs = registry.planned_runs("c04_sharp_onset", {**defaults, "profile": "paper", "n_seeds": 12, "cliff_fracs": []})
    # none + 7 onsets at 12 seeds, and the same under mid-fit at 4 seeds (the sensitivity table)
    assert len(runs) == 12 * 8 + 4 * 8 and all(r.train.steps == 20_000 for r in runs)
    fine = registry.planned_runs("c04_sharp_onset", {**defaults, "profile": "paper", "n_seeds": 12,
                                                     "cliff_fracs": [0.4, 0.475]})
    # the fine grid adds onsets 8,000-9,500 every 100 steps at 8 seeds (its no-weight-decay runs are the sweep's)
    assert len({store.run_key(r) for r in fine}) == len(runs) + 16 * 8


@pytest.mark.parametrize("name, value, message", [
    ("n_sedes", "4", "n_sedes: no selected notebook has this parameter"),
    ("window_start_frac", "true", "window_start_frac: must be a number like its default 0.375, got True"),
    ("workers", "many", "workers: must be an integer like its default -1, got 'many'"),
    ("results_dir", "5", "results_dir: must be text like its default '../results', got 5"),
    ("slider_starts", "abc", "slider_starts: must be a list like its default"),
    ("n_seeds", "100000", "n_seeds: at most 64 seeds per cell, got 100000"),
    ("__import__('os').system('true')", "1", "no selected notebook has this parameter"),
])
def test_a_bad_parameter_is_one_line_before_any_kernel_starts(tmp_path, capsys, monkeypatch, name, value, message):
    from critwin_lib import notebooks

    monkeypatch.setattr(notebooks, "execute", lambda *a, **k: pytest.fail("a kernel started"))
    code = notebooks.main(["run", "--profile", "smoke", "-p", "results_dir", str(tmp_path), "-p", name, value,
                           str(REPO / "notebooks" / "c01_critical_window.ipynb")] if name != "results_dir" else
                          ["run", "--profile", "smoke", "-p", name, value,
                           str(REPO / "notebooks" / "c01_critical_window.ipynb")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].startswith("error: ") and message in err[-1], err[-1]
    assert not any(tmp_path.iterdir())


def test_smoke_runs_do_not_go_into_the_shipped_results_unless_asked(monkeypatch):
    from critwin_lib import notebooks

    seen = {}
    monkeypatch.setattr(notebooks, "plan", lambda nbs, params: 0)
    monkeypatch.setattr(notebooks, "execute", lambda nb, out, params, **k: seen.update(params))
    assert notebooks.main(["run", "--quiet", "--profile", "smoke", str(NOTEBOOKS[1])]) == 0
    assert seen["results_dir"] == str(notebooks.SMOKE_RESULTS)
    assert notebooks.main(["run", "--quiet", "--profile", "smoke", "-p", "results_dir", "../results",
                           str(NOTEBOOKS[1])]) == 0
    assert seen["results_dir"] == "../results"


def test_reproduce_claims_runs_only_the_pages_deciding_those_ids(tmp_path, monkeypatch):
    from critwin_lib import notebooks

    ran = []
    monkeypatch.setattr(notebooks, "plan", lambda nbs, params: 0)
    monkeypatch.setattr(notebooks, "execute", lambda nb, out, params, **k: ran.append(nb.stem))
    assert notebooks.main(["run", "--quiet", "--out", str(tmp_path), "--claims", "C4", "C1"]) == 0
    assert ran == ["c01_critical_window", "c04_sharp_onset"]
    _built(tmp_path / "c01_critical_window.ipynb", "quick")
    ran.clear()
    assert notebooks.main(["run", "--quiet", "--out", str(tmp_path), "--missing-only"]) == 0
    assert "c01_critical_window" not in ran and len(ran) == len(NOTEBOOKS) - 1


def _built(path, profile: str, status: str = "ok") -> None:
    """An executed page as `notebooks.execute` leaves it: its record says the profile it ran at and how it ended."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["critwin"] = {"profile": profile, "status": status}
    nbformat.write(nb, path)


def test_a_page_of_another_profile_or_a_failed_one_is_refused_by_the_book_and_rebuilt(tmp_path, monkeypatch,
                                                                                       capsys):
    """After `make reproduce PROFILE=smoke CLAIMS=C1` the C1 page is a smoke page: a quick book refuses it (one line
    naming it) and `--missing-only` at quick builds it again; a failed page likewise; at paper the quick pages pass;
    when every page is built at the profile there is nothing to run (and no error)."""
    from critwin_lib import notebooks

    for nb in NOTEBOOKS:
        _built(tmp_path / nb.name, "quick")
    assert notebooks.main(["check", "--out", str(tmp_path), "--profile", "quick"]) == 0
    assert notebooks.main(["check", "--out", str(tmp_path), "--profile", "paper"]) == 0
    _built(tmp_path / "c01_critical_window.ipynb", "smoke")
    _built(tmp_path / "c04_sharp_onset.ipynb", "quick", "failed")
    assert notebooks.main(["check", "--out", str(tmp_path), "--profile", "quick"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "c01_critical_window.ipynb: it ran at the smoke profile, not quick" in err[0]
    assert "c04_sharp_onset.ipynb: it failed when it ran at the quick profile" in err[1]
    ran = []
    monkeypatch.setattr(notebooks, "plan", lambda nbs, params: 0)
    monkeypatch.setattr(notebooks, "execute", lambda nb, out, params, **k: ran.append(nb.stem))
    assert notebooks.main(["run", "--quiet", "--out", str(tmp_path), "--profile", "quick", "--missing-only"]) == 0
    assert ran == ["c01_critical_window", "c04_sharp_onset"]
    for nb in NOTEBOOKS:
        _built(tmp_path / nb.name, "quick")
    ran.clear()
    assert notebooks.main(["run", "--quiet", "--out", str(tmp_path), "--profile", "quick", "--missing-only",
                           "--claims", "C1"]) == 0
    assert ran == [] and "nothing to run" in capsys.readouterr().err


def test_a_page_whose_kernel_fails_is_recorded_as_failed(tmp_path, monkeypatch):
    import papermill

    from critwin_lib import notebooks

    def fail(src, out, **kw):
        nbformat.write(nbformat.v4.new_notebook(), out)  # papermill leaves the partly run copy
        raise RuntimeError("kernel died")

    monkeypatch.setattr(papermill, "execute_notebook", fail)
    with pytest.raises(RuntimeError):
        notebooks.execute(NOTEBOOKS[1], tmp_path, {"profile": "smoke"})
    assert notebooks.page_problem(tmp_path / NOTEBOOKS[1].name, "smoke") == \
        "it failed when it ran at the smoke profile"


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_built_page_has_one_parameters_block_with_the_values_it_was_built_with(smoke_site, path):
    nb = nbformat.read(smoke_site / "book" / "claims" / path.name, as_version=4)
    tags = [c.metadata.get("tags", []) for c in nb.cells]
    assert not any("injected-parameters" in t for t in tags)
    blocks = [c for c, t in zip(nb.cells, tags, strict=True) if "parameters" in t]
    assert len(blocks) == 1 and "hide-input" in blocks[0].metadata["tags"]
    assert "profile: str = 'smoke'" in blocks[0].source
    assert "-p NAME VALUE" in nb.cells[nb.cells.index(blocks[0]) - 1].source


def test_reproduce_at_paper_passes_each_page_its_paper_parameters_unless_the_command_line_sets_them():
    from critwin_lib import notebooks

    c1, c13 = (registry.page(s).notebook for s in ("c01_critical_window", "c13_instrumentation"))
    got = notebooks.check_params([c1, c13], {"profile": "paper"})
    assert got[c1] == {"profile": "paper", "n_seeds": 32, "alt_protocol": "", "looks": [12, 22, 32],
                       "slider_starts": [], "protocol_name": "quarter-fit-matrices-20k", "window_lambda": 12.0,
                       "first_seed": 4, "full_equal_lambda": False, "decay_protocol": "quarter-fit-paper-decay-20k",
                       "decay_window_lambda": 12.0, "decay_n_seeds": 12}  # the 25 % design (its window starts
    # where the notebook's does, and the quarter budget is the notebook's own), its decay-set row on 12 seeds
    assert got[c13] == {"profile": "paper"}  # no paper parameters declared: the notebook's own
    assert notebooks.check_params([c1], {"profile": "paper", "n_seeds": 4})[c1]["n_seeds"] == 4
    assert notebooks.check_params([c1], {})[c1] == {}  # at the notebook's own profile nothing is added
