"""Stored runs that nobody can silently corrupt: every run folder carries `sha256.json`, the SHA-256
of each of its files, written with the run (inside the atomic save). `experiment.Store.load` checks those sums
and that the config still hashes to the folder's name; a mismatch stops the caller with one line naming the run
and the repair (delete the folder, train it again). `python -m critwin_lib.verify` checks or seals a whole
results folder and re-trains shipped runs to compare them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SUMS = "sha256.json"
FILES = ("config.json", "history.parquet", "meta.json")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def seal(folder: Path) -> dict[str, str]:
    """Write the sums of the run's files into the folder; returns them."""
    sums = {name: digest(folder / name) for name in FILES}
    (folder / SUMS).write_text(json.dumps(sums, indent=1, sort_keys=True) + "\n")
    return sums


def problem(folder: Path) -> str | None:
    """What is wrong with a stored run's files (None: nothing): a missing file, unreadable sums, or a file that
    does not match its sum. A run without sums (stored before they existed) passes here; the store also checks
    that its config hashes to its key."""
    missing = [n for n in FILES if not (folder / n).is_file()]
    if missing:
        return f"{', '.join(missing)} missing"
    if not (folder / SUMS).is_file():
        return None
    try:
        sums = json.loads((folder / SUMS).read_text())
    except ValueError:
        return f"{SUMS} is not JSON"
    changed = [n for n in FILES if sums.get(n) != digest(folder / n)]
    return f"{', '.join(changed)} changed since the run was stored (checksum mismatch)" if changed else None


def repair_line(folder: Path, why: str) -> str:
    """The one line a damaged run stops its caller with."""
    return (f"run {folder.name} in {folder.parent} is damaged: {why}; delete {folder} and train it again "
            f"(make reproduce, or the notebook that needs it)")
