#!/usr/bin/env bash
# Issue 29's GPU figure: 20 d=20 MLP trainings in one process (`jspgfn train DATA... --out RUN...`) against
# one, on a lent GPU (target: at most 3x the wall time of one), and the steady-state throughput of K = 1, 20
# and 5 runs in one process against one run alone (benchmarks/speed.py). Self-contained: run from the
# repository root; the data is generated here (benchmarks/speed.py writes its own datasets). About 3 min on
# an H200; each step has a time limit so the whole stays under 4 min, and what finished is kept.
#
#   bash benchmarks/gpu/speed_gpu.sh            # log in $OUT/speed_gpu.log ($OUT: a writable folder)
#
# REDUCED: the trainings run 1,000 iterations of the quick preset (6,000), the rest extrapolated from the
# rate of their own dispatches after the first (which holds the compilation); the in-process table times
# blocks of 200 iterations. dm-haiku comes from the wheels in .whl/ when there are some (JAX with CUDA is
# the machine's own).
set -u
OUT=${OUT:-/tmp/speed_gpu_out}
mkdir -p "$OUT"
LOG="$OUT/speed_gpu.log"
: > "$LOG"
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=$PWD/src:/tmp/site
unset JAX_COMPILATION_CACHE_DIR
export XLA_PYTHON_CLIENT_PREALLOCATE=false  # benchmarks/speed.py and the jspgfn train it starts share the GPU
{
    echo "# benchmarks/gpu/speed_gpu.sh, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "# no nvidia-smi"
    python3 -c "import jax; print('# jax', jax.__version__, jax.devices())"
    echo "# REDUCED: 1,000 of the quick preset's 6,000 iterations per training (the rest extrapolated from each"
    echo "# process's own steady rate); in-process blocks of 200 iterations, best of 3"
    echo
    echo "## 20 d=20 MLP datasets in one jspgfn train process against one dataset alone (issue 29's GPU figure)"
} 2>&1 | tee -a "$LOG"
timeout 120 python3 benchmarks/speed.py --group-case d20-mlp --end-to-end 20 --end-to-end-one \
    --train-iterations 1000 --repeats 1 2>&1 | tee -a "$LOG"
echo "(status ${PIPESTATUS[0]})" | tee -a "$LOG"
echo | tee -a "$LOG"
echo "## K d=20 MLP runs in one process against one run alone, steady state (alternating blocks)" | tee -a "$LOG"
timeout 85 python3 benchmarks/speed.py --group-case d20-mlp --group-sizes 20 5 --iterations 200 --repeats 3 \
    2>&1 | tee -a "$LOG"
echo "(status ${PIPESTATUS[0]}; 124: stopped by the time limit, the rows above finished)" | tee -a "$LOG"
