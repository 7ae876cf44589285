"""SCAN from its grammar: the counts and properties of the public files (spec §7.3) and hand-checked
translations (several are the examples of Lake & Baroni 2018, Fig. 1)."""

import subprocess
import sys
from collections import Counter

import pytest

from critwin_lib.tasks import scan

L, R = "I_TURN_LEFT", "I_TURN_RIGHT"


@pytest.fixture(scope="module")
def table():
    return dict(scan.commands())


def test_all_commands_are_distinct_and_counted(table):
    every = scan.commands()
    assert len(every) == 20_910 == len(table)
    words = {w for c in table for w in c.split()}
    acts = {a for v in table.values() for a in v.split()}
    assert words == set(scan.INPUT_VOCAB) and acts == set(scan.OUTPUT_VOCAB)
    assert max(len(c.split()) for c in table) == 9 and max(len(v.split()) for v in table.values()) == 48


@pytest.mark.parametrize("command, actions", [
    ("turn around left", f"{L} {L} {L} {L}"),
    ("jump opposite right after walk twice", f"I_WALK I_WALK {R} {R} I_JUMP"),
    ("jump left", f"{L} I_JUMP"),
    ("jump around right", f"{R} I_JUMP {R} I_JUMP {R} I_JUMP {R} I_JUMP"),
    ("turn left twice", f"{L} {L}"),
    ("jump opposite left and walk thrice", f"{L} {L} I_JUMP I_WALK I_WALK I_WALK"),
    ("jump opposite left after walk around left", f"{L} I_WALK {L} I_WALK {L} I_WALK {L} I_WALK {L} {L} I_JUMP"),
    ("turn opposite right thrice", " ".join([R] * 6)),
    ("look", "I_LOOK"),
])
def test_hand_checked_translations(table, command, actions):
    assert table[command] == actions


def test_add_prim_jump_split_matches_the_public_files():
    train, test = scan.add_prim_jump()
    every = dict(scan.commands())
    assert len(train) == 14_670 and len(test) == 7_706
    counts = Counter(c for c, _ in train)
    assert counts["jump"] == 1_467 and len(counts) == 13_204  # 13,203 without "jump", and bare "jump"
    assert all(n == 1 for c, n in counts.items() if c != "jump")
    assert not any("jump" in c.split() for c in counts if c != "jump")
    test_cmds = {c for c, _ in test}
    assert len(test_cmds) == 7_706 and all("jump" in c.split() for c in test_cmds)
    assert not test_cmds & set(counts) and test_cmds | set(counts) == set(every)  # disjoint, union = all
    assert all(every[c] == a for c, a in train + test)


def test_write_gives_the_public_line_format(tmp_path):
    out = subprocess.run([sys.executable, "-m", "critwin_lib.tasks.scan", "--write", str(tmp_path)],
                         capture_output=True, text=True, check=True).stdout
    assert "tasks.txt: 20910 lines" in out
    lines = (tmp_path / "tasks_train_addprim_jump.txt").read_text().splitlines()
    assert len(lines) == 14_670
    assert "IN: jump OUT: I_JUMP" in lines
    assert all(ln.startswith("IN: ") and " OUT: " in ln and "  " not in ln for ln in lines)
    assert len((tmp_path / "tasks_test_addprim_jump.txt").read_text().splitlines()) == 7_706
