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


def seal(folder: Path, resealed: str = "") -> dict[str, str]:
    """Write the sums of the run's files into the folder; returns them. `resealed`: why a stored run's files were
    sealed again as they now are (kept in the sums file, so the run says it was re-sealed)."""
    sums = {name: digest(folder / name) for name in FILES} | ({RESEALED: resealed} if resealed else {})
    (folder / SUMS).write_text(json.dumps(sums, indent=1, sort_keys=True) + "\n")
    return sums


RESEALED = "resealed"  # the sums file's note of why a run was sealed again


def problem(folder: Path) -> str | None:
    """What is wrong with a stored run's files (None: nothing): a missing file, missing or unreadable sums, or a
    file that does not match its sum. Every run is stored with its sums, so a run without them is damaged (a
    deleted sums file must not switch the check off); the store also checks that its config hashes to its key."""
    missing = [n for n in (*FILES, SUMS) if not (folder / n).is_file()]
    if missing:
        return f"{', '.join(missing)} missing"
    try:
        sums = json.loads((folder / SUMS).read_text())
    except (ValueError, UnicodeDecodeError):
        return f"{SUMS} is not JSON"
    if not isinstance(sums, dict) or not all(isinstance(sums.get(n), str) for n in FILES):
        return f"{SUMS} does not hold a checksum for each of {', '.join(FILES)}"
    changed = [n for n in FILES if sums.get(n) != digest(folder / n)]
    return f"{', '.join(changed)} changed since the run was stored (checksum mismatch)" if changed else None


def repair_line(folder: Path, why: str) -> str:
    """The one line a damaged run stops its caller with."""
    folder = folder.resolve()  # the same path from whichever folder the caller runs in (a notebook's is notebooks/)
    return (f"run {folder.name} in {folder.parent} is damaged: {why}; delete {folder} and train it again "
            f"(make reproduce, or the notebook that needs it)")
