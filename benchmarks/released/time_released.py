"""Time one training iteration of the paper's released JSP-GFN code (tristandeleu/jax-jsp-gfn).

Run with the OLD venv's python (benchmarks/released/setup.sh), not ours; `benchmarks/speed.py`
starts it as a subprocess. It imports the released package from `--src` and drives its classes
exactly as its train.py loop does after the prefill, on the data array given (float [N, d], .npy):

    epsilon = exploration_schedule(iteration)
    observations["graph"] = to_graphs_tuple(observations["adjacency"])
    actions = gflownet.act(...); env.step(actions); replay.add(...)
    samples = replay.sample(batch_size); gflownet.step(...); float(logs["loss"])  (its tqdm postfix)

(train.py's W&B data loading and posterior estimate are not part of an iteration.) Its loss
always adds its length-2 term (`0.5 * (diffs_t + diffs_tp1)` in DAGGFlowNet.loss, no option to
leave it out), which is 0/0 = NaN for the empty graph; its optax.zero_nans then zeroes the
updates, so the run goes on (with frozen parameters) and the timing is that of the code as
released. "adam_state_nan" in the ready line says whether Adam's moments are NaN after the
warm-up (its logged loss leaves the length-2 term out, so it stays finite).

Protocol (one JSON object per stdout line): after building everything and running the prefill
and `--warmup` iterations it prints {"ready": true, ...}; then each stdin line "run N" runs N
iterations and prints {"s_per_iteration": mean seconds over the iterations during which JAX did
not compile, "compiled": how many did, "iterations": N}. The released code pads its graphs to
powers of two of the number of edges, so new shapes (and a compile) can appear at any time; in
a long run these compiles are amortised, so they are left out of the mean. "quit" exits.

  python time_released.py --src /work/released-src --data x.npy --model lingauss_diag \
      --batch-size 32 --theta-samples 1
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

_COMPILES = [0]


def _count_compiles(event, duration):
    if event.startswith("/jax/core/compile/"):
        _COMPILES[0] += 1


def emit(obj):
    print(json.dumps(obj), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", required=True, help="checkout of tristandeleu/jax-jsp-gfn (commit d53b3b6)")
    parser.add_argument("--data", required=True, help=".npy float array [N, d] of training data")
    parser.add_argument("--model", default="lingauss_diag", choices=["lingauss_diag", "lingauss_full", "mlp_gauss"])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--theta-samples", type=int, default=1, help="its --params_num_samples")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--prefill", type=int, default=100, help="uniform acting iterations before updates")
    parser.add_argument("--warmup", type=int, default=10, help="untimed training iterations after the prefill")
    parser.add_argument("--num-iterations", type=int, default=100_000, help="its run length (epsilon schedule)")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--obs-scale", type=float, default=0.1**0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(Path(__file__).parent))
    import jax
    import jax.monitoring
    import numpy as np
    from _released import ReleasedRun

    jax.monitoring.register_event_duration_secs_listener(_count_compiles)
    start = time.time()
    run = ReleasedRun(
        args.src,
        np.load(args.data).astype(np.float32),
        model=args.model,
        batch_size=args.batch_size,
        theta_samples=args.theta_samples,
        lr=args.lr,
        num_envs=args.num_envs,
        prefill=args.prefill,
        num_iterations=args.num_iterations,
        min_exploration=0.1,
        obs_scale=args.obs_scale,
        seed=args.seed,
        guard=False,  # timed as released
    )
    for _ in range(args.prefill):
        run.step(update=False)
    for _ in range(args.warmup):
        run.step(update=True)
    emit(
        {
            "ready": True,
            "setup_s": time.time() - start,
            "jax": jax.__version__,
            "numpy": np.__version__,
            "replay_size": len(run.replay),
            "adam_state_nan": bool(
                any(np.isnan(np.asarray(leaf)).any() for leaf in jax.tree_util.tree_leaves(run.state.optimizer))
            ),
        }
    )

    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        times, compiled = [], 0
        for _ in range(int(words[1])):
            before = _COMPILES[0]
            t = time.perf_counter()
            run.step(update=True)
            elapsed = time.perf_counter() - t
            if _COMPILES[0] == before:
                times.append(elapsed)
            else:
                compiled += 1
        mean = float(np.mean(times)) if times else float("nan")
        emit({"s_per_iteration": mean, "compiled": compiled, "iterations": int(words[1])})


if __name__ == "__main__":
    main()
