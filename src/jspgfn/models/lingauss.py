"""Linear Gaussian CPDs with a fixed noise variance (the paper's small-graph model).

X_j = sum_i G_ij theta_ij X_i + eps_j,  eps_j ~ N(0, obs_var),  theta_ij ~ N(0, 1) on edges.
theta has shape [d, d]: theta[i, j] is the weight of the edge i -> j (0 off the graph).
"""

import dataclasses

import jax.numpy as jnp

from jspgfn.models.base import LikelihoodModel


@dataclasses.dataclass(frozen=True)
class LinearGaussian(LikelihoodModel):
    obs_var: float = 0.01
    prior_mean: float = 0.0
    prior_var: float = 1.0
    name: str = "lingauss"

    def theta_shape(self, num_variables):
        return (num_variables, num_variables)

    def parameter_mask(self, graph):
        return graph

    def mean(self, theta, graph, x, xp=jnp):
        return x @ (graph * theta)

    def to_node_params(self, theta):
        return jnp.swapaxes(theta, -1, -2)  # row j = incoming weights of X_j

    def from_node_params(self, node_params):
        return jnp.swapaxes(node_params, -1, -2)

    def layout(self, num_variables):
        return {
            "kind": "linear",
            "shape": [num_variables, num_variables],
            "meaning": "theta[i, j] = weight of edge i -> j",
        }
