#!/usr/bin/env bash
# One short job for a machine with a GPU (issue #12): is the GPU path right, how fast is it, and one claim's
# paper-profile runs trained there.
#   1. the ensemble equivalence tests on CUDA (each member's history equals its solo run's, float64);
#   2. `make bench`'s ensemble part on CUDA: runs per hour for K = 1, 8, 64, 256 (-> bench.json);
#   3. the paper-profile plan's projected time at that rate;
#   4. the C1 page's paper-profile runs, in ensembles on the GPU, for at most GPU_CHECK_SWEEP_S seconds
#      (default 300; every finished ensemble is stored, an interrupted one is simply trained again later).
# Everything it reports goes to $OUT (default _build/gpu_check): log.txt, bench.json and runs.tar.gz (the runs
# it trained, to unpack into results/ with `tar xzf runs.tar.gz -C results`).
# GPU_CHECK_DEVICE=cpu walks the same steps on the CPU (slowly; to try the script where there is no GPU).
# PYTHON: the interpreter to use (default .venv/bin/python where it exists, else python3); it needs a CUDA
# build of torch and the packages of requirements.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-_build/gpu_check}"
mkdir -p "$out"
py="${PYTHON:-$([ -x .venv/bin/python ] && echo .venv/bin/python || echo python3)}"
device="${GPU_CHECK_DEVICE:-cuda}"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" CRITWIN_DEVICE="$device"
exec > >(tee "$out/log.txt") 2>&1

if [ "$device" = cuda ] && ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  "$py" -c 'import torch; print(f"gpu_check: torch {torch.__version__} (CUDA build: {torch.version.cuda or chr(45)}) sees no GPU here; nothing to check")'
  exit 2
fi
[ "$device" = cuda ] && "$py" -c 'import torch; p = torch.cuda.get_device_properties(0); print(f"gpu_check: torch {torch.__version__}, {p.name}, {p.total_memory / 2**30:.0f} GiB")'

echo "== 1. ensemble = solo runs, on $device"
"$py" -m pytest -q -p no:cacheprovider tests/test_ensemble.py

echo "== 2. ensembles per hour on $device"
"$py" -m critwin_lib.bench --only-ensembles --out "$out/bench.json"

echo "== 3. the paper plan at that rate"
"$py" -m critwin_lib.notebooks plan --profile paper --bench "$out/bench.json"

echo "== 4. C1's paper-profile runs on $device (at most ${GPU_CHECK_SWEEP_S:-300} s)"
stamp="$out/.start"; touch "$stamp"
cat > "$out/.sweep.py" <<'EOF'
from critwin_lib import experiment
from critwin_lib.claims import registry, scoreboard

if __name__ == "__main__":  # a file, not stdin: Dask's worker processes (CPU) re-import the main module
    page = registry.BY_STEM["c01_critical_window"]
    runs = registry.planned_runs(page.notebook.stem, scoreboard.page_params(page, "paper", "results"))
    experiment.sweep(runs, "results", allow_failures=True)  # device: $CRITWIN_DEVICE
EOF
timeout --signal=INT "${GPU_CHECK_SWEEP_S:-300}" "$py" "$out/.sweep.py" \
  || echo "gpu_check: the sweep stopped at its time limit; finished ensembles are stored"
new=$(find results/runs -mindepth 1 -maxdepth 1 -type d -newer "$stamp" ! -name '.*' -printf '%f\n' | sort)
if [ -n "$new" ]; then
  tar czf "$out/runs.tar.gz" -C results $(printf 'runs/%s ' $new)
  echo "gpu_check: $(echo "$new" | wc -l) runs trained, in $out/runs.tar.gz"
else
  echo "gpu_check: no run finished"
fi
