"""Where JSP-GFN's sampled trajectories go wrong: edge by edge, scored exactly (linear Gaussian).

For a trained run folder and its dataset, draws K trajectories of the sampler (from the empty graph until
stop, as `jspgfn sample`) and, at every edge count k along them, prints:
  reach      share of trajectories that add a k-th edge;
  score      mean exact log P(D | G_k) + log P(G_k) of the state after k edges (theta integrated out);
  stop       mean log P_phi(stop | G_k) the sampler gave that state;
  in_true / reversed  share of k-th edges that are in the dataset's true graph / reverse one of its edges;
  marg       (with --exact) mean exact posterior marginal of the k-th edge added, and
  low        the share of k-th edges whose exact marginal is below 0.05 (a "wrong turn").
Then, per trajectory: the final graph's score against the best score met along the way (a sampler that
passes good graphs without stopping has best >> final), the edge count where that best was met, and the
log P(stop) it had there. With --exact, the typical score of the exact posterior (from its own samples)
is printed beside them. This tells a stop that is too small at good graphs apart from wrong edges taken
early, which the flow then carries on to dense graphs (docs/jspgfn-beyond-d5.md).

  .venv/bin/python benchmarks/trajectory_diagnosis.py RUN DATA [--exact EXACT.npz] [--num 500]

With --exact it also prints the edge RMSE of the K sampled graphs against the exact marginals.
"""

import argparse
import functools
import sys

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.dataset import load_dataset
from jspgfn.exact import load_exact
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet.sample import policy_step
from jspgfn.gflownet.train import enable_compilation_cache, load_run
from jspgfn.models import get_graph_prior, get_model


@functools.partial(jax.jit, static_argnums=(0, 3, 4, 5))
def trajectories(apply_fn, params, key, num, d, max_parents):
    """num trajectories: adjacency after each step uint8 [T, num, d, d], log P(stop | state before the
    step) [T, num], the action int [T, num] (d*d = stop) and done-before-step bool [T, num]; T = d(d-1)/2 + 1."""
    steps = d * (d - 1) // 2 + 1

    def body(carry, k):
        state, done = carry
        new, stop, actions, log_stop, _ = policy_step(apply_fn, params, state, done, k, max_parents)
        return (new, stop), (state.adjacency, log_stop, actions, done)

    init = (envlib.reset(num, d), jnp.zeros((num,), bool))
    _, outputs = jax.lax.scan(body, init, jax.random.split(key, steps))
    return outputs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run")
    parser.add_argument("data")
    parser.add_argument("--exact", help="the dataset's exact posterior (`jspgfn exact`), for edge marginals")
    parser.add_argument("--num", type=int, default=500, help="trajectories")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    enable_compilation_cache()
    trainer, state, info, config = load_run(args.run)
    ds = load_dataset(args.data)
    d = ds.train.shape[1]
    model = get_model("lingauss", **config.get("model_kwargs", {}))
    prior = get_graph_prior(trainer.cfg.graph_prior, d)
    states, log_stop, actions, done = (
        np.asarray(a)
        for a in trajectories(
            trainer.network.apply, state.params, jax.random.PRNGKey(args.seed), args.num, d, trainer.cfg.max_parents
        )
    )
    # states[t] is the graph before step t: the state with t edges for a trajectory not yet done
    active = ~done  # [T, K]: the trajectory is at state t (t edges) and acts
    lengths = active.sum(0) - 1  # edges of the final graph
    flat = states.reshape(-1, d, d)
    scores = log_marginal_likelihood_graphs(model, ds.train, flat, graph_prior=prior).reshape(states.shape[:2])
    edge_marg = None
    if args.exact:
        exact = load_exact(args.exact)
        edge_marg = exact.edge
    print(
        f"# run={args.run} iterations={info['iteration']} d={d} K={args.num} mean edges {lengths.mean():.1f} "
        f"(min {lengths.min()}, max {lengths.max()})"
    )
    truth = ds.graph
    print(" k  reach   score   stop  in_true  reversed" + ("   marg   low" if edge_marg is not None else ""))
    for t in range(states.shape[0]):
        at = active[t]
        if not at.any():
            break
        line = f"{t:3d}  {at.mean():5.3f} {scores[t, at].mean():7.1f} {log_stop[t, at].mean():8.2f}"
        adds = at & (actions[t] < d * d)
        if adds.any():
            src, dst = actions[t, adds] // d, actions[t, adds] % d
            if truth is not None:
                line += f"  {truth[src, dst].mean():6.3f}  {truth[dst, src].mean():6.3f}"
            if edge_marg is not None:
                m = edge_marg[src, dst]
                line += f"  {m.mean():5.3f} {np.mean(m < 0.05):5.3f}"
        print(line)
    final = scores[lengths, np.arange(args.num)]
    masked = np.where(active, scores, -np.inf)
    best_at = masked.argmax(0)
    best = masked.max(0)
    print(
        f"final score {final.mean():.1f} (sd {final.std():.1f}); best along the way {best.mean():.1f}, met at "
        f"{best_at.mean():.1f} edges, log P(stop) there {log_stop[best_at, np.arange(args.num)].mean():.2f}; "
        f"share with best > final + 10: {np.mean(best > final + 10):.3f}"
    )
    if ds.graph is not None:
        true_score = log_marginal_likelihood_graphs(model, ds.train, ds.graph, graph_prior=prior)
        print(f"true graph: {int(ds.graph.sum())} edges, score {true_score:.1f}")
    if args.exact:
        # the exact file's graphs: every DAG (enumeration) or the DP's samples, weighted by log_probs
        weights = np.exp(exact.log_probs - exact.log_probs.max())
        weights /= weights.sum()
        s = log_marginal_likelihood_graphs(model, ds.train, exact.graphs, graph_prior=prior)
        mean = float(weights @ s)
        sd = float(np.sqrt(weights @ (s - mean) ** 2))
        print(f"exact posterior: {float(exact.edge.sum()):.1f} edges, score {mean:.1f} (sd {sd:.1f})")
        finals = states[lengths, np.arange(args.num)]  # [K, d, d]: the sampled graphs
        off = ~np.eye(d, dtype=bool)
        rmse = float(np.sqrt(np.mean((finals.mean(0)[off] - exact.edge[off]) ** 2)))
        print(f"the sampled graphs' edge RMSE against the exact marginals: {rmse:.3f}")
        # its sampler adds the edges of G ~ P(G | D) in a uniform order: the k-th edge is a uniform edge of G
        per_graph = exact.graphs.sum(axis=(1, 2)).clip(min=1)
        marg = (exact.graphs * exact.edge).sum(axis=(1, 2)) / per_graph
        low = (exact.graphs * (exact.edge < 0.05)).sum(axis=(1, 2)) / per_graph
        line = f"the exact sampler's edges: marg {weights @ marg:.3f}, low {weights @ low:.3f}"
        if truth is not None:
            line += f", in_true {weights @ ((exact.graphs * truth).sum(axis=(1, 2)) / per_graph):.3f}"
            line += f", reversed {weights @ ((exact.graphs * truth.T).sum(axis=(1, 2)) / per_graph):.3f}"
        print(line)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
