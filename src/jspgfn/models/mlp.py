"""Non-linear Gaussian CPDs: per node an MLP on its masked parents (DiBS / the paper).

mean_j = w2_j . relu(W1_j^T (M_j x) + b1_j) + b2_j, with M_j = diag(G[:, j]).
Per node: W1 [d, H], b1 [H], w2 [H], b2 [] -> P = d H + 2 H + 1 parameters;
for d = 20, H = 5 that is 111 per node and 2,220 in all, the paper's |theta|.
theta has shape [d, P]: row j holds node j's parameters flattened in the order
W1 (input-major), b1, w2, b2. Only the first-layer weights of non-parents are
inactive (fixed at 0); the other parameters are active for every graph.
"""

import dataclasses

import jax
import jax.numpy as jnp

from jspgfn.models.base import LikelihoodModel


@dataclasses.dataclass(frozen=True)
class MLPGaussian(LikelihoodModel):
    hidden: int = 5
    obs_var: float = 0.01
    prior_mean: float = 0.0
    prior_var: float = 1.0
    name: str = "mlp-gauss"

    def params_per_node(self, num_variables):
        return num_variables * self.hidden + 2 * self.hidden + 1

    def theta_shape(self, num_variables):
        return (num_variables, self.params_per_node(num_variables))

    def unpack(self, theta, xp=jnp):
        """theta [..., d, P] -> (W1 [..., d, d_in, H], b1 [..., d, H], w2 [..., d, H], b2 [..., d])."""
        d, h = theta.shape[-2], self.hidden
        w1 = theta[..., : d * h].reshape(theta.shape[:-1] + (d, h))
        b1 = theta[..., d * h : d * h + h]
        w2 = theta[..., d * h + h : d * h + 2 * h]
        b2 = theta[..., d * h + 2 * h]
        return w1, b1, w2, b2

    def parameter_mask(self, graph):
        xp = jnp if isinstance(graph, jax.Array) else __import__("numpy")
        d, h = graph.shape[-1], self.hidden
        parents = xp.swapaxes(graph, -1, -2)  # [d (node j), d (input i)]
        w1_mask = xp.repeat(parents[..., None], h, axis=-1).reshape(graph.shape[:-2] + (d, d * h))
        rest = xp.ones(graph.shape[:-2] + (d, 2 * h + 1), dtype=w1_mask.dtype)
        return xp.concatenate([w1_mask, rest], axis=-1)

    def mean(self, theta, graph, x, xp=jnp):
        w1, b1, w2, b2 = self.unpack(theta, xp)
        masked = xp.einsum("ni,ij,jih->njh", x, graph, w1) + b1  # [N, d, H]
        hidden = xp.maximum(masked, 0.0)
        return xp.einsum("njh,jh->nj", hidden, w2) + b2

    def to_node_params(self, theta):
        return theta

    def from_node_params(self, node_params):
        return node_params

    def layout(self, num_variables):
        d, h = num_variables, self.hidden
        return {
            "kind": "mlp",
            "shape": [d, self.params_per_node(d)],
            "hidden": h,
            "blocks": {
                "W1": [0, d * h, [d, h]],
                "b1": [d * h, d * h + h, [h]],
                "w2": [d * h + h, d * h + 2 * h, [h]],
                "b2": [d * h + 2 * h, d * h + 2 * h + 1, []],
            },
            "meaning": "theta[j] = parameters of node j; W1[i] = weights of input X_i (masked by G[i, j])",
        }

    def kwargs(self):
        return {**super().kwargs(), "hidden": self.hidden}
