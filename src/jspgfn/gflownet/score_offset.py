"""The stop logit shifted by JSP-GFN's own theta-free score of G (option `stop_score_offset`, beyond the paper).

With mu_G the mean of q(theta | G),

  score(G) = log R(G, mu_G) - log q(mu_G | G)

equals log P(D | G) + log P(G) exactly when q(theta | G) is the posterior P(theta | D, G) (P(D, theta | G) /
P(theta | D, G) does not depend on theta); with the diagonal family at its mean-field optimum it lies below by
half the log ratio of the posterior precision's diagonal product to its determinant. The network's stop logit
becomes logit + weight * (score(G) - score(empty)), without gradient, for acting, the loss and sampling alike:
the network then learns a correction smooth between neighbouring graphs instead of -log P(stop | G), which jumps
by hundreds of nats per needed edge (docs/jspgfn-beyond-d5.md, twenty-first and twenty-second sessions). The
score is only as good as q's mean: use it with `theta_elbo` (a direct fit of q), without which q is far off
early in training and every trajectory runs to the complete DAG.

With `closed_form` (option `stop_score_closed_form`) the offset is instead the closed-form score,
log P(D | G) + log P(G) less the empty graph's (closed_form.graph_gains): no bias from q's family or its training
(at d=20 the theta-free score fell below the exact one by 35 nats more on the exact posterior's graphs than on
the sampler's; docs/jspgfn-beyond-d5.md, thirty-second session).

Linear Gaussian likelihood only: there the empty graph has no parameters, so its score, log R(empty), is exact
and one constant of the data. The score reads the run's whole training data (not a mini-batch), so a network
with the offset is bound to its data (`on_data` rebinds it, for the runs of a group).
"""

import dataclasses

import jax
import jax.numpy as jnp

from jspgfn.gflownet import closed_form, policy
from jspgfn.gflownet.rewards import log_rewards


def theta_free_score(out, graphs, model, graph_prior, x, interventions=None):
    """log R(G, mu_G) - log q(mu_G | G) with mu_G the mean of q(theta | G): out = the network's outputs on
    graphs uint8 [B, d, d] (loc [B, d, P], scale or tril), x float [N, d], interventions 0/1 [N, d] or
    None -> float [B]."""
    node_mask = policy.node_mask_of(model, graphs)  # [B, d, P]
    mean = jnp.where(node_mask > 0, out["loc"], 0.0)[:, None]  # [B, 1, d, P]
    log_r = log_rewards(model, graph_prior, mean, graphs, x, x.shape[0], interventions)[:, 0]
    return log_r - policy.theta_log_prob(out, mean, node_mask)[:, 0]


def empty_score(model, graph_prior, x, interventions=None):
    """log R(empty graph) for x float [N, d]: the empty graph's theta_free_score (it has no parameters) -> []."""
    d = x.shape[1]
    zeros = jnp.zeros((1, 1, d, model.theta_shape(d)[-1]))
    empty = jnp.zeros((1, d, d), jnp.uint8)
    return log_rewards(model, graph_prior, zeros, empty, x, x.shape[0], interventions)[0, 0]


@dataclasses.dataclass(frozen=True)
class ScoreOffsetNetwork:
    """A network (networks.make_network's) whose stop logit is shifted by weight * (score(G) - score(empty)),
    without gradient, on the data x float [N, d] (and its interventions [N, d] or None): score = theta_free_score,
    or with closed_form the closed-form log P(D | G) + log P(G). Its outputs also hold "stop_score" [B], the
    score the offset used, and "theta_free_score" [B] (for reports; unused, it is compiled away)."""

    base: object
    model: object
    graph_prior: object
    weight: float
    x: jax.Array
    interventions: jax.Array | None = None
    closed_form: bool = False

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, edge_rows)
        x, inter = closed_form.as_float32(self.x, self.interventions)
        free = theta_free_score(out, adjacency, self.model, self.graph_prior, x, inter)
        empty = empty_score(self.model, self.graph_prior, x, inter)
        if self.closed_form:
            gain = closed_form.graph_gains(self.model, self.graph_prior, x, inter, adjacency)
        else:
            gain = free - empty
        offset = jax.lax.stop_gradient(gain)
        out = {**out, "stop_logit": out["stop_logit"] + self.weight * offset, "theta_free_score": free}
        return {**out, "stop_score": gain + empty}

    def on_data(self, x, interventions=None):
        """The same network with its score on other data of the same shape (which may be traced)."""
        return dataclasses.replace(self, x=x, interventions=interventions)
