"""Does the Huber loss on the noisy theta residuals pull the graph flows toward dense graphs at d=10 and d=20?

benchmarks/huber_bias.py answers this at d=5 by enumeration (at most 0.015 nats per transition there). Here,
for any d, along chains of graphs: the edges of a start graph in a random order (a graph drawn from the exact
posterior by the subset DP when d <= 14, the true graph otherwise), then random edges that keep the graph
acyclic, up to a complete DAG. With q(theta | G) at the mean-field optimum of the linear Gaussian posterior
(the diagonal family's best case), the noise of log R(G, theta) - log q(theta | G) under q is, per node,
-1/2 u^T (C - I) u with u ~ N(0, I) and C the posterior precision of the node's weights scaled to unit
diagonal; its mean is zero, so the mean residual is the change of the ELBO. The Huber loss (delta 1) of a
transition's residual vanishes in expectation at the Huber location of the residual's noise (theta and
theta' drawn independently for every node), not at its mean. Accumulated along a chain, those locations
give the log-reward the biased conditions aim at ("Huber target"), beside the mean-field ELBO (the target
of a squared loss) and the exact log P(D | G). Printed per edge count: the mean over chains of each, relative
to the start graph's value, and the mean Huber location and standard deviation of the residual noise of
the transition into that edge count.

  .venv/bin/python benchmarks/huber_bias_chains.py DATA [--chains 50] [--delta 1.0]
"""

import argparse

import numpy as np

from huber_bias import huber_location
from jspgfn.conjugate import log_marginal_likelihood_local
from jspgfn.dataset import load_dataset
from jspgfn.graphs import transitive_closure
from jspgfn.models import get_model

_DRAWS = 4000


def node_terms(model, x, node, parents, rng):
    """(exact log marginal, mean-field ELBO, noise draws [_DRAWS], C - I [k, k]) of one node given its
    sorted parent list (C: the posterior precision of its k weights scaled to unit diagonal)."""
    exact = log_marginal_likelihood_local(model, x, node, parents)
    gram = x[:, parents].T @ x[:, parents] / model.obs_var
    precision = gram + np.eye(len(parents)) / model.prior_var
    scale = 1 / np.sqrt(np.diag(precision))
    excess = scale[:, None] * precision * scale[None, :] - np.eye(len(parents))
    if len(parents) < 2:
        return exact, exact, np.zeros(_DRAWS), excess  # a diagonal q is exact for one weight
    eigenvalues = np.linalg.eigvalsh(excess) + 1
    gap = -0.5 * np.sum(np.log(eigenvalues))  # KL(best diagonal q || posterior)
    noise = -0.5 * (rng.standard_normal((_DRAWS, len(parents))) ** 2 * (eigenvalues - 1)).sum(1)
    return exact, exact - gap, noise, excess


def coupled_noise(before, after, parents_before, parents_after, rng):
    """The residual noise of a transition when theta and theta' share their standard normal noise eps
    (theta = loc + scale * eps): only the node that gained a parent is left (the other nodes' terms are
    equal at the mean-field q). before/after: C - I of that node [k, k] and [k + 1, k + 1]: [_DRAWS]."""
    eps = rng.standard_normal((_DRAWS, len(parents_after)))
    keep = np.isin(parents_after, parents_before)
    quad_after = np.einsum("ni,ij,nj->n", eps, after, eps)
    quad_before = np.einsum("ni,ij,nj->n", eps[:, keep], before, eps[:, keep])
    return -0.5 * (quad_after - quad_before)


def chain_graphs(start, rng):
    """The graphs of one chain: start's edges in a random order, then random acyclic additions: list of [d, d]."""
    d = start.shape[0]
    graph = np.zeros_like(start)
    chain = [graph.copy()]
    for i, j in rng.permutation(np.argwhere(start)):
        graph[i, j] = 1
        chain.append(graph.copy())
    while True:
        reach = transitive_closure(graph).astype(bool)
        # i -> j is allowed when it is absent and j does not reach i
        allowed = np.argwhere((graph == 0) & ~reach.T & ~np.eye(d, dtype=bool))
        if len(allowed) == 0:
            return chain, int(start.sum())
        i, j = allowed[rng.integers(len(allowed))]
        graph[i, j] = 1
        chain.append(graph.copy())


def start_graphs(dataset, x, model, num, rng):
    d = x.shape[1]
    if d <= 14:
        from jspgfn.exact_dp import local_scores, subset_posterior
        from jspgfn.exact_sampler import sample_dags

        posterior = subset_posterior(local_scores(model, x))
        return sample_dags(posterior, rng, num), "drawn from the exact posterior"
    if dataset.graph is None:
        raise SystemExit("huber_bias_chains: d > 14 needs the dataset's true graph (graph.csv) as the start graph")
    return np.repeat(dataset.graph[None], num, axis=0), "the true graph"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a linear Gaussian dataset folder")
    parser.add_argument("--chains", type=int, default=50)
    parser.add_argument("--delta", type=float, default=1.0, help="the Huber loss's delta")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    model = get_model("lingauss")
    dataset = load_dataset(args.data)
    x = dataset.train.astype(np.float64)
    d = x.shape[1]
    starts, what = start_graphs(dataset, x, model, args.chains, rng)
    cache = {}

    def terms(node, parents):
        key = (node, tuple(sorted(int(p) for p in parents)))
        if key not in cache:
            cache[key] = node_terms(model, x, node, list(key[1]), rng) + (np.array(key[1], dtype=int),)
        return cache[key]

    total = d * (d - 1) // 2
    rows = {
        name: [[] for _ in range(total + 1)]
        for name in ("exact", "elbo", "huber", "bias", "sd", "coupled_bias", "coupled_sd")
    }
    start_edges = []
    for start in starts:
        chain, k0 = chain_graphs(start, rng)
        start_edges.append(k0)
        values = []
        huber = 0.0
        previous = None
        for k, graph in enumerate(chain):
            node_values = [terms(j, np.flatnonzero(graph[:, j])) for j in range(d)]
            exact = sum(v[0] for v in node_values)
            elbo = sum(v[1] for v in node_values)
            if previous is not None:
                residual = sum(
                    v[2][rng.permutation(_DRAWS)] - p[2][rng.permutation(_DRAWS)]
                    for v, p in zip(node_values, previous[2])
                )
                bias = huber_location(residual[None], args.delta)[0]
                huber += elbo - previous[1] + bias
                rows["bias"][k].append(bias)
                rows["sd"][k].append(np.std(residual))
                (j,) = [j for j in range(d) if len(node_values[j][4]) != len(previous[2][j][4])]
                after, before = node_values[j], previous[2][j]
                coupled = coupled_noise(before[3], after[3], before[4], after[4], rng)
                rows["coupled_bias"][k].append(huber_location(coupled[None], args.delta)[0])
                rows["coupled_sd"][k].append(np.std(coupled))
            values.append((exact, elbo, huber))
            previous = (exact, elbo, node_values)
        base = values[k0]
        for k, (exact, elbo, hub) in enumerate(values):
            rows["exact"][k].append(exact - base[0])
            rows["elbo"][k].append(elbo - base[1])
            rows["huber"][k].append(hub - base[2])
    print(
        f"# {args.data}: d={d}, {args.chains} chains through a start graph {what} "
        f"({np.mean(start_edges):.1f} edges on average), Huber delta {args.delta}; values relative to the start graph"
    )
    print(
        "edges  chains  exact logP(D|G)  mean-field ELBO  Huber target  "
        "transition into it: Huber location, noise sd; the same with theta and theta' sharing eps"
    )
    for k in range(total + 1):
        if not rows["exact"][k]:
            continue
        bias = "       -"
        if rows["bias"][k]:
            bias = " ".join(
                f"{np.mean(rows[name][k]):{fmt}}"
                for name, fmt in (("bias", "+8.3f"), ("sd", "8.2f"), ("coupled_bias", "+8.3f"), ("coupled_sd", "8.2f"))
            )
        print(
            f"{k:5d} {len(rows['exact'][k]):7d} {np.mean(rows['exact'][k]):16.1f} {np.mean(rows['elbo'][k]):16.1f} "
            f"{np.mean(rows['huber'][k]):13.1f}  {bias}"
        )


if __name__ == "__main__":
    main()
