"""Project files that must agree with each other."""

import re
import subprocess

import pytest
import yaml

from critwin_lib.sizes import PROFILES

from .conftest import REPO


def pins(lines):
    return sorted(line.strip() for line in lines if re.match(r"^[A-Za-z0-9_.\[\]-]+==", line.strip()))


def test_environment_yml_mirrors_requirements():
    req = pins((REPO / "requirements.txt").read_text().splitlines())
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pins(pip_section) == req
    assert "-e ." in pip_section
    assert "torch==2.13.0" in req and "jupyter-book==1.0.4.post1" in req


def test_setup_page_profile_table_matches_the_profiles():
    text = (REPO / "book" / "setup.md").read_text()
    for p in PROFILES.values():
        row = next(line for line in text.splitlines() if line.startswith(f"| `{p.name}` |"))
        cells = [c.strip().replace(",", "") for c in row.strip("|").split("|")]
        assert cells[1:5] == [str(p.steps), str(p.eval_every), str(p.n_seeds), str(p.batch_size)], row
        assert cells[5].startswith(f"{p.task['n_train_per_pair']} per pair"), row
        assert cells[6] == _seeds_on_claim_pages(p.name), row  # what the registry's designs run at that profile


def _seeds_on_claim_pages(profile: str) -> str:
    """'lo–hi': the seeds per cell of the claim pages' designs at `profile` (at paper, the pages declaring it)."""
    from critwin_lib.claims import registry

    n = [len(registry.design_at(p, profile).seeds) for p in registry.PAGES
         if p.claims and (profile != "paper" or "paper" in p.at_profile)]
    return f"{min(n)}–{max(n)}"


def test_readme_opens_with_the_commands_for_the_three_ways_of_using_it():
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines() if line.strip()]
    assert first == ["make reproduce", "make test", "make lab"]  # re-run the book, test it, explore live
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("assign", [
    'CLAIMS=C99; touch {m}', 'CLAIMS=C1 $(shell touch {m})', 'N=5; touch {m}', 'N=$(shell touch {m})',
    'PROFILE=quick; touch {m}', 'PROFILE=$(shell touch {m})', 'SCHEDULER=x; touch {m}', 'CLAIMS=C1`touch {m}`',
])
def test_make_variables_are_checked_before_any_shell_sees_them(tmp_path, assign):
    """A make variable holding shell or make syntax stops make with one line naming the variable; nothing runs."""
    marker = tmp_path / "injected"
    done = subprocess.run(["make", "-n", "reproduce", assign.format(m=marker)], cwd=REPO, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode != 0 and not marker.exists()
    name = assign.split("=", 1)[0]
    assert done.stderr.strip().splitlines()[-1].split("*** ", 1)[1].startswith(f"{name}: must be"), done.stderr
    ok = subprocess.run(["make", "-n", "reproduce", "CLAIMS=C1 C4b", "N=12", "PROFILE=paper",
                         "SCHEDULER=tcp://127.0.0.1:8786"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0 and "--claims C1 C4b" in ok.stdout


def test_make_reproduce_claims_rebuilds_the_other_pages_at_its_profile_and_checks_the_book():
    """`make reproduce CLAIMS=...` executes the selected pages, then the other pages the book at that profile lacks
    (training them at smoke, from the stored runs otherwise), then builds the book, which refuses any page of
    another profile or a failed one."""
    def lines(*assign: str) -> list[str]:
        done = subprocess.run(["make", "-n", "reproduce", *assign], cwd=REPO, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()

    smoke = lines("PROFILE=smoke", "CLAIMS=C1")
    rest = next(ln for ln in smoke if "--missing-only" in ln)
    assert "--book smoke" in rest and "--no-train" not in rest and "--profile smoke" in rest
    assert any("notebooks check --profile smoke" in ln for ln in smoke)  # the html step's check
    paper = lines("PROFILE=paper", "CLAIMS=C1")
    rest = next(ln for ln in paper if "--missing-only" in ln)
    assert "--book paper" in rest and "--no-train" in rest and "--profile quick" in rest


def test_the_vendored_chart_scripts_are_the_versions_altairs_specs_name():
    """vega-embed warns on every chart when the vendored vega or vega-lite is not the one the specs were written
    for: the browser builds must report Altair's vega major, its vega-lite version and its vega-embed major."""
    import altair as alt

    vendor = REPO / "book" / "_static" / "vendor"

    def reported(name: str) -> str:
        text = (vendor / f"{name}.min.js").read_text(encoding="utf-8", errors="replace")
        found = re.findall(r'version\s*[=:]\s*"(\d+\.\d+\.\d+)"', text)
        assert found, name
        return found[-1] if name != "vega" else found[0]

    assert reported("vega").split(".")[0] == str(alt.VEGA_VERSION).lstrip("v").split(".")[0]
    assert str(alt.VEGALITE_VERSION).lstrip("v") in (vendor / "vega-lite.min.js").read_text(errors="replace")
    assert f"vega-embed {str(alt.VEGAEMBED_VERSION).lstrip('v').split('.')[0]}." in (vendor / "VERSIONS").read_text()


def test_setup_page_glossary_names_every_protocol_once_with_its_plain_name():
    from critwin_lib import protocol

    text = (REPO / "book" / "setup.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and "| `" in line and "-" in line]
    glossary = {r.split("|")[2].strip().strip("`"): r.split("|")[1].strip() for r in rows
                if r.split("|")[2].strip().strip("`") in protocol.PROTOCOLS}
    assert glossary == protocol.PLAIN_NAMES
    assert set(protocol.PLAIN_NAMES) == set(protocol.PROTOCOLS)
