#!/usr/bin/env bash
# GPU job times for the paper preset's compute plan (docs/speed.md, "Paper preset"): on one d=20 ER2
# dataset of each model (linear, MLP; N=100, the paper's data), every job whose work is JAX on arrays at
# a tenth of its paper budget, timed one after the other: JSP-GFN training (3,000 of 30,000 iterations)
# and its sampling with log P_T (MLP: 1,000 samples, beam 16, 64 orders, mixture proposal, the paper
# preset's estimator in full), DiBS (300 of 3,000 steps, 30 particles), BCD Nets (2,000 of 20,000 steps),
# VBG (15 rounds x 200 of 2,000 updates). Each row: job, the share of the paper budget, wall seconds
# (start and compilation included: times x 10 overstate the paper job by about the start-up), the JAX
# version and device. About 5-10 min on one H100/H200.
#
#   bash benchmarks/gpu_job_times.sh OUT   # needs `jspgfn` (with the baselines) and JAX with CUDA on PATH;
#                                          # PYTHON=.venv/bin/python names the interpreter that reports JAX
set -euo pipefail
out=${1:?usage: bash benchmarks/gpu_job_times.sh OUT}
mkdir -p "$out"
csv="$out/gpu_job_times.csv"
device=$("${PYTHON:-python}" -c 'import jax; print("JAX", jax.__version__, jax.devices()[0].device_kind)' 2>/dev/null \
    || echo "unknown")
echo "job,paper_budget_share,seconds,jax_and_device" > "$csv.tmp"

timed() {  # timed NAME SHARE COMMAND...: run COMMAND, its output to OUT/NAME.log, one CSV row
    local name=$1 share=$2 start end
    shift 2
    start=$(date +%s.%N)
    "$@" > "$out/$name.log" 2>&1 || { echo "gpu_job_times: $name failed, see $out/$name.log" >&2; exit 1; }
    end=$(date +%s.%N)
    printf '%s,%s,%.1f,%s\n' "$name" "$share" "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" "$device" >> "$csv.tmp"
    echo "$name: done"
}

for model in linear mlp; do
    jspgfn generate --graph er2 --model "$model" --d 20 --n 100 --n-test 100 --obs-var 0.01 --seed 0 \
        --out "$out/data/$model" > "$out/generate_$model.log" 2>&1
done
lin="$out/data/linear"
mlp="$out/data/mlp"
timed jspgfn_train_linear 0.1 jspgfn train "$lin" --model lingauss --family diag --preset paper --seed 0 \
    --param=num_iterations=3000 --no-progress --out "$out/runs/linear"
timed jspgfn_sample_linear 1 jspgfn sample "$out/runs/linear" --num 1000 --seed 0 --out "$out/linear.npz"
timed jspgfn_train_mlp 0.1 jspgfn train "$mlp" --model mlp-gauss --family diag --preset paper --seed 0 \
    --param=num_iterations=3000 --param=theta_elbo=1.0 --param=learning_rate=0.001 --no-progress \
    --out "$out/runs/mlp"
timed jspgfn_sample_mlp_log_pt 1 jspgfn sample "$out/runs/mlp" --num 1000 --seed 0 --log-pt --beam-size 16 \
    --mc-samples 64 --log-pt-proposal mixture --out "$out/mlp.npz"
timed dibs_mlp 0.1 jspgfn baseline dibs "$mlp" --model mlp-gauss --seed 0 --param=edges_per_node=2 \
    --param=num_particles=30 --param=steps=300 --param=n_grad_mc_samples=128 --out "$out/dibs_mlp.npz"
timed dibs_er2_linear 0.1 jspgfn baseline dibs "$lin" --model lingauss --seed 0 --param=edges_per_node=2 \
    --param=num_particles=30 --param=steps=300 --param=n_grad_mc_samples=128 --out "$out/dibs_linear.npz"
timed bcd_nets_linear 0.1 jspgfn baseline bcd-nets "$lin" --model lingauss --seed 0 --param=steps=2000 \
    --param=num_mc_samples=64 --param=num_samples=1000 --out "$out/bcd.npz"
timed vbg_linear 0.1 jspgfn baseline vbg "$lin" --model lingauss --seed 0 --param=num_rounds=15 \
    --param=gflownet_iterations_per_round=200 --param=num_samples=1000 --out "$out/vbg.npz"
mv "$csv.tmp" "$csv"
cat "$csv"
