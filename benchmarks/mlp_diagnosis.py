"""What a trained JSP-GFN run's posterior looks like, graph by graph (the d=20 MLP diagnosis, docs/decisions.md).

For a run folder and its dataset (with graph.csv): the edges of 200 sampled graphs (mean, share empty, true
positives), then for the empty, the true and three random DAGs: log R at the mean of q(theta | G), the mean
and standard deviation of log R and of log R - log q over 16 draws of q, q's mean scale, and log P(stop | G).

  .venv/bin/python benchmarks/mlp_diagnosis.py RUN_DIR results/quick/larger_graphs_mlp/data/0
"""

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

from jspgfn.gflownet import policy
from jspgfn.gflownet.loss import log_rewards
from jspgfn.gflownet.sample import sample_joint
from jspgfn.gflownet.train import load_run


def random_dag(rng, d, p):
    order = rng.permutation(d)
    upper = np.triu(rng.random((d, d)) < p, 1).astype(np.uint8)
    inverse = np.argsort(order)
    return upper[np.ix_(inverse, inverse)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("data", help="dataset folder with train.csv and graph.csv")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    trainer, state, info, _ = load_run(args.run_dir)
    x = jnp.asarray(pd.read_csv(f"{args.data}/train.csv").to_numpy(np.float32))
    true = pd.read_csv(f"{args.data}/graph.csv").to_numpy().astype(np.uint8)
    d = true.shape[0]

    graphs, _ = sample_joint(
        trainer.network.apply, trainer.model, state.params, jax.random.PRNGKey(0), 200, d, trainer.cfg.max_parents
    )
    edges = graphs.sum(axis=(1, 2))
    hits = (graphs * true).sum(axis=(1, 2))
    print(
        f"iteration {int(info['iteration'])}: edges per sample {edges.mean():.1f}, empty {np.mean(edges == 0):.2f}, "
        f"true edges per sample {hits.mean():.1f} of {true.sum()}"
    )

    rng = np.random.default_rng(0)
    named = {"empty": np.zeros((d, d), np.uint8), "true": true}
    named.update({f"random p={p}": random_dag(rng, d, p) for p in (0.1, 0.3, 0.8)})
    adjacency = jnp.asarray(np.stack(list(named.values())))
    out = trainer.network.apply(state.params, adjacency)
    mask = policy.node_mask_of(trainer.model, adjacency)
    theta = policy.sample_theta(jax.random.PRNGKey(1), out, mask, 16)
    log_q = policy.theta_log_prob(out, theta, mask)
    log_r = log_rewards(trainer.model, trainer.graph_prior, theta, adjacency, x, x.shape[0])
    log_r_mean = log_rewards(trainer.model, trainer.graph_prior, out["loc"][:, None], adjacency, x, x.shape[0])
    log_stop = policy.log_stop_prob(out["stop_logit"], jnp.ones(adjacency.shape, bool))
    scale = (out["scale"] * mask).sum(axis=(1, 2)) / mask.sum(axis=(1, 2))
    for i, name in enumerate(named):
        f = log_r[i] - log_q[i]
        print(
            f"{name:13s} edges {int(adjacency[i].sum()):3d} | log R at q's mean {float(log_r_mean[i, 0]):10.1f} | "
            f"log R {float(log_r[i].mean()):10.1f} sd {float(log_r[i].std()):7.1f} | log R - log q "
            f"{float(f.mean()):10.1f} sd {float(f.std()):7.1f} | q scale {float(scale[i]):.4f} | "
            f"log P(stop) {float(log_stop[i]):.2f} (stop logit {float(out['stop_logit'][i]):.1f})"
        )


if __name__ == "__main__":
    main()
