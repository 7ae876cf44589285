"""SCAN from its grammar: the counts and properties of the public files (spec §7.3) and hand-checked
translations (several are the examples of Lake & Baroni 2018, Fig. 1)."""

import subprocess
import sys
from collections import Counter

import numpy as np
import pytest
import torch

from critwin_lib.config import ScanTask
from critwin_lib.tasks import IGNORE, make_task, scan

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


def test_sequences_put_the_first_action_at_a_fixed_position():
    pairs = [("jump left", f"{L} I_JUMP"), ("walk around right thrice and look opposite left",
                                            scan.commands()[0][1])]
    seq = scan.encode(pairs)
    assert seq.shape == (2, 59) and (seq[:, scan.MAX_COMMAND] == scan.SEP).all()
    assert [scan.TOKENS[t] for t in seq[0, :13]] == ["<pad>"] * 7 + ["jump", "left", "<sep>", L, "I_JUMP", "<eos>"]
    assert scan.decode(seq[0]) == f"{L} I_JUMP"
    split = scan._next_token_split(pairs[:1])
    scored = np.flatnonzero(split.targets[0] != IGNORE)
    assert list(scored) == [9, 10, 11]  # SEP predicts the first action; the last action predicts EOS
    assert list(split.targets[0, scored]) == list(seq[0, 10:13])


def test_the_model_task_holds_out_training_commands_and_scores_the_test_file():
    d = make_task(ScanTask(n_val=300, n_eval=200, data_seed=3))
    assert d.objective == "sequence" and d.vocab_size == 22 and d.train_inputs.shape[1] == 58
    assert len(d.train_inputs) == 14_670 - 300 and {k: len(s.inputs) for k, s in d.splits.items()} == {
        "train": 200, "val": 200, "test": 200}

    def commands(x):
        return {tuple(r[:scan.MAX_COMMAND]) for r in x}
    trained = commands(d.train_inputs)
    assert not commands(d.splits["val"].inputs) & trained and not commands(d.splits["test"].inputs) & trained
    assert commands(d.splits["train"].inputs) <= trained
    jump = scan.TOKEN_ID["jump"]
    assert all(jump in r[:9] for r in d.splits["test"].inputs)
    assert make_task(ScanTask(n_eval=0)).splits["test"].inputs.shape[0] == 7_706


class _Oracle(torch.nn.Module):
    """Stands in for a model: always predicts the right next token of a fixed table of sequences."""

    def __init__(self, seqs, wrong_after=None):
        super().__init__()
        self.seqs, self.wrong_after = torch.as_tensor(seqs), wrong_after

    def forward(self, idx, last_only=False):
        T = idx.shape[1]
        row = (idx[:, None, :scan.FIRST_ACTION] == self.seqs[None, :, :scan.FIRST_ACTION]).all(-1).int().argmax(1)
        nxt = self.seqs[row][:, 1:T + 1].clone()
        if self.wrong_after is not None and T > self.wrong_after:
            nxt[:, self.wrong_after:] = scan.TOKEN_ID["I_LOOK"]
        logits = torch.nn.functional.one_hot(nxt, 22).float() * 10
        return logits[:, -1:] if last_only else logits


def test_exact_match_needs_every_action_and_the_eos():
    from critwin_lib.metrics import sequence_scores

    pairs = scan.commands()[:40]
    split = scan._next_token_split(pairs)
    x, y = torch.as_tensor(split.inputs), torch.as_tensor(split.targets)
    acc, loss = sequence_scores(_Oracle(scan.encode(pairs)), x, y, batch_size=16)
    assert acc == 1.0 and loss < 1e-3
    acc, _ = sequence_scores(_Oracle(scan.encode(pairs), wrong_after=11), x, y)  # the 2nd action onward is wrong
    n_short = sum(len(a.split()) == 1 for _, a in pairs)
    assert n_short < 40 and acc == 0.0  # a one-action sequence then needs EOS at position 11: also wrong


def test_a_sequence_run_trains_and_logs_exact_match():
    from critwin_lib import config
    from critwin_lib.train import train

    t = ScanTask(n_val=50, n_eval=20)
    cfg = config.RunConfig(task=t, model=config.ModelConfig(n_layer=1, d_model=16, n_head=2, d_mlp=32,
                                                            vocab_size=22, max_pos=58),
                           train=config.TrainConfig(steps=8, batch_size=16, lr=3e-3, warmup_steps=0, eval_every=4))
    h = train(cfg)
    assert list(h["step"]) == [0, 4, 8] and {"acc/train", "acc/val", "acc/test", "loss/val"} <= set(h.columns)
    assert h["loss/val"].iloc[-1] < h["loss/val"].iloc[0]
    with pytest.raises(config.ConfigError, match="model.max_pos: must be >= 58 for the scan task"):
        config.replace(cfg, **{"model.max_pos": 20})
