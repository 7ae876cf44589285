"""Project files that must agree with each other."""

import re

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


def test_readme_opens_with_the_commands_for_the_three_ways_of_using_it():
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    first = [line.split("#")[0].strip() for line in blocks[0].splitlines() if line.strip()]
    assert first == ["make reproduce", "make test", "make lab"]  # re-run the book, test it, explore live
    assert "make test" in (REPO / ".ci" / "run").read_text()
