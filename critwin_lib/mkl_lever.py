"""The MKL AVX-512 lever: MKL picks its AVX-512 sgemm kernels only on CPUs it identifies as Intel. On an AMD CPU
with AVX-512F, a two-function shim (`csrc/mkl_intel_cpu.c`, built at install into `build/`) preloaded with
LD_PRELOAD makes MKL use them there too: about 1.6× faster training steps on the first EPYC measured (2026-12-01), only
1.07–1.17× on the EPYCs measured since (the one whose family was read is a Zen 4; `cpu` says which kind a
machine is).

It is applied only where it can help and has been checked:
* the CPU is AMD with AVX-512F, torch uses MKL, the shim is built, and `CRITWIN_MKL_AVX512` is not "0";
* a fresh process with the shim preloaded computes a float32 matmul that agrees with float64 (once per process);
* only to processes started after it is set: the Dask workers of a local cluster (`preloaded()` around the
  cluster's start), the kernels that `critwin_lib.notebooks` starts (a notebook that trains in its own process,
  workers=0, has it too), `make lab`'s JupyterLab and its kernels (started through `python -m
  critwin_lib.mkl_lever exec ...`) and `make bench`'s child processes. A kernel started some other way runs
  without it; a remote cluster's workers decide for themselves (set LD_PRELOAD there).

Runs trained with and without it agree within float32 tolerance (a test trains one both ways), not bit for bit:
the key of a run does not depend on it, as it does not depend on the CPU; each run's meta records whether its
process had it (`active()`).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from critwin_lib import paths

SOURCE = paths.REPO / "csrc" / "mkl_intel_cpu.c"
LIBRARY = paths.REPO / "build" / "libcritwin_mkl.so"
SWITCH = "CRITWIN_MKL_AVX512"  # "0": never apply it
TOLERANCE = 1e-4  # largest relative error of the check's float32 matmul against float64

_CHECK = """
import json, torch
torch.manual_seed(0)
a, b = torch.randn(384, 512), torch.randn(512, 256)
ref = a.double() @ b.double()
err = ((a @ b).double() - ref).abs().max().item() / ref.abs().max().item()
print(json.dumps({"err": err, "mkl": torch.backends.mkl.is_available()}))
"""


def _cpu_fields(info: str | None = None) -> dict[str, str]:
    """The first CPU's fields of /proc/cpuinfo (or of `info`, its text); empty where there is none."""
    if info is None:
        try:
            info = Path("/proc/cpuinfo").read_text()
        except OSError:
            info = ""
    field: dict[str, str] = {}
    for line in info.splitlines():
        key, _, value = line.partition(":")
        field.setdefault(key.strip(), value.strip())
    return field


def cpu(info: str | None = None) -> str:
    """This CPU in one line for `make bench`: model name, vendor, family and model, and what AVX-512 runs on.
    Zen 4 (AMD family 25 with AVX-512F) runs 512-bit operations on its 256-bit units in two halves, so MKL's
    AVX-512 sgemm kernels cannot double its peak (measured: ≈ 1.2× sgemm); Zen 5 (family 26) has 512-bit units."""
    field = _cpu_fields(info)
    if not field.get("vendor_id"):
        return "unknown CPU (no /proc/cpuinfo)"
    vendor, family, model = field["vendor_id"], field.get("cpu family", "?"), field.get("model", "?")
    flags = field.get("flags", "").split()
    text = f"{field.get('model name', 'CPU')} ({vendor} family {family} model {model}"
    if "avx512f" not in flags:
        return text + ", no AVX-512)"
    if vendor == "AuthenticAMD" and family == "25":
        return text + ", AVX-512 on 256-bit units: Zen 4, where the lever's sgemm gain is small)"
    if vendor == "AuthenticAMD" and family == "26":
        return text + ", AVX-512 on 512-bit units: Zen 5)"
    return text + ", AVX-512)"


def build(quiet: bool = False) -> Path | None:
    """Compile the shim into build/ if it is missing or older than its source; None (said once) without a C
    compiler or where compiling fails."""
    if LIBRARY.exists() and LIBRARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return LIBRARY
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        if not quiet:
            print("mkl lever: no C compiler found; training goes on without the AVX-512 shim", file=sys.stderr)
        return None
    LIBRARY.parent.mkdir(exist_ok=True)
    tmp = LIBRARY.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(SOURCE)], capture_output=True, text=True)
    if done.returncode != 0:
        if not quiet:
            print(f"mkl lever: compiling the shim failed ({done.stderr.strip()[:200]}); going on without it",
                  file=sys.stderr)
        tmp.unlink(missing_ok=True)
        return None
    os.replace(tmp, LIBRARY)
    return LIBRARY


def why_not(info: str | None = None) -> str | None:
    """Why the lever does not apply on this machine, whose /proc/cpuinfo text is `info` (None: read it), or
    None: it applies, pending `verified()`."""
    if os.environ.get(SWITCH, "1") == "0":
        return f"switched off ({SWITCH}=0)"
    field = _cpu_fields(info)
    if field.get("vendor_id") != "AuthenticAMD":
        return "not an AMD CPU (MKL already uses AVX-512 on Intel CPUs that have it)"
    if "avx512f" not in field.get("flags", "").split():
        return "this CPU has no AVX-512"
    import torch

    if not torch.backends.mkl.is_available():
        return "this torch does not use MKL"
    if build(quiet=True) is None:
        return "the shim could not be built (no C compiler?)"
    return None


@functools.cache
def verified() -> tuple[bool, str]:
    """Whether the lever applies here and a process with the shim preloaded computes correctly, and why not."""
    reason = why_not()
    if reason:
        return False, reason
    env = {**os.environ, "LD_PRELOAD": _preload_value(os.environ.get("LD_PRELOAD", ""))}
    out = subprocess.run([sys.executable, "-c", _CHECK], env=env, capture_output=True, text=True, timeout=300)
    try:
        got = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        return False, f"the check process failed: {out.stderr.strip()[-200:]}"
    if not got["mkl"] or got["err"] > TOLERANCE:
        return False, f"the check's float32 matmul is off by {got['err']:.2g} (tolerance {TOLERANCE:g})"
    return True, f"applies (AMD CPU with AVX-512F, MKL; check error {got['err']:.1e})"


def _preload_value(current: str) -> str:
    parts = [p for p in current.split(":") if p and p != str(LIBRARY)]
    return ":".join([str(LIBRARY), *parts])


def environment() -> dict[str, str]:
    """The environment variables a new training process needs for the lever ({} where it does not apply)."""
    ok, _ = verified()
    return {"LD_PRELOAD": _preload_value(os.environ.get("LD_PRELOAD", ""))} if ok else {}


@contextlib.contextmanager
def preloaded(apply: bool = True) -> Iterator[bool]:
    """Within the block, processes started from this one get the shim (yields whether they do)."""
    extra = environment() if apply else {}
    old = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield bool(extra)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def active() -> bool:
    """Whether this process has the shim loaded."""
    try:
        return str(LIBRARY) in Path("/proc/self/maps").read_text()
    except OSError:
        return False


def main(argv: list[str] | None = None) -> int:
    """`python -m critwin_lib.mkl_lever`: build the shim and say whether it applies. `... exec CMD [ARG...]`:
    run CMD in place of this process with the lever's environment where it applies (`make lab` starts JupyterLab
    so, and its kernels inherit it)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["exec"] and len(argv) > 1:
        ok, why = verified()
        print(f"MKL AVX-512 lever: {why}" + ("" if ok else "; starting without it"), file=sys.stderr, flush=True)
        os.execvpe(argv[1], argv[1:], {**os.environ, **environment()})
    if argv:
        print("usage: python -m critwin_lib.mkl_lever [exec CMD [ARG...]]", file=sys.stderr)
        return 2
    build()
    print(f"MKL AVX-512 lever: {verified()[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
