#!/usr/bin/env bash
# Fault test of JSP-GFN training under SLURM: a training job cancelled mid-run resumes from its
# checkpoint when the workflow is rerun, and nothing is lost.
#
#   bash .ci/slurm/fault-test.sh OUT_DIR        (needs a running SLURM cluster and .venv)
#
# 1. snakemake --profile profiles/slurm --profile profiles/slurm/gpu (the training job asks for
#    one GPU: the CI cluster has a fake one) runs .ci/slurm/fault.yaml up to the samples of its
#    one JSP-GFN run; as soon as the training job has written a checkpoint, scancel it.
# 2. The same snakemake command again: the training job resumes from that checkpoint.
# 3. Checks: the run reached num_iterations; its metrics.jsonl continues at the checkpoint's
#    iteration + one dispatch (it did not start over); its samples (graphs, theta, ...) are equal,
#    bit for bit, to those of an uninterrupted `jspgfn train` + `jspgfn sample` with the same
#    seed and settings (training is deterministic under resume: tests/test_gflownet_train.py).
# Exit status: 0 passed; 1 failed.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root="$(pwd)"
bin="$root/.venv/bin"
out="${1:?usage: fault-test.sh OUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
config=.ci/slurm/fault.yaml
res="$out/results"
run="$res/custom/small_graphs/runs/jspgfn-diag/0"
target="$res/custom/small_graphs/samples/jspgfn-diag/0.npz"
say() { echo "fault-test: $*"; }
fail() { echo "fault-test: FAILED: $*" >&2; exit 1; }

rm -rf "$res" "$out/reference" "$out"/*.log

py() { "$bin/python" - "$@"; }
checkpoint_iteration() {  # iteration stored in a checkpoint.npz (empty if unreadable)
    py "$1" <<'EOF' 2>/dev/null
import json, sys
import numpy as np
with np.load(sys.argv[1], allow_pickle=False) as f:
    print(json.loads(str(f["info"]))["iteration"])
EOF
}
num_iterations=$(py "$config" <<'EOF'
import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["methods"]["jspgfn-diag"]["params"]["num_iterations"])
EOF
)
smk=("$bin/snakemake" --profile profiles/slurm --profile profiles/slurm/gpu --configfile "$config"
     --config "results=$res" --jobs 2 --slurm-init-seconds-before-status-checks 5)

# ------------------------------------------------------------------ 1. run, then cancel training
say "submitting: snakemake --profile profiles/slurm --profile profiles/slurm/gpu --configfile $config $target"
"${smk[@]}" "$target" >"$out/attempt1.log" 2>&1 &
smk_pid=$!
job=""
it=""
deadline=$(( $(date +%s) + 400 ))
while (( $(date +%s) < deadline )); do
    kill -0 "$smk_pid" 2>/dev/null || break
    [[ -n $job ]] || job=$(squeue -h -o '%i %k' 2>/dev/null | awk '$2 ~ /^rule_jspgfn_train/ {print $1; exit}')
    if [[ -n $job && -f $run/checkpoint.npz ]]; then
        it=$(checkpoint_iteration "$run/checkpoint.npz")
        [[ -n $it && $it -gt 0 ]] && break
    fi
    sleep 0.5
done
[[ -n $job ]] || { kill "$smk_pid" 2>/dev/null; wait "$smk_pid"; tail -n 30 "$out/attempt1.log"; fail "no jspgfn_train job appeared in squeue"; }
[[ -n $it && $it -gt 0 ]] || { kill "$smk_pid" 2>/dev/null; wait "$smk_pid"; tail -n 30 "$out/attempt1.log"; fail "no checkpoint appeared before the job or snakemake ended"; }
gres=$(scontrol show job "$job" 2>/dev/null | grep -oE 'gres[/:]gpu[=:][0-9]+' | head -n 1)
say "training job $job (GPU request seen by SLURM: ${gres:-none}) has a checkpoint at iteration $it: scancel $job"
scancel "$job"
wait "$smk_pid"
rc1=$?
state=$(squeue -h -t all -j "$job" -o %T 2>/dev/null)
[[ $rc1 -ne 0 ]] || fail "snakemake succeeded although its training job was cancelled (job state: $state)"
[[ $state == CANCELLED* ]] || fail "job $job ended as '$state', not CANCELLED"
[[ ! -f $target ]] || fail "the samples exist after the cancelled attempt"
resumed_from=$(checkpoint_iteration "$run/checkpoint.npz")
lines1=$(wc -l <"$run/metrics.jsonl")
[[ -n $resumed_from && $resumed_from -gt 0 && $resumed_from -lt $num_iterations ]] \
    || fail "checkpoint after the cancel at iteration '$resumed_from' (want 0 < it < $num_iterations)"
say "job $job CANCELLED, snakemake exited $rc1; checkpoint at iteration $resumed_from of $num_iterations, $lines1 metrics lines"
[[ -z $gres ]] && fail "the training job did not ask SLURM for a GPU (profiles/slurm/gpu)"

# ------------------------------------------------------------------ 2. rerun: resume
say "rerunning the same command"
"${smk[@]}" "$target" >"$out/attempt2.log" 2>&1 || { tail -n 30 "$out/attempt2.log"; fail "the rerun failed ($out/attempt2.log)"; }
[[ -f $target ]] || fail "no samples after the rerun"
final=$(checkpoint_iteration "$run/checkpoint.npz")
[[ $final == "$num_iterations" ]] || fail "the resumed run stopped at iteration '$final', not $num_iterations"
first_after=$(py "$run/metrics.jsonl" "$resumed_from" <<'EOF'
import json, sys
# metrics.jsonl is trimmed to the checkpoint on resume: iterations strictly increase, and the
# first one past the checkpoint is where the rerun started ("" when they do not increase).
iterations = [json.loads(line)["iteration"] for line in open(sys.argv[1]).read().splitlines()]
after = [it for it in iterations if it > int(sys.argv[2])]
increasing = all(a < b for a, b in zip(iterations, iterations[1:]))
print(after[0] if after and increasing else "")
EOF
)
step=$(py "$config" <<'EOF'
import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["methods"]["jspgfn-diag"]["params"]["iterations_per_dispatch"])
EOF
)
[[ $first_after == $(( resumed_from + step )) ]] \
    || fail "after the rerun, metrics.jsonl continues at iteration '$first_after', not $((resumed_from + step)) (or its iterations do not increase): it did not resume from $resumed_from"
say "rerun resumed at iteration $resumed_from (next logged iteration $first_after) and finished at $final"

# ------------------------------------------------------------------ 3. same samples as an uninterrupted run
say "uninterrupted reference run (same data, seed and settings), locally"
read -r -a train_args < <(py "$config" <<'EOF'
import json, sys, yaml
m = yaml.safe_load(open(sys.argv[1]))["methods"]["jspgfn-diag"]
print(m["likelihood"], m["family"], m["preset"], m["num_samples"],
      *(f"--param={k}={json.dumps(v)}" for k, v in sorted(m["params"].items())))
EOF
)
likelihood=${train_args[0]} family=${train_args[1]} preset=${train_args[2]} num=${train_args[3]}
"$bin/jspgfn" train "$res/custom/small_graphs/data/0" --model "$likelihood" --family "$family" --preset "$preset" \
    --seed 0 "${train_args[@]:4}" \
    --no-progress --out "$out/reference" >"$out/reference-train.log" 2>&1 || fail "reference training failed ($out/reference-train.log)"
"$bin/jspgfn" sample "$out/reference" --num "$num" --seed 0 --out "$out/reference.npz" >"$out/reference-sample.log" 2>&1 \
    || fail "reference sampling failed"
py "$target" "$out/reference.npz" <<'EOF' || fail "the resumed run's samples differ from the uninterrupted run's"
import sys
import numpy as np
a, b = np.load(sys.argv[1], allow_pickle=False), np.load(sys.argv[2], allow_pickle=False)
keys = sorted(k for k in a.files if k != "metadata")
assert keys == sorted(k for k in b.files if k != "metadata"), (a.files, b.files)
assert "graphs" in keys and "theta" in keys, keys
bad = [k for k in keys if not np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f")]
print(f"fault-test: samples compared: {', '.join(f'{k} {a[k].shape}' for k in keys)}: "
      + ("EQUAL" if not bad else f"DIFFERENT: {bad}"))
sys.exit(1 if bad else 0)
EOF
say "passed: job cancelled at iteration >= $it, resumed from $resumed_from, samples equal to an uninterrupted run's"
exit 0
