"""The results folder: run results cached by config hash, checked when loaded.

Layout: `<root>/runs/<key>/{config.json, history.parquet, meta.json, sha256.json}` where key = sha256 of the
canonical config JSON and `RESULTS_VERSION`. An entry is written into a temporary folder, sealed with the
checksums of its files (`checksums`), and renamed into place in one step, so an interrupted run never leaves an
entry that looks complete, and a finished run is never lost when a sweep is interrupted. Loading checks the
sums and that the config still hashes to its key. Nothing is loaded with pickle.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import platform
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from critwin_lib import checksums
from critwin_lib.config import RunConfig, canonical_json, from_dict, to_dict

TMP_PREFIX = ".tmp-"  # a save in progress (or interrupted): results/runs/.tmp-<key>-<host>-<pid>-<uuid>
RUN_BYTES = 2 << 20  # room to leave per run to be trained (a quick run takes about 0.3 MB)
RESULTS_VERSION = "1"  # bump by hand when training semantics change: it re-keys every result
DEFAULT_MS_PER_STEP = 30.0  # per worker, 2 layers, batch 256, evals and compiling included (measured here)


def run_key(cfg: RunConfig) -> str:
    """12 hex digits of sha256(canonical config JSON | RESULTS_VERSION)."""
    return hashlib.sha256(f"{canonical_json(cfg)}|{RESULTS_VERSION}".encode()).hexdigest()[:12]


@dataclass
class Result:
    key: str
    config: RunConfig
    history: pd.DataFrame
    meta: dict[str, Any]


class MissingResults(RuntimeError):
    """Runs asked for are not in the store and training was not allowed."""


class DamagedRun(RuntimeError):
    """A stored run whose files no longer match their checksums, or whose config no longer hashes to its key."""


class ResultsNotWritable(RuntimeError):
    """The results folder cannot take the runs a sweep would train (read-only, or not enough free space)."""


class Store:
    """The results folder."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"

    def path(self, key: str) -> Path:
        return self.runs / key

    def has(self, key: str) -> bool:
        return (self.path(key) / "meta.json").is_file()

    def keys(self) -> list[str]:
        if not self.runs.is_dir():
            return []
        return sorted(p.name for p in self.runs.iterdir() if not p.name.startswith(".") and self.has(p.name))

    def incomplete(self) -> list[str]:
        """Run folders without meta.json (not saves in progress): a run whose files were deleted by hand, or a
        save interrupted before saves were atomic. `keys` leaves them out; `verify` names them."""
        if not self.runs.is_dir():
            return []
        return sorted(p.name for p in self.runs.iterdir() if p.is_dir() and not p.name.startswith(".")
                      and not self.has(p.name))

    def problem(self, key: str) -> str | None:
        """What is wrong with a stored run (None: nothing): its files against their checksums, and its config
        against its key."""
        return self.checked(key)[0]

    def checked(self, key: str) -> tuple[str | None, RunConfig | None]:
        """(what is wrong, None) or (None, the run's config), reading config.json once."""
        d = self.path(key)
        why = checksums.problem(d)
        if why:
            return why, None
        try:
            raw = json.loads((d / "config.json").read_text())
            if not isinstance(raw, dict):
                return f"config.json is not a JSON object (it holds a {type(raw).__name__})", None
            cfg = from_dict(raw)
        except Exception as e:  # noqa: BLE001 - any malformed config is one line naming the run, never a traceback
            return f"config.json unreadable ({type(e).__name__}: {str(e)[:80]})", None
        if run_key(cfg) != key:
            return f"config.json hashes to {run_key(cfg)}, not to its folder's name", None
        return None, cfg

    def load(self, key: str) -> Result:
        """A stored run, checked first; a damaged one raises DamagedRun with the one-line repair."""
        d = self.path(key)
        why, cfg = self.checked(key)
        try:
            if cfg is not None:
                history = pd.read_parquet(d / "history.parquet")
                meta = json.loads((d / "meta.json").read_text())
                if not isinstance(meta, dict):
                    raise ValueError(f"meta.json holds a {type(meta).__name__}, not a JSON object")
                return Result(key, cfg, history, meta)
        except Exception as e:  # noqa: BLE001 - an unreadable file of a run stored without checksums
            why = f"unreadable ({type(e).__name__}: {str(e)[:80]})"
        raise DamagedRun(checksums.repair_line(d, why))

    def save(self, cfg: RunConfig, history: pd.DataFrame, meta: dict[str, Any]) -> Result:
        """Write atomically: everything goes to a temporary folder, sealed with its checksums, that is renamed
        into place. A complete run already there (another process saved it first) wins; an incomplete folder
        (no meta.json) is replaced."""
        key = run_key(cfg)
        self.runs.mkdir(parents=True, exist_ok=True)
        tmp = self.runs / f"{TMP_PREFIX}{key}-{platform.node()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            (tmp / "config.json").write_text(json.dumps(to_dict(cfg), indent=1, sort_keys=True) + "\n")
            history.to_parquet(tmp / "history.parquet", index=False)
            meta = {**meta, "key": key, "results_version": RESULTS_VERSION}
            (tmp / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
            checksums.seal(tmp)
            self._place(tmp, key)
        except OSError as e:
            shutil.rmtree(tmp, ignore_errors=True)
            if e.errno in (errno.ENOSPC, errno.EDQUOT):  # a sweep stops here: every later save would fail too
                raise ResultsNotWritable(f"cannot store run {key} in {self.runs}: the disk is full ({e.strerror}); "
                                         "the runs stored so far are kept: free space and run the same command "
                                         "again, which trains only what is missing") from None
            raise
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return Result(key, cfg, history, meta)

    def _place(self, tmp: Path, key: str) -> None:
        if self.has(key):  # someone else finished the same run first
            shutil.rmtree(tmp)
            return
        if self.path(key).exists() and not self.has(key):  # an incomplete folder: moved aside, then removed
            stale = self.runs / f"{TMP_PREFIX}stale-{key}-{uuid.uuid4().hex[:8]}"
            try:
                os.rename(self.path(key), stale)
            except FileNotFoundError:
                pass  # another process moved it aside first
            else:
                shutil.rmtree(stale, ignore_errors=True)
        try:
            os.rename(tmp, self.path(key))
        except OSError:
            if not self.has(key):
                raise
            shutil.rmtree(tmp)  # another process placed it between our check and our rename

    def clear_stale(self, max_age_s: float = 86_400) -> int:
        """Remove temporary folders left by interrupted saves: this host's whose process is gone, and any older
        than `max_age_s`. Returns how many were removed."""
        if not self.runs.is_dir():
            return 0
        removed = 0
        for p in self.runs.glob(f"{TMP_PREFIX}*"):
            try:
                age = time.time() - p.stat().st_mtime
            except FileNotFoundError:
                continue  # another process placed or removed it after we listed it
            pid = _writer_pid(p.name)
            if age > max_age_s or (pid is not None and not _alive(pid)) or p.name.startswith(f"{TMP_PREFIX}stale-"):
                shutil.rmtree(p, ignore_errors=True)
                removed += 1
        return removed

    def check_writable(self, n_runs: int) -> None:
        """Raise ResultsNotWritable (one line) unless the runs folder takes a test folder and has room for
        `n_runs` more runs (about 2 MB each, plus a margin)."""
        try:
            self.runs.mkdir(parents=True, exist_ok=True)
            probe = self.runs / f"{TMP_PREFIX}probe-{platform.node()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            probe.mkdir()
            probe.rmdir()
        except OSError as e:
            raise ResultsNotWritable(f"cannot store runs in {self.runs}: {e.strerror or e}; nothing was trained") \
                from None
        need = n_runs * RUN_BYTES + (50 << 20)
        free = shutil.disk_usage(self.runs).free
        if free < need:
            raise ResultsNotWritable(f"{self.runs} has {free >> 20} MB free, {n_runs} runs need about "
                                     f"{need >> 20} MB; nothing was trained")

    def measured_ms_per_step(self) -> dict[tuple, float]:
        """Median measured training time per step of the newest 400 stored runs (≥ 1000 steps, tuned malloc),
        by (task, batch, depth, width) as their configs say: read once per estimate, whatever the number of
        runs it covers."""
        rates: dict[tuple, list[float]] = {}
        for key in self.keys()[-400:]:
            try:
                meta = json.loads((self.path(key) / "meta.json").read_text())
                if meta.get("malloc_tuned") is True and meta.get("steps", 0) >= 1000:
                    cfg = json.loads((self.path(key) / "config.json").read_text())
                    kind = (cfg["task"].get("name", "anchor"), cfg["train"]["batch_size"], cfg["model"]["n_layer"],
                            cfg["model"]["d_model"])
                    rates.setdefault(kind, []).append(1000 * meta["wall_s"] / meta["steps"])
            except (OSError, ValueError, KeyError, TypeError):
                continue  # a damaged run: loading it says so, with its repair
        return {kind: float(pd.Series(r).median()) for kind, r in rates.items()}

    def ms_per_step(self, cfg: RunConfig, measured: dict[tuple, float] | None = None) -> float:
        """Measured time per step of stored runs like this one (same task, batch, depth and width; for
        estimates), else a guess scaled from the anchor task's by tokens per batch and model size.
        `measured`: `measured_ms_per_step()` when the caller already has it."""
        measured = self.measured_ms_per_step() if measured is None else measured
        like = (cfg.task.name, cfg.train.batch_size, cfg.model.n_layer, cfg.model.d_model)
        if like in measured:
            return measured[like]
        tokens = min(cfg.train.batch_size, 100_000) * cfg.task.seq_len / (256 * 9)
        return DEFAULT_MS_PER_STEP * tokens * cfg.model.n_layer / 2 * (cfg.model.d_model / 64) ** 2


def _writer_pid(name: str) -> int | None:
    """The process id in a temporary folder's name (`.tmp-<key>-<host>-<pid>-<uuid>`) when this host wrote it, else
    None. The host is matched as a whole suffix, so a host name holding dashes is still recognised."""
    head, _, rest = name.rpartition("-")  # rest: the uuid
    head, _, pid = head.rpartition("-")
    mine = head.endswith(f"-{platform.node()}") and pid.isdigit() and bool(rest)
    return int(pid) if mine else None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


