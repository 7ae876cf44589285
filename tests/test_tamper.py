"""Nothing edited by hand passes for a shipped run: a run without valid checksums is damaged (named, with the
repair), malformed JSON of any shape is one line naming the run, every damaged run is reported, and a run is
sealed again only when someone names it and says why."""

import json

import pytest

from critwin_lib import checksums, experiment, verify
from critwin_lib.config import replace


@pytest.fixture
def three_runs(tmp_path, tiny_cfg):
    runs = [experiment.run(replace(tiny_cfg, **{"train.seed": s}), tmp_path) for s in range(3)]
    return tmp_path, experiment.Store(tmp_path), [r.key for r in runs]


def _edit_ood(folder, value: float) -> None:
    """What a careless or hostile edit does: change the history's OOD accuracy in place."""
    import pandas as pd

    h = pd.read_parquet(folder / "history.parquet")
    h["acc/test_ood"] = value
    h.to_parquet(folder / "history.parquet", index=False)


def test_deleting_the_checksums_does_not_switch_tamper_detection_off(three_runs, capsys):
    root, store, keys = three_runs
    for k in keys:
        (store.path(k) / checksums.SUMS).unlink()
        _edit_ood(store.path(k), 0.99)
    assert all(store.problem(k) == "sha256.json missing" for k in keys)
    with pytest.raises(experiment.DamagedRun, match=f"run {keys[0]} .* is damaged: sha256.json missing; delete"):
        store.load(keys[0])
    assert verify.main(["--results", str(root), "--n", "0"]) == 1
    err = capsys.readouterr().err
    assert all(f"run {k} in " in err for k in keys) and f"{len(keys)} damaged" in err  # every one, not the first


@pytest.mark.parametrize("name, text, why", [
    ("sha256.json", "[]", "sha256.json does not hold a checksum for each of"),
    ("sha256.json", '{"config.json": 1}', "sha256.json does not hold a checksum for each of"),
    ("sha256.json", "not json", "sha256.json is not JSON"),
])
def test_malformed_checksums_of_any_shape_are_one_line_naming_the_run(three_runs, capsys, name, text, why):
    root, store, keys = three_runs
    (store.path(keys[1]) / name).write_text(text)
    assert store.problem(keys[1]).startswith(why)
    assert verify.main(["--results", str(root), "--n", "0"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if "damaged:" in line] == [line for line in err if keys[1] in line]
    assert "Traceback" not in "\n".join(err)


def test_a_config_that_is_not_an_object_is_one_line_even_when_resealed(three_runs, capsys):
    root, store, keys = three_runs
    (store.path(keys[0]) / "config.json").write_text("[]")
    checksums.seal(store.path(keys[0]), resealed="test")  # sums that match: the shape itself is the problem
    assert store.problem(keys[0]) == "config.json is not a JSON object (it holds a list)"
    assert verify.main(["--results", str(root), "--n", "0"]) == 1
    assert "config.json is not a JSON object" in capsys.readouterr().err


def test_a_run_folder_without_meta_is_named_not_dropped(three_runs, capsys):
    root, store, keys = three_runs
    (store.path(keys[2]) / "meta.json").unlink()
    assert keys[2] not in store.keys() and store.incomplete() == [keys[2]]
    assert verify.main(["--results", str(root), "--n", "0"]) == 1
    assert f"run {keys[2]} in " in capsys.readouterr().err


def test_a_run_is_sealed_again_only_when_named_with_a_reason(three_runs, capsys):
    root, store, keys = three_runs
    _edit_ood(store.path(keys[0]), 0.99)
    with pytest.raises(SystemExit):
        verify.main(["--results", str(root), "--n", "0", "--reseal", keys[0]])  # no reason: refused
    assert "--reseal needs --why" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        verify.main(["--results", str(root), "--n", "0", "--reseal", "nosuchrun", "--why", "x"])
    assert store.problem(keys[0]).startswith("history.parquet changed")  # nothing was sealed
    assert verify.main(["--results", str(root), "--n", "0", "--reseal", keys[0], "--why", "checked by hand"]) == 0
    assert store.problem(keys[0]) is None
    sums = json.loads((store.path(keys[0]) / checksums.SUMS).read_text())
    assert sums[checksums.RESEALED] == "checked by hand"  # the run says it was re-sealed, and why
    with pytest.raises(SystemExit):
        verify.main(["--results", str(root), "--seal"])  # the old switch that sealed any unsealed run is gone


def test_a_differing_history_fails_whatever_the_cpu_record_says():
    import pandas as pd

    a = pd.DataFrame({"step": [0, 4], "acc/test_ood": [0.1, 0.5], "loss/train": [1.0, 0.5]})
    far = a.assign(**{"acc/test_ood": [0.1, 0.8]})
    near = a.assign(**{"acc/test_ood": [0.1, 0.55]})
    for same in (True, False, None):
        assert not verify.compare(a, far, *verify.tolerance(same))[0]  # 0.3 apart: beyond every tolerance
    assert not verify.compare(a, near, *verify.tolerance(True))[0]
    assert verify.compare(a, near, *verify.tolerance(False))[0] and verify.compare(a, near, *verify.tolerance(None))[0]
