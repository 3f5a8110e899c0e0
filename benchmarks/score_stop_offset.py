"""JSP-GFN with a theta-free score of G added to its stop logit, without gradient (beyond the paper): the form
of marginal_reward_oracle.py --stop-offset that needs no exact score, measured against the exact posterior.

The oracle measured the exact score log P(D | G) - log P(D | empty) in the stop logit better than the plain
oracle on d=10 ER2 1 over 30,000 iterations (docs/jspgfn-beyond-d5.md, twenty-first session): the network
then learns about -log F(G), smooth between neighbours, rather than -log P(stop | G), which jumps by hundreds
of nats per needed edge. JSP-GFN has no exact score, but its own q(theta | G) gives one at no extra network
call: with mu_G the mean of q(theta | G),

  score(G) = log R(G, mu_G) - log q(mu_G | G)

equals log P(D, G) exactly when q(theta | G) is the posterior P(theta | D, G) (P(D, theta | G) / P(theta | D, G)
= P(D | G) at any theta), a Laplace-like estimate otherwise (with the diagonal family, below the exact score
by half the log ratio of the product of the posterior precision's diagonal to its determinant). The stop
logit becomes the network's plus weight * (score(G) - score(empty)), for acting, sampling and the loss alike;
at initialisation (mu = 0) every graph scores about alike. The loss, the target network and everything else
are the library's (the score of G' under the target network comes from the target's own q).

Linear Gaussian model, one dataset per process (the offset reads the trainer's data; seeds may be several):

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 gpu_data/d10er2/1=gpu_data/d10er2/exact1.npz \
      --seeds 0 --eval-at 6000 15000 30000 [--set stop_target_tau=0.1]

After each evaluation it also prints how the offset's score tracks the exact one, log P(D | G) + log P(G), on the
sampler's graphs and on the exact posterior's: the mean of each over the distinct graphs, and the error's mean and
standard deviation (the offset steers the stop only as well as this score ranks the graphs).

Every argument but --weight and --d5 is accuracy_seeds.py's (whose table this prints). --d5 trains on
flow_diagnosis.py's d=5 datasets instead and prints its exact diagnosis (edge RMSE, complete-DAG mass of P_T):

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 --d5 --seeds 0 1 2 3 4 --eval-at 6000
"""

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_seeds  # noqa: E402
import flow_diagnosis  # noqa: E402
from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.gflownet import policy  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.rewards import log_rewards  # noqa: E402
from jspgfn.models import LinearGaussian  # noqa: E402


def theta_free_score(out, graphs, model, graph_prior, x):
    """log R(G, mu_G) - log q(mu_G | G) with mu_G the mean of q(theta | G): out = the network's outputs on
    graphs uint8 [B, d, d] (loc [B, d, P], scale or tril), x float [N, d] -> float [B]."""
    node_mask = policy.node_mask_of(model, graphs)  # [B, d, P]
    mean = jnp.where(node_mask > 0, out["loc"], 0.0)[:, None]  # [B, 1, d, P]
    log_r = log_rewards(model, graph_prior, mean, graphs, x, x.shape[0])[:, 0]
    return log_r - policy.theta_log_prob(out, mean, node_mask)[:, 0]


def empty_score(model, graph_prior, data):
    """log R(empty graph) for data float [N, d]: the empty graph's theta_free_score (it has no parameters)."""
    d = data.shape[1]
    zeros = jnp.zeros((1, 1, d, model.theta_shape(d)[-1]))
    empty = jnp.zeros((1, d, d), jnp.uint8)
    return float(log_rewards(model, graph_prior, zeros, empty, jnp.asarray(data), data.shape[0])[0, 0])


@dataclasses.dataclass(frozen=True)
class ScoreStopOffset:
    """A network whose stop logit is shifted by weight * (theta_free_score(G) - the empty graph's), no gradient.

    The empty graph has no parameters under the linear Gaussian model, so its score is log R(empty), one
    constant of the data."""

    base: object  # the library's network (networks.make_network)
    model: object
    graph_prior: object
    data: np.ndarray  # float32 [N, d]
    weight: float
    empty_score: float  # empty_score(model, graph_prior, data), computed once

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, edge_rows)
        x = jnp.asarray(self.data)
        score = jax.lax.stop_gradient(theta_free_score(out, adjacency, self.model, self.graph_prior, x))
        stop_logit = out["stop_logit"] + self.weight * (score - self.empty_score)
        return {**out, "stop_logit": stop_logit, "theta_free_score": score}


class ScoreOffsetTrainer(Trainer):
    """The library's Trainer with ScoreStopOffset as its network (acting, loss and sampling)."""

    weight = 1.0  # --weight
    one_dataset = True  # the offset reads the trainer's data: accuracy_seeds.py refuses several datasets

    @functools.cached_property
    def network(self):
        if type(self.model) is not LinearGaussian:
            raise SystemExit("score_stop_offset.py: the linear Gaussian model only (the empty graph's score)")
        base_score = empty_score(self.model, self.graph_prior, self.data)
        return ScoreStopOffset(super().network, self.model, self.graph_prior, self.data, self.weight, base_score)

    def report(self, params, graphs, exact):
        """Print the theta-free score against the exact one on the distinct graphs among `graphs` uint8 [K, d, d]
        (the sampler's) and among the exact posterior's samples (exact: accuracy_exact_edges.load_exact)."""
        apply = jax.jit(self.network.apply)
        for name, sample in (("sampler", graphs), ("exact posterior", exact.graphs)):
            distinct = np.unique(np.asarray(sample, np.uint8), axis=0)
            score = np.asarray(apply(params, jnp.asarray(distinct))["theta_free_score"], np.float64)
            true = log_marginal_likelihood_graphs(self.model, self.data, distinct, graph_prior=self.graph_prior)
            error = score - true
            print(
                f"#   {name}'s {len(distinct)} distinct graphs ({distinct.sum(axis=(1, 2)).mean():.1f} edges): "
                f"theta-free score {score.mean():.1f}, exact {true.mean():.1f}; error {error.mean():.1f} "
                f"+- {error.std():.1f}",
                flush=True,
            )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--weight", type=float, default=1.0, help="the offset's weight (0: the library's JSP-GFN)")
    parser.add_argument("--d5", action="store_true", help="flow_diagnosis.py's d=5 datasets, diagnosed exactly")
    args, rest = parser.parse_known_args(argv)
    ScoreOffsetTrainer.weight = args.weight
    note = f"; score stop offset, weight={args.weight}"
    if args.d5:
        flow_diagnosis.main(ScoreOffsetTrainer, rest, note=note)
        return
    print(f"#{note[1:]}", flush=True)
    accuracy_seeds.main(rest, trainer_class=ScoreOffsetTrainer)


if __name__ == "__main__":
    main()
