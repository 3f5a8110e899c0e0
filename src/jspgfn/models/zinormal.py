"""Zero-inflated Normal CPDs with an MLP mean: the paper's gene-expression model (appendix, real data).

  P(X_j | Pa_G(X_j); theta_j) = alpha_j delta_0(X_j) + (1 - alpha_j) N(X_j; mu_j, sigma_j^2)
  mu_j = w2_j . relu(W1_j^T (M_j x) + b1_j) + b2_j,   M_j = diag(G[:, j])

Unconstrained parametrisation (every entry of theta is real and gets the N(0, 1) prior when active):
  alpha_j = sigmoid(a_j)        (a_j: the logit of the zero-inflation probability)
  sigma_j^2 = exp(s_j)          (s_j: the log-variance of the Normal component)
Per node: W1 [d, H], b1 [H], w2 [H], b2 [], a [], s [] -> P = d H + 2 H + 3 parameters; with d = 61
and H = 16 that is 1,011 per node and 61,671 in all, the paper's |theta|. theta has shape [d, P]: row j
holds node j's parameters flattened in the order W1 (input-major), b1, w2, b2, a, s. Only the
first-layer weights of non-parents are inactive (fixed at 0); the others are active for every graph.

The likelihood of an observation mixes a point mass and a density, so it is taken with respect to the
measure delta_0 + Lebesgue: an exact zero scores log alpha_j, any other value log(1 - alpha_j) +
log N(x; mu_j, sigma_j^2). (log(alpha + (1 - alpha) N(0; mu, sigma^2)) would add a density to a
probability, which is not a likelihood under any one measure.)
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.models.base import LikelihoodModel
from jspgfn.models.mlp import MLPGaussian

LOG_2PI = float(np.log(2 * np.pi))


@dataclasses.dataclass(frozen=True)
class ZINormalMLP(LikelihoodModel):
    hidden: int = 16
    prior_mean: float = 0.0
    prior_var: float = 1.0
    name: str = "mlp-zinormal"

    def params_per_node(self, num_variables):
        return num_variables * self.hidden + 2 * self.hidden + 3

    def theta_shape(self, num_variables):
        return (num_variables, self.params_per_node(num_variables))

    def blocks(self, num_variables):
        """{block name: (start, stop, shape)} of one node's parameter row."""
        d, h = num_variables, self.hidden
        return {
            "W1": (0, d * h, [d, h]),
            "b1": (d * h, d * h + h, [h]),
            "w2": (d * h + h, d * h + 2 * h, [h]),
            "b2": (d * h + 2 * h, d * h + 2 * h + 1, []),
            "alpha_logit": (d * h + 2 * h + 1, d * h + 2 * h + 2, []),
            "log_var": (d * h + 2 * h + 2, d * h + 2 * h + 3, []),
        }

    def unpack(self, theta):
        """theta [..., d, P] -> (W1 [..., d, d_in, H], b1 [..., d, H], w2 [..., d, H], b2, a, s [..., d])."""
        d, h = theta.shape[-2], self.hidden
        w1 = theta[..., : d * h].reshape(theta.shape[:-1] + (d, h))
        b1 = theta[..., d * h : d * h + h]
        w2 = theta[..., d * h + h : d * h + 2 * h]
        b2 = theta[..., d * h + 2 * h]
        a = theta[..., d * h + 2 * h + 1]
        s = theta[..., d * h + 2 * h + 2]
        return w1, b1, w2, b2, a, s

    def _mlp(self):
        """The mean network: MLPGaussian's layout is the first d H + 2 H + 1 entries of a node's row."""
        return MLPGaussian(hidden=self.hidden)

    def parameter_mask(self, graph):
        """[..., d, P]: 1 on active parameters; W1[i] of node j is active iff G[i, j] = 1."""
        xp = jnp if isinstance(graph, jax.Array) else np
        mask = self._mlp().parameter_mask(graph)
        return xp.concatenate([mask, xp.ones(mask.shape[:-1] + (2,), dtype=mask.dtype)], axis=-1)

    def mean(self, theta, graph, x, xp=jnp):
        """Means mu [N, d] of the Normal components given the parents in the rows of x [N, d]."""
        return self._mlp().mean(theta[..., :-2], graph, x, xp)

    def zero_probability(self, theta):
        """alpha [..., d] = sigmoid(a)."""
        return jax.nn.sigmoid(self.unpack(theta)[4])

    def variance(self, theta):
        """sigma^2 [..., d] = exp(s)."""
        return jnp.exp(self.unpack(theta)[5])

    def log_likelihood_rows(self, theta, graph, x, interventions=None):
        """log P(x_n | G, theta) for each row: [N]. Intervened entries contribute nothing.

        An exact zero x_nj contributes log alpha_j (the point mass), any other value
        log(1 - alpha_j) + log N(x_nj; mu_nj, sigma_j^2) (the density of the continuous part).
        """
        _, _, _, _, a, s = self.unpack(theta)
        mu = self.mean(theta, graph, x)  # [N, d]
        log_normal = -0.5 * (LOG_2PI + s + (x - mu) ** 2 * jnp.exp(-s))
        logp = jnp.where(x == 0, jax.nn.log_sigmoid(a), jax.nn.log_sigmoid(-a) + log_normal)
        if interventions is not None:
            logp = jnp.where(interventions.astype(bool), 0.0, logp)
        return jnp.sum(logp, axis=-1)

    def to_node_params(self, theta):
        return theta

    def from_node_params(self, node_params):
        return node_params

    def layout(self, num_variables):
        d, h = num_variables, self.hidden
        return {
            "kind": "mlp-zinormal",
            "shape": [d, self.params_per_node(d)],
            "hidden": h,
            "blocks": {name: [start, stop, shape] for name, (start, stop, shape) in self.blocks(d).items()},
            "meaning": (
                "theta[j] = parameters of node j; W1[i] = weights of input X_i (masked by G[i, j]); "
                "alpha_j = sigmoid(alpha_logit), sigma_j^2 = exp(log_var); X_j = 0 with probability alpha_j, "
                "else X_j ~ N(MLP(M_j X), sigma_j^2)"
            ),
        }

    def kwargs(self):
        return {"hidden": self.hidden, "prior_mean": self.prior_mean, "prior_var": self.prior_var}
