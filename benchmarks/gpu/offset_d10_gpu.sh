#!/usr/bin/env bash
# The score offset at d=10 on all ten datasets and two training seeds, on a lent GPU: the twenty runs of one
# setting in one compiled program (accuracy_seeds.py's group), against the exact posterior. Self-contained: run
# from the repository root; the data and the exact posteriors are generated here (about a minute on the CPUs).
#
#   bash benchmarks/gpu/offset_d10_gpu.sh offset   # stop_score_offset=1 theta_elbo=1 stop_target_tau=0.1
#   bash benchmarks/gpu/offset_d10_gpu.sh target   # stop_target_tau=0.1 alone, the same twenty runs
#   EXTRA="--set replay_capacity=20000" bash benchmarks/gpu/offset_d10_gpu.sh offset   # more options (EXTRA)
#
# Log in $OUT/offset_d10_<setting>[_extra].log ($OUT: a writable folder); each setting has a time limit (TIME_LIMIT
# seconds, default 480) and prints each evaluation as it ends, so what finished is kept. EVAL_AT (default
# "6000 15000 30000") sets the evaluations; the schedules span the last, as in the lab notes' 30,000-iteration runs.
# dm-haiku comes from the wheels in .whl/ when there are some (JAX with CUDA is the machine's own).
set -u
SETTING=${1:-offset}
OUT=${OUT:-/tmp/offset_d10_out}
EVAL_AT=${EVAL_AT:-6000 15000 30000}
TIME_LIMIT=${TIME_LIMIT:-480}
EXTRA=${EXTRA:-}
DATA=${DATA:-/tmp/offset_d10_data}
mkdir -p "$OUT" "$DATA"
LOG="$OUT/offset_d10_${SETTING}${EXTRA:+_extra}.log"  # with EXTRA: offset_d10_<setting>_extra.log
: > "$LOG"
case "$SETTING" in
    offset) SCRIPT=benchmarks/score_stop_offset.py; OPTIONS="--weight 1 --no-report --set theta_elbo=1" ;;
    target) SCRIPT=benchmarks/accuracy_seeds.py; OPTIONS="" ;;
    *) echo "offset_d10_gpu.sh: the setting is 'offset' or 'target', not '$SETTING'" >&2; exit 2 ;;
esac
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
fi
export PYTHONPATH=$PWD/src:/tmp/site
PY=${PY:-python3}
{
    echo "# benchmarks/gpu/offset_d10_gpu.sh $SETTING $EXTRA, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || echo "# no nvidia-smi"
    $PY -c "import jax; print('# jax', jax.__version__, jax.devices())"
} 2>&1 | tee -a "$LOG"
PAIRS=()
for graph in er1 er2; do
    for s in 0 1 2 3 4; do
        dir=$DATA/d10$graph/$s
        exact=$DATA/d10$graph/exact$s.npz
        if [ ! -f "$exact" ]; then
            $PY -m jspgfn.cli generate --graph $graph --model linear --d 10 --n 100 --n-test 100 --obs-var 0.01 \
                --seed $s --out "$dir" > /dev/null &&
                $PY -m jspgfn.cli exact "$dir" --obs-var 0.01 --samples 2000 --out "$exact" > /dev/null 2>&1 ||
                { echo "offset_d10_gpu.sh: could not make $exact" | tee -a "$LOG"; exit 1; }
        fi
        PAIRS+=("$dir=$exact")
    done
done
# shellcheck disable=SC2086  # OPTIONS, EXTRA and EVAL_AT are word lists
timeout "$TIME_LIMIT" $PY $SCRIPT "${PAIRS[@]}" --seeds 0 1 --eval-at $EVAL_AT --set stop_target_tau=0.1 $OPTIONS \
    $EXTRA 2>&1 | tee -a "$LOG"
echo "(status ${PIPESTATUS[0]}; 124: stopped by the time limit, the rows above finished)" | tee -a "$LOG"
