"""Why log P_T(G, theta) does not follow log R(G, theta) (Figure 3c): the graph part against the theta part.

For samples (G_k, theta_k) of a JSP-GFN run with log P_T (`jspgfn sample --log-pt`),
    log R(G, theta) - log P_T(G, theta) = [ELBO(G) - log P_T(G)] + [f(G, theta) - ELBO(G)],
where f(G, theta) = log R(G, theta) - log q(theta | G) and ELBO(G) = E_q[f] (estimated with --draws draws of q).
A perfect sampler makes both brackets constant (log Z). The first is the error of the graph part (up to
KL(q || P(theta | G, D)), constant only if q is equally good on every graph); the second, the within-graph
spread of f, is the error of q alone. Printed: their standard deviations across samples beside that of log R,
and the slope and r of log P_T(G) against ELBO(G) (the graph part's own Figure 3c).

With --optimise N, q(theta | G) is then refitted per graph for N of the graphs (a diagonal Gaussian, Adam on
the reparameterised ELBO from the network's q, --steps steps): how small the within-graph spread gets
within the diagonal family, i.e. whether the spread is the family's limit or the amortised q's training.

  .venv/bin/python benchmarks/log_pt_decomposition.py RUN_DIR SAMPLES.npz DATA_DIR [--graphs 40] [--optimise 4]
"""

import argparse
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pandas as pd

from jspgfn.evaluate import ransac_slope
from jspgfn.gflownet import policy
from jspgfn.gflownet.loss import log_rewards
from jspgfn.gflownet.train import load_run
from jspgfn.samples import load_samples


def fit_line(x, y):
    """OLS slope and Pearson r of y on x."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(np.polyfit(x, y, 1)[0]), float(np.corrcoef(x, y)[0, 1])


def within_graph(trainer, params, graphs, x, key, draws):
    """f = log R - log q for `draws` theta ~ q(. | G) per graph: [n, draws]; and log q of given theta."""
    out = trainer.network.apply(params, graphs)
    mask = policy.node_mask_of(trainer.model, graphs)
    theta = policy.sample_theta(key, out, mask, draws)
    log_q = policy.theta_log_prob(out, theta, mask)
    log_r = log_rewards(trainer.model, trainer.graph_prior, theta, graphs, x, x.shape[0])
    return np.asarray(log_r - log_q, np.float64), out, mask


def refit_q(trainer, graph, out, mask, x, key, steps, draws, learning_rate):
    """Per-graph diagonal q fitted by Adam on the reparameterised ELBO, from the network's q.

    graph [1, d, d]; out: the network's outputs for it. Returns (loc, scale) [1, d, P]."""
    m = mask[0]
    variables = {"loc": out["loc"][0], "log_scale": jnp.log(out["scale"][0])}

    def neg_elbo(v, k):
        eps = jax.random.normal(k, (draws,) + m.shape)
        theta = jnp.where(m > 0, v["loc"] + jnp.exp(v["log_scale"]) * eps, 0.0)
        log_r = log_rewards(trainer.model, trainer.graph_prior, theta[None], graph, x, x.shape[0])[0]
        return -(jnp.mean(log_r) + jnp.sum(m * v["log_scale"]))

    optimiser = optax.adam(learning_rate)

    @jax.jit
    def step(v, opt_state, k):
        loss, grads = jax.value_and_grad(neg_elbo)(v, k)
        updates, opt_state = optimiser.update(grads, opt_state, v)
        return optax.apply_updates(v, updates), opt_state, loss

    opt_state = optimiser.init(variables)
    for k in jax.random.split(key, steps):
        variables, opt_state, _ = step(variables, opt_state, k)
    return variables["loc"][None], jnp.exp(variables["log_scale"])[None]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir")
    parser.add_argument("samples", help="samples .npz written by `jspgfn sample --log-pt`")
    parser.add_argument("data", help="dataset folder with train.csv")
    parser.add_argument("--graphs", type=int, default=40, help="samples decomposed (the first ones)")
    parser.add_argument("--draws", type=int, default=64, help="theta draws of q per graph")
    parser.add_argument("--optimise", type=int, default=0, help="graphs whose q is refitted per graph")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--learning-rate", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    trainer, state, info, _ = load_run(args.run_dir)
    samples = load_samples(args.samples)
    if "log_prob_terminating" not in samples.extras:
        raise SystemExit(f"{args.samples}: no log_prob_terminating (sample with --log-pt)")
    x = jnp.asarray(pd.read_csv(f"{args.data}/train.csv").to_numpy(np.float32))
    k = min(args.graphs, samples.num_samples)
    graphs = jnp.asarray(samples.graphs[:k])
    log_pt = np.asarray(samples.extras["log_prob_terminating"][:k], np.float64)
    theta_nodes = jax.vmap(trainer.model.to_node_params)(jnp.asarray(samples.theta[:k], jnp.float32))

    key = jax.random.PRNGKey(args.seed)
    f_draws, out, mask = [], [], []
    for i in range(k):  # one graph at a time: draws x rows x 2,220 weights stays small
        f, o, m = within_graph(trainer, state.params, graphs[i : i + 1], x, jax.random.fold_in(key, i), args.draws)
        f_draws.append(f[0])
        out.append(o)
        mask.append(m)
    f_draws = np.stack(f_draws)  # [k, draws]
    out_all = jax.tree_util.tree_map(lambda *a: jnp.concatenate(a), *out)
    mask_all = jnp.concatenate(mask)
    log_q_sample = np.asarray(policy.theta_log_prob(out_all, theta_nodes[:, None], mask_all)[:, 0], np.float64)
    log_r_sample = np.asarray(
        log_rewards(trainer.model, trainer.graph_prior, theta_nodes[:, None], graphs, x, x.shape[0])[:, 0], np.float64
    )
    elbo = f_draws.mean(axis=1)
    log_pt_graph = log_pt - log_q_sample
    graph_error = elbo - log_pt_graph
    theta_error = (log_r_sample - log_q_sample) - elbo
    edges = np.asarray(graphs.sum(axis=(1, 2)))

    print(f"run {args.run_dir} (iteration {int(info['iteration'])}), {k} samples, {args.draws} draws of q per graph")
    print(f"edges per sample: mean {edges.mean():.1f}, min {edges.min()}, max {edges.max()}")
    slope, _ = ransac_slope(log_r_sample, log_pt)
    print(
        f"Figure 3c on these samples: RANSAC slope {slope:.3f}, Pearson r {np.corrcoef(log_r_sample, log_pt)[0, 1]:.2f}"
    )
    print(f"sd across samples: log R {log_r_sample.std():10.1f} | log P_T {log_pt.std():8.1f}")
    print(f"  log R - log P_T = graph part + theta part; sd of the sum {np.std(log_r_sample - log_pt):10.1f}")
    print(f"  graph part ELBO(G) - log P_T(G):                 sd {graph_error.std():10.1f}")
    print(f"  theta part f(G, theta) - ELBO(G) at the samples:  sd {theta_error.std():10.1f}")
    spread = f_draws.std(axis=1)
    print(
        f"  within-graph sd of f over q's draws: median {np.median(spread):.1f}, "
        f"range {spread.min():.1f}-{spread.max():.1f}"
    )
    s, r = fit_line(elbo, log_pt_graph)
    print(f"graph part alone: log P_T(G) against ELBO(G): OLS slope {s:.3f}, r {r:.2f}; sd of ELBO(G) {elbo.std():.1f}")

    if args.optimise:
        print(
            f"\nq refitted per graph ({args.steps} Adam steps, lr {args.learning_rate}, {args.draws} draws per step):"
        )
        for i in range(min(args.optimise, k)):
            g = graphs[i : i + 1]
            o = out[i]  # the network's outputs for graph i
            loc, scale = refit_q(
                trainer,
                g,
                o,
                mask_all[i : i + 1],
                x,
                jax.random.fold_in(key, 10_000 + i),
                args.steps,
                args.draws,
                args.learning_rate,
            )
            refit = {"loc": loc, "scale": scale}
            theta = policy.sample_theta(jax.random.fold_in(key, 20_000 + i), refit, mask_all[i : i + 1], args.draws)
            f_new = np.asarray(
                log_rewards(trainer.model, trainer.graph_prior, theta, g, x, x.shape[0])
                - policy.theta_log_prob(refit, theta, mask_all[i : i + 1]),
                np.float64,
            )[0]
            print(
                f"  sample {i:3d} ({int(edges[i]):3d} edges): ELBO {f_draws[i].mean():10.1f} -> {f_new.mean():10.1f}, "
                f"within-graph sd of f {f_draws[i].std():8.1f} -> {f_new.std():6.1f}"
            )


if __name__ == "__main__":
    main()
