"""The MKL AVX-512 lever: applied only where it applies and is checked, and a run trained with it gives the
same history as without it, within float32 tolerance."""

import numpy as np
import pytest

from critwin_lib import config, experiment, mkl_lever
from critwin_lib.config import to_dict

LEVER, WHY = mkl_lever.verified()


def test_it_says_why_where_it_does_not_apply(monkeypatch):
    monkeypatch.setenv(mkl_lever.SWITCH, "0")
    assert mkl_lever.why_not() == f"switched off ({mkl_lever.SWITCH}=0)"
    mkl_lever.verified.cache_clear()
    try:
        assert mkl_lever.environment() == {}
        with mkl_lever.preloaded() as on:
            assert not on
    finally:
        mkl_lever.verified.cache_clear()


def test_preloading_is_undone_after_the_block(monkeypatch):
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    with mkl_lever.preloaded() as on:
        assert ("LD_PRELOAD" in __import__("os").environ) == on
    assert "LD_PRELOAD" not in __import__("os").environ


@pytest.mark.skipif(not LEVER, reason=f"the MKL AVX-512 lever does not apply here: {WHY}")
def test_a_run_trained_on_a_worker_with_the_lever_matches_one_trained_without(tmp_path, tiny_cfg):
    tiny_cfg = config.replace(tiny_cfg, **{"train.batch_size": 256})  # big enough for MKL's AVX-512 kernels
    sw = experiment.sweep([tiny_cfg], tmp_path, workers=1, progress=False)
    shimmed = sw.results[0]
    assert shimmed.meta["mkl_avx512_shim"] is True
    columns, meta = experiment.execute(to_dict(tiny_cfg))
    assert meta["mkl_avx512_shim"] is False
    for col in shimmed.history.columns:
        if col.startswith(("loss/", "acc/")):
            np.testing.assert_allclose(shimmed.history[col].to_numpy(float), np.asarray(columns[col], float),
                                       rtol=1e-3, atol=1e-4, err_msg=col)


@pytest.mark.parametrize(("family", "flags", "says"), [
    ("25", "fpu avx2 avx512f", "Zen 4"), ("26", "fpu avx2 avx512f", "Zen 5"), ("25", "fpu avx2", "no AVX-512")])
def test_the_bench_names_the_cpu_and_what_its_avx512_runs_on(family, flags, says):
    info = (f"processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: {family}\nmodel\t\t: 17\n"
            f"model name\t: AMD EPYC 9R14\nflags\t\t: {flags}\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n")
    line = mkl_lever.cpu(info)
    assert line.startswith(f"AMD EPYC 9R14 (AuthenticAMD family {family} model 17") and says in line
    assert mkl_lever.cpu("") == "unknown CPU (no /proc/cpuinfo)"


def test_it_applies_only_to_an_amd_cpu_with_avx512f(monkeypatch):
    monkeypatch.delenv(mkl_lever.SWITCH, raising=False)
    amd = "vendor_id\t: AuthenticAMD\ncpu family\t: 25\nflags\t\t: fpu avx2 {}\n"
    assert mkl_lever.why_not(amd.format("")) == "this CPU has no AVX-512"
    assert mkl_lever.why_not(amd.format("avx512fp16")) == "this CPU has no AVX-512"  # a flag, not a substring
    assert mkl_lever.why_not("vendor_id\t: GenuineIntel\nflags\t\t: avx512f\n").startswith("not an AMD CPU")
    assert mkl_lever.why_not("").startswith("not an AMD CPU")


def test_a_page_kernel_and_make_labs_jupyterlab_start_with_the_shim_exactly_where_it_applies(tmp_path):
    """A page that trains in its own process (workers=0) and the live explorer under `make lab` get the lever as
    the sweep workers do: the kernels `notebooks.execute` starts, and what `mkl_lever exec` launches."""
    import subprocess
    import sys

    import nbformat

    from critwin_lib import notebooks

    probe = "from critwin_lib import mkl_lever\nprint(mkl_lever.active())"
    path = tmp_path / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(probe)]), path)
    out = nbformat.read(notebooks.execute(path, tmp_path / "out", log_output=False), as_version=4)
    assert out.cells[0].outputs[0]["text"].strip() == str(LEVER)
    launched = subprocess.run([sys.executable, "-m", "critwin_lib.mkl_lever", "exec", sys.executable, "-c", probe],
                              capture_output=True, text=True, check=True)
    assert launched.stdout.strip() == str(LEVER)
    assert launched.stderr.startswith("MKL AVX-512 lever: ") and ("starting without it" in launched.stderr) != LEVER
