"""SCAN (Lake & Baroni 2018) generated from its phrase-structure grammar and interpretation rules, so
nothing is downloaded or shipped: the 20,910 commands, their action sequences, and the add_prim_jump
split (claim C9). `python -m critwin_lib.tasks.scan --write DIR` writes the three public files in their
line format, `IN: <command> OUT: <actions>`.

Grammar (spec §7.1):  C → S and S | S after S | S;  S → V twice | V thrice | V;
V → D opposite D' | D around D' | D | U;  D → U left | U right | turn left | turn right;
U → walk | look | run | jump  (D, D' are the first and second word of a D).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

PRIMITIVES = ("walk", "look", "run", "jump")
ACTION = {u: f"I_{u.upper()}" for u in PRIMITIVES}
TURN = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
INPUT_VOCAB = ("after", "and", "around", "jump", "left", "look", "opposite", "right", "run", "thrice", "turn",
               "twice", "walk")
OUTPUT_VOCAB = ("I_JUMP", "I_LOOK", "I_RUN", "I_TURN_LEFT", "I_TURN_RIGHT", "I_WALK")
JUMP_SHARE = 0.10  # bare "jump" is repeated in the training file to 10 % of its lines (the SCAN README)


def _directions() -> list[tuple[str, str]]:
    """Every D as (first word, direction): 'walk left', ..., 'turn right'."""
    return [(u, d) for u in (*PRIMITIVES, "turn") for d in ("left", "right")]


def _verb_phrases() -> list[tuple[list[str], list[str]]]:
    """Every V with its actions."""
    out = []
    for w, d in _directions():
        act = [] if w == "turn" else [ACTION[w]]
        out.append(([w, "opposite", d], [TURN[d], TURN[d], *act]))
        out.append(([w, "around", d], [TURN[d], *act] * 4))
    for w, d in _directions():
        out.append(([w, d], [TURN[d], *([] if w == "turn" else [ACTION[w]])]))
    out += [([u], [ACTION[u]]) for u in PRIMITIVES]
    return out


def _sentences() -> list[tuple[list[str], list[str]]]:
    """Every S with its actions."""
    out = []
    for words, act in _verb_phrases():
        out += [(words + ["twice"], act * 2), (words + ["thrice"], act * 3), (words, act)]
    return out


def commands() -> list[tuple[str, str]]:
    """All 20,910 SCAN commands with their action sequences, in grammar order."""
    s = _sentences()
    out = [(" ".join(w), " ".join(a)) for w, a in s]
    for w1, a1 in s:
        for w2, a2 in s:
            out.append((" ".join(w1 + ["and"] + w2), " ".join(a1 + a2)))
            out.append((" ".join(w1 + ["after"] + w2), " ".join(a2 + a1)))
    return out


def add_prim_jump() -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The add_prim_jump split: train = every command without "jump" plus bare "jump" repeated so that it
    is 10 % of the training lines; test = every other command with "jump"."""
    every = commands()
    plain = [c for c in every if "jump" not in c[0].split()]
    test = [c for c in every if "jump" in c[0].split() and c[0] != "jump"]
    n_jump = round(JUMP_SHARE * len(plain) / (1 - JUMP_SHARE))
    return plain + [("jump", ACTION["jump"])] * n_jump, test


def line(command: str, actions: str) -> str:
    return f"IN: {command} OUT: {actions}"


def write(out_dir: str | Path) -> dict[str, int]:
    """Write tasks.txt, tasks_train_addprim_jump.txt and tasks_test_addprim_jump.txt; return line counts."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train, test = add_prim_jump()
    files = {"tasks.txt": commands(), "tasks_train_addprim_jump.txt": train, "tasks_test_addprim_jump.txt": test}
    for name, pairs in files.items():
        (out / name).write_text("".join(line(c, a) + "\n" for c, a in pairs))
    return {name: len(pairs) for name, pairs in files.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m critwin_lib.tasks.scan", description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", type=Path, required=True, metavar="DIR", help="folder for the three files")
    args = ap.parse_args(argv)
    for name, n in write(args.write).items():
        print(f"{args.write / name}: {n} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
