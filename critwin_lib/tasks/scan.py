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

import numpy as np

from critwin_lib.config import SCAN_SEQ_LEN, SCAN_VOCAB_SIZE, ScanTask
from critwin_lib.tasks.data import IGNORE, Split, TaskData

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


# ------------------------------------------------------------------------- as a model's sequences
PAD, SEP, EOS = 0, 1, 2
TOKENS = ("<pad>", "<sep>", "<eos>", *INPUT_VOCAB, *OUTPUT_VOCAB)
TOKEN_ID = {t: i for i, t in enumerate(TOKENS)}
MAX_COMMAND = 9  # words; commands are left-padded to this, so SEP is always at position 9
FIRST_ACTION = MAX_COMMAND + 1
assert len(TOKENS) == SCAN_VOCAB_SIZE


def encode(pairs: list[tuple[str, str]]) -> np.ndarray:
    """(N, 59) token ids: PAD… command SEP actions EOS PAD…, the first action always at position 10."""
    out = np.full((len(pairs), SCAN_SEQ_LEN + 1), PAD, dtype=np.int64)
    for i, (cmd, act) in enumerate(pairs):
        words, actions = cmd.split(), act.split()
        out[i, MAX_COMMAND - len(words):MAX_COMMAND] = [TOKEN_ID[w] for w in words]
        out[i, MAX_COMMAND] = SEP
        out[i, FIRST_ACTION:FIRST_ACTION + len(actions) + 1] = [TOKEN_ID[a] for a in actions] + [EOS]
    return out


def decode(ids: np.ndarray) -> str:
    """The actions of one generated row (positions from 10 up to the first EOS)."""
    words = []
    for t in ids[FIRST_ACTION:]:
        if t == EOS:
            break
        words.append(TOKENS[int(t)])
    return " ".join(words)


def _next_token_split(pairs: list[tuple[str, str]]) -> Split:
    """Model inputs (N, 58) and next-token targets, IGNORE before the first action and after EOS."""
    seq = encode(pairs)
    inputs, targets = seq[:, :-1], seq[:, 1:].copy()
    pos = np.arange(1, SCAN_SEQ_LEN + 1)
    eos_at = (seq == EOS).argmax(1)
    targets[(pos[None, :] < FIRST_ACTION) | (pos[None, :] > eos_at[:, None])] = IGNORE
    return Split(inputs, targets)


def make_scan_task(cfg: ScanTask) -> TaskData:
    """Training set: the add_prim_jump training file less `n_val` held-out commands without "jump" (bare
    "jump" keeps its 1,467 copies). Evaluation splits, each `n_eval` commands (0: all): "train" (distinct
    training commands), "val" (the held-out ones), "test" (the add_prim_jump test file)."""
    train, test = add_prim_jump()
    plain = [c for c in train if c[0] != "jump"]
    jumps = [c for c in train if c[0] == "jump"]
    rng = np.random.default_rng([cfg.data_seed, 7])
    order = rng.permutation(len(plain))
    val = [plain[i] for i in order[:cfg.n_val]]
    kept = [plain[i] for i in np.sort(order[cfg.n_val:])]

    def subset(pairs: list[tuple[str, str]], tag: int) -> list[tuple[str, str]]:
        if not cfg.n_eval or cfg.n_eval >= len(pairs):
            return pairs
        pick = np.random.default_rng([cfg.data_seed, tag]).choice(len(pairs), cfg.n_eval, replace=False)
        return [pairs[i] for i in np.sort(pick)]

    fit = _next_token_split(kept + jumps)
    splits = {"train": _next_token_split(subset(kept + jumps[:1], 1)), "val": _next_token_split(subset(val, 2)),
              "test": _next_token_split(subset(test, 3))}
    return TaskData(train_inputs=fit.inputs, train_targets=fit.targets, splits=splits, vocab_size=SCAN_VOCAB_SIZE,
                    meta={"split": cfg.split, "n_train_lines": len(kept) + len(jumps), "n_val": len(val),
                          "n_test": len(test)},
                    objective="sequence", headline="acc/test")


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
