"""Categorical CPDs: per node an MLP with a softmax output on its masked, one-hot parents (the paper's
flow-cytometry model, appendix "Learning biological structures from real data").

X_j | Pa(X_j) ~ Categorical(softmax(MLP_j(M_j onehot(x)))), with M_j masking the whole one-hot block
of every non-parent of X_j. The data are integer codes 0..K-1 (stored as floats, like every dataset).
Per node: W1 [d K, H], b1 [H], W2 [H, K], b2 [K] -> P = d K H + H + H K + K parameters;
for d = 11, K = 3, H = 16 that is 595 per node and 6,545 in all, the paper's |theta|.
theta has shape [d, P]: row j holds node j's parameters flattened in the order W1 (input-major:
row i K + k is the weight of "X_i = k"), b1, W2 (hidden-major), b2. Only the first-layer weights of
non-parents are inactive (fixed at 0); the other parameters are active for every graph, with
independent N(prior_mean, prior_var) priors (as in MLPGaussian).

The model has no conditional mean and no noise variance: `mean` and `obs_var` raise NotGaussianError.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.models.base import LikelihoodModel


class NotGaussianError(JspgfnError, AttributeError):
    """A Gaussian-only quantity (mean, obs_var) was asked of a categorical model.

    Also an AttributeError, so `getattr(model, "obs_var", None)` and `hasattr` treat it as absent.
    """


@dataclasses.dataclass(frozen=True)
class MLPCategorical(LikelihoodModel):
    num_levels: int = 3
    hidden: int = 16
    prior_mean: float = 0.0
    prior_var: float = 1.0
    name: str = "mlp-categorical"

    # -- sizes and layout
    def params_per_node(self, num_variables):
        k, h = self.num_levels, self.hidden
        return num_variables * k * h + h + h * k + k

    def theta_shape(self, num_variables):
        return (num_variables, self.params_per_node(num_variables))

    def _offsets(self, num_variables):
        """Start/end of each block inside a node's row: {name: (start, end)}."""
        k, h = self.num_levels, self.hidden
        w1 = num_variables * k * h
        return {
            "W1": (0, w1),
            "b1": (w1, w1 + h),
            "W2": (w1 + h, w1 + h + h * k),
            "b2": (w1 + h + h * k, w1 + h + h * k + k),
        }

    def unpack(self, theta):
        """theta [..., d, P] -> (W1 [..., d, d_in, K, H], b1 [..., d, H], W2 [..., d, H, K], b2 [..., d, K])."""
        d, k, h = theta.shape[-2], self.num_levels, self.hidden
        lead = theta.shape[:-1]
        o = self._offsets(d)
        w1 = theta[..., o["W1"][0] : o["W1"][1]].reshape(lead + (d, k, h))
        b1 = theta[..., o["b1"][0] : o["b1"][1]]
        w2 = theta[..., o["W2"][0] : o["W2"][1]].reshape(lead + (h, k))
        b2 = theta[..., o["b2"][0] : o["b2"][1]]
        return w1, b1, w2, b2

    def parameter_mask(self, graph):
        """1 on active parameters: graph [..., d, d] -> [..., d, P] (numpy in, numpy out; jax in, jax out)."""
        xp = jnp if isinstance(graph, jax.Array) else np
        d, k, h = graph.shape[-1], self.num_levels, self.hidden
        parents = xp.swapaxes(graph, -1, -2)  # [..., d (node j), d (input i)]
        w1_mask = xp.repeat(parents[..., None], k * h, axis=-1).reshape(graph.shape[:-2] + (d, d * k * h))
        rest = xp.ones(graph.shape[:-2] + (d, h + h * k + k), dtype=w1_mask.dtype)
        return xp.concatenate([w1_mask, rest], axis=-1)

    def to_node_params(self, theta):
        return theta

    def from_node_params(self, node_params):
        return node_params

    def layout(self, num_variables):
        d, k, h = num_variables, self.num_levels, self.hidden
        o = self._offsets(d)
        return {
            "kind": "mlp-categorical",
            "shape": [d, self.params_per_node(d)],
            "hidden": h,
            "num_levels": k,
            "blocks": {
                "W1": [*o["W1"], [d * k, h]],
                "b1": [*o["b1"], [h]],
                "W2": [*o["W2"], [h, k]],
                "b2": [*o["b2"], [k]],
            },
            "meaning": (
                "theta[j] = parameters of node j; W1[i * K + k] = weights of the input 'X_i = k' "
                "(masked by G[i, j]); softmax(W2^T relu(W1^T onehot(x) + b1) + b2) = P(X_j | parents)"
            ),
        }

    def kwargs(self):
        return {
            "num_levels": self.num_levels,
            "hidden": self.hidden,
            "prior_mean": self.prior_mean,
            "prior_var": self.prior_var,
        }

    # -- likelihood
    def one_hot(self, x):
        """Integer codes x [N, d] (floats) -> float32 [N, d, K]; a code outside 0..K-1 gives a zero row."""
        return jax.nn.one_hot(jnp.asarray(x).astype(jnp.int32), self.num_levels, dtype=jnp.float32)

    def logits(self, theta, graph, x):
        """Unnormalised log-probabilities [N, d, K] of every X_j given its parents in the rows of x."""
        w1, b1, w2, b2 = self.unpack(theta)
        onehot = self.one_hot(x)  # [N, d_in, K]
        pre = jnp.einsum("nik,ij,jikh->njh", onehot, graph, w1) + b1  # [N, d, H]
        hidden = jnp.maximum(pre, 0.0)
        return jnp.einsum("njh,jhk->njk", hidden, w2) + b2

    def log_probs(self, theta, graph, x):
        """log P(X_j = k | parents of j in row n): [N, d, K]; exp sums to 1 over k."""
        return jax.nn.log_softmax(self.logits(theta, graph, x), axis=-1)

    def log_likelihood_rows(self, theta, graph, x, interventions=None):
        """log P(x_n | G, theta) for each row: [N]. Intervened entries contribute nothing."""
        logp = jnp.sum(self.one_hot(x) * self.log_probs(theta, graph, x), axis=-1)  # [N, d]
        if interventions is not None:
            logp = jnp.where(jnp.asarray(interventions).astype(bool), 0.0, logp)
        return jnp.sum(logp, axis=-1)

    def check_codes(self, x, source="data"):
        """Raise JspgfnError unless every entry of x [N, d] is an integer code in 0..K-1 (numpy check).

        A code outside the range has a zero one-hot vector and would silently add 0 to the likelihood.
        """
        values = np.asarray(x, dtype=np.float64)
        bad = ~np.isin(values, np.arange(self.num_levels))
        if np.any(bad):
            r, c = (int(i) for i in np.argwhere(bad)[0])
            raise JspgfnError(
                f"{source}: row {r + 1}, column {c + 1}: value {float(values[r, c])!r} is not a category code "
                f"0..{self.num_levels - 1} (model '{self.name}' with num_levels={self.num_levels})"
            )

    # -- Gaussian-only parts of the interface
    def mean(self, theta, graph, x, xp=jnp):
        raise NotGaussianError(
            f"model '{self.name}' has categorical CPDs: it has no conditional mean; use log_probs(theta, graph, x)"
        )

    @property
    def obs_var(self):
        raise NotGaussianError(f"model '{self.name}' has categorical CPDs: it has no observation noise variance")
