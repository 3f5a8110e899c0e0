"""How far apart the exact optimal policy puts the edges it must take and those it need not (d <= 5).

For each dataset the exact posterior over every DAG (linear Gaussian, theta integrated out, uniform prior) and its
optimal forward policy under the uniform backward policy (gflownet.exact_flows.optimal_flows); printed: at the
empty graph, log P*(add i -> j) for the true graph's edges, their reversals and every other edge. A sampler has to
reproduce these gaps; the lab notes (nineteenth session) read them against the heuristic policy of
flow_heuristic.py.

  .venv/bin/python benchmarks/optimal_edge_choice.py DATA [DATA ...]

DATA: dataset folders of `jspgfn generate --model linear --d 5` (obs_var read from their meta.json).
"""

import argparse

import numpy as np
from scipy.special import logsumexp

from jspgfn.conjugate import log_marginal_likelihood_graphs
from jspgfn.dataset import load_dataset
from jspgfn.gflownet import exact_flows
from jspgfn.models import get_model
from stop_consistency import edge_class_masks


def edge_log_probs_at_empty(lattice, log_posterior):
    """log P*(add i -> j | empty graph) of the optimal policy: float64 [d*d] (nan where i = j)."""
    log_flow, _ = exact_flows.optimal_flows(lattice, log_posterior)
    empty = int(np.flatnonzero(lattice.num_edges == 0)[0])
    children = lattice.children[empty]
    # P_B(empty | one-edge graph) = 1, so P*(G' | empty) = F*(G') / F*(empty)
    return np.where(children >= 0, log_flow[np.maximum(children, 0)] - log_flow[empty], np.nan)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("datasets", nargs="+", metavar="DATA")
    args = parser.parse_args()
    for path in args.datasets:
        ds = load_dataset(path)
        d = ds.train.shape[1]
        if d > 5:
            raise SystemExit(f"{path}: d={d}; the exact optimal policy is listed for d <= 5 only")
        lattice = exact_flows.dag_lattice(d)
        model = get_model("lingauss", obs_var=float(ds.meta["obs_var"]))
        log_marginal = log_marginal_likelihood_graphs(model, ds.train, lattice.graphs)
        log_p = edge_log_probs_at_empty(lattice, log_marginal - logsumexp(log_marginal)).reshape(d, d)
        print(f"{path}: log P*(add edge | empty graph)")
        names = ("true edges", "their reversals", "other edges")
        for name, mask in zip(names, edge_class_masks(ds.graph)):
            values = np.sort(log_p[mask])[::-1]
            print(f"  {name:16s} mean {values.mean():8.1f}  [{' '.join(f'{v:.1f}' for v in values)}]")


if __name__ == "__main__":
    main()
