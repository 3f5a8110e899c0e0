"""The paper's released JSP-GFN code (tristandeleu/jax-jsp-gfn) against the exact edge marginals.

Run with the OLD venv's python (benchmarks/released/setup.sh), not ours. Trains the released
classes exactly as its train.py loop does (prefill with the uniform policy, then act, env step,
replay add, replay sample, update; exploration schedule over half the run), on a dataset folder
written by `jspgfn generate`, and at each --eval-at iteration draws --num-samples graphs as its
`posterior_estimate` does. Prints, per evaluation, the edge RMSE and Pearson r against the exact
marginals of `jspgfn exact DATA --out EXACT` (the subset DP), the mean edges per sample beside the
exact expectation, and the share of complete DAGs: the same columns as
benchmarks/accuracy_exact_edges.py prints for this project's JSP-GFN, so the two sit side by side.

`--guard` (on by default) replaces the denominator of its length-2 penalty, the number of edges, by
max(1, .): as released it is 0/0 on the empty graph and the NaN freezes training (FACTS.md). The
change is made on the released source text at import time and checked to apply exactly once.

  /work/released-venv/bin/python benchmarks/released/accuracy_released.py --src /work/released-src \
      DATA=EXACT [DATA=EXACT ...] --num-iterations 6000 --batch-size 128 --theta-samples 4 --lr 1e-4
"""

import argparse
import inspect
import json
import os
import sys
import textwrap
import time
import warnings
from pathlib import Path

_UNGUARDED = "self.num_samples * jnp.sum(dist.mask, axis=(1, 2))"
_GUARDED = "self.num_samples * jnp.maximum(1., jnp.sum(dist.mask, axis=(1, 2)))"


def guard_empty_graph(gflownet_module):
    """Re-define DAGGFlowNet.get_state with the penalty's denominator max(1, #edges)."""
    source = textwrap.dedent(inspect.getsource(gflownet_module.DAGGFlowNet.get_state))
    if source.count(_UNGUARDED) != 1:
        raise RuntimeError("the released get_state is not the expected one (commit d53b3b6)")
    namespace = {}
    exec(source.replace(_UNGUARDED, _GUARDED), vars(gflownet_module), namespace)
    gflownet_module.DAGGFlowNet.get_state = namespace["get_state"]


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
    sys.path.insert(0, args.src)
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from dag_gflownet import gflownet as gflownet_module
    from dag_gflownet.env import GFlowNetDAGEnv
    from dag_gflownet.models.priors import UniformPrior
    from dag_gflownet.utils.data import Dataset
    from dag_gflownet.utils.factories import get_model
    from dag_gflownet.utils.gflownet import posterior_estimate
    from dag_gflownet.utils.jraph_utils import to_graphs_tuple
    from dag_gflownet.utils.replay_buffer import ReplayBuffer

    if args.guard:
        guard_empty_graph(gflownet_module)
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
        obs_scale = args.obs_scale or float(np.sqrt(meta["obs_var"]))
        train = Dataset(data=jnp.asarray(x), interventions=jnp.zeros_like(jnp.asarray(x)))

        # As train.py's main(), with the dataset folder instead of a W&B artifact.
        rng = np.random.default_rng(args.seed)
        key = jax.random.PRNGKey(args.seed)
        key, subkey = jax.random.split(key)
        env = GFlowNetDAGEnv(num_envs=args.num_envs, num_variables=d, max_parents=None)
        replay = ReplayBuffer(100_000, num_variables=d)
        model = get_model(args.model, UniformPrior(), train, obs_scale)
        gflownet = gflownet_module.DAGGFlowNet(
            model=model,
            delta=1.0,
            num_samples=args.theta_samples,
            update_target_every=0,
            dataset_size=x.shape[0],
            batch_size=None,
        )
        params, state = gflownet.init(subkey, optax.adam(args.lr), replay.dummy["graph"], replay.dummy["mask"])
        exploration_schedule = jax.jit(
            optax.linear_schedule(
                init_value=jnp.array(0.0),
                end_value=jnp.array(1.0 - args.min_exploration),
                transition_steps=args.num_iterations // 2,
                transition_begin=args.prefill,
            )
        )
        normalization = jnp.array(x.shape[0])
        observations, indices = env.reset(), None
        elapsed, iteration = 0.0, 0
        for target in eval_at:
            start = time.perf_counter()
            while iteration < args.prefill + target:
                epsilon = exploration_schedule(iteration)
                observations["graph"] = to_graphs_tuple(observations["adjacency"])
                actions, key, logs = gflownet.act(params.online, key, observations, epsilon, normalization)
                next_observations, delta_scores, dones, _ = env.step(np.asarray(actions))
                indices = replay.add(
                    observations,
                    actions,
                    logs["is_exploration"],
                    next_observations,
                    delta_scores,
                    dones,
                    prev_indices=indices,
                )
                observations = next_observations
                if iteration >= args.prefill:
                    samples = replay.sample(batch_size=args.batch_size, rng=rng)
                    params, state, logs = gflownet.step(params, state, samples, train, normalization)
                iteration += 1
            jax.block_until_ready(params)
            elapsed += time.perf_counter() - start
            key, subkey = jax.random.split(key)
            graphs, _ = posterior_estimate(
                gflownet,
                params.online,
                GFlowNetDAGEnv(num_envs=args.num_envs, num_variables=d, max_parents=None),
                subkey,
                train,
                num_samples=args.num_samples,
                verbose=False,
            )
            marginals = graphs.mean(0)
            off = ~np.eye(d, dtype=bool)
            rmse = float(np.sqrt(np.mean((marginals[off] - exact_edge[off]) ** 2)))
            pearson = float(np.corrcoef(marginals[off], exact_edge[off])[0, 1])
            edges = graphs.sum(axis=(1, 2))
            complete = float(np.mean(edges == d * (d - 1) // 2))
            print(
                f"{data_dir}  {iteration - args.prefill:6d} {elapsed:8.0f} {rmse:9.3f} {pearson:8.3f} "
                f"{edges.mean():6.1f} {exact_edge.sum():8.1f} {complete:9.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
