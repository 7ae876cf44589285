"""Machine-level settings of a training process, applied where each run starts (locally or on a worker).

* One thread per process: two single-threaded runs on two cores beat one run on two threads.
* glibc malloc: a trim threshold of 1 GiB and an mmap threshold of 32 MiB, so that the few-MB activation
  buffers of every step are reused instead of being mapped and unmapped (each page fault costs about
  a microsecond in a VM). It matters most in Dask worker processes, which Dask starts with
  MALLOC_TRIM_THRESHOLD_=65536; there it halves the time per step on the machine `make bench` ran on.
  Applied only where the C library is glibc; `CRITWIN_MALLOC_TUNE=0` switches it off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (glibc malloc.h)
TRIM_THRESHOLD = 1 << 30
MMAP_THRESHOLD = 32 << 20


def tune_malloc() -> bool:
    """Set the malloc thresholds in this process; True if they were set."""
    if os.environ.get("CRITWIN_MALLOC_TUNE", "1") == "0" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        return bool(libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and bool(
            libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


def configure_process() -> dict[str, object]:
    """One torch thread and the malloc settings; returns what was applied (recorded with each run)."""
    import torch

    from critwin_lib import mkl_lever

    torch.set_num_threads(1)
    return {"threads": 1, "malloc_tuned": tune_malloc(), "mkl_avx512_shim": mkl_lever.active()}
