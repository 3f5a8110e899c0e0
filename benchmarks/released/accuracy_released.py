"""The paper's released JSP-GFN code (tristandeleu/jax-jsp-gfn) against the exact edge marginals.

Run with the OLD venv's python (benchmarks/released/setup.sh), not ours. Trains the released
classes exactly as its train.py loop does (prefill with the uniform policy, then act, env step,
replay add, replay sample, update; exploration schedule over half the run), on a dataset folder
written by `jspgfn generate`, and at each --eval-at iteration draws --num-samples graphs as its
`posterior_estimate` does. Prints, per evaluation, the edge RMSE and Pearson r against the exact
marginals of `jspgfn exact DATA --out EXACT` (the subset DP), the mean edges per sample beside the
exact expectation, and the share of complete DAGs: the same columns as
benchmarks/accuracy_exact_edges.py prints for this project's JSP-GFN, so the two sit side by side.

By default the denominator of its length-2 penalty, the number of edges, is replaced by max(1, .)
(`_released.guard_empty_graph`; `--no-guard` runs it as released): as released it is 0/0 on the empty
graph and the NaN freezes training (FACTS.md).

  /work/released-venv/bin/python benchmarks/released/accuracy_released.py --src /work/released-src \
      DATA=EXACT [DATA=EXACT ...] --num-iterations 6000 --batch-size 128 --theta-samples 4 --lr 1e-4
"""

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path


def read_csv(path):
    import numpy as np

    return np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT", help="dataset folder = its exact .npz")
    parser.add_argument("--src", required=True, help="checkout of tristandeleu/jax-jsp-gfn (commit d53b3b6)")
    parser.add_argument("--model", default="lingauss_diag", choices=["lingauss_diag", "lingauss_full"])
    parser.add_argument("--num-iterations", type=int, default=6000, help="its run length (schedules span it)")
    parser.add_argument("--eval-at", type=int, nargs="+", default=None, help="default: --num-iterations")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--theta-samples", type=int, default=4, help="its --params_num_samples")
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--prefill", type=int, default=1000)
    parser.add_argument("--min-exploration", type=float, default=0.1)
    parser.add_argument("--obs-scale", type=float, default=None, help="default: sqrt(obs_var) of meta.json")
    parser.add_argument("--num-samples", type=int, default=1000)
    parser.add_argument("--no-guard", dest="guard", action="store_false")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(Path(__file__).parent))
    import jax
    import numpy as np
    from _released import ReleasedRun

    eval_at = sorted(set(args.eval_at or [args.num_iterations]))
    print(
        f"# released code {args.src} jax={jax.__version__} cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} "
        f"model={args.model} iterations={args.num_iterations} batch={args.batch_size} S={args.theta_samples} "
        f"lr={args.lr} prefill={args.prefill} guard={args.guard} seed={args.seed}",
        flush=True,
    )
    print("dataset  iter  train_s  edge_rmse  pearson  edges  exact_edges  complete", flush=True)
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        x = read_csv(Path(data_dir) / "train.csv")
        meta = json.loads((Path(data_dir) / "meta.json").read_text())
        exact_edge = np.load(exact_path)["edge"]
        d = x.shape[1]
        run = ReleasedRun(
            args.src,
            x,
            model=args.model,
            batch_size=args.batch_size,
            theta_samples=args.theta_samples,
            lr=args.lr,
            num_envs=args.num_envs,
            prefill=args.prefill,
            num_iterations=args.num_iterations,
            min_exploration=args.min_exploration,
            obs_scale=args.obs_scale or float(np.sqrt(meta["obs_var"])),
            seed=args.seed,
            guard=args.guard,
        )
        elapsed = 0.0
        for target in eval_at:
            start = time.perf_counter()
            while run.iteration < args.prefill + target:
                run.step(update=run.iteration >= args.prefill)
            jax.block_until_ready(run.params)
            elapsed += time.perf_counter() - start
            graphs = run.sample(args.num_samples)
            marginals = graphs.mean(0)
            off = ~np.eye(d, dtype=bool)
            rmse = float(np.sqrt(np.mean((marginals[off] - exact_edge[off]) ** 2)))
            pearson = float(np.corrcoef(marginals[off], exact_edge[off])[0, 1])
            edges = graphs.sum(axis=(1, 2))
            complete = float(np.mean(edges == d * (d - 1) // 2))
            print(
                f"{data_dir}  {run.iteration - args.prefill:6d} {elapsed:8.0f} {rmse:9.3f} {pearson:8.3f} "
                f"{edges.mean():6.1f} {exact_edge.sum():8.1f} {complete:9.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
