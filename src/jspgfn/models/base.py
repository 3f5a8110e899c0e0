"""The interface shared by likelihood models, and the (mini-batch) log-reward.

Shapes: d variables, N rows. A model's parameters for one graph are an array
`theta` of shape `model.theta_shape(d)`; `model.parameter_mask(graph)` has the
same shape, 1 on active parameters and 0 on parameters fixed at 0 by the graph
(e.g. weights of absent edges). `model.to_node_params(theta)` views theta as
[d, P] with row j holding the parameters of the CPD of X_j.
"""

import jax.numpy as jnp
import jax.scipy.stats as jstats


class LikelihoodModel:
    """Gaussian CPDs X_j ~ N(mean_j(x_pa; theta_j), obs_var) with N(prior_mean, prior_var) priors."""

    name = "base"
    obs_var = 0.01
    prior_mean = 0.0
    prior_var = 1.0

    # -- to implement
    def theta_shape(self, num_variables):
        raise NotImplementedError

    def parameter_mask(self, graph):
        raise NotImplementedError

    def mean(self, theta, graph, x, xp=jnp):
        """Conditional means [N, d] of every X_j given its parents in the rows of x."""
        raise NotImplementedError

    def to_node_params(self, theta):
        raise NotImplementedError

    def from_node_params(self, node_params):
        raise NotImplementedError

    def layout(self, num_variables):
        """JSON-ready description of theta's layout, stored in sample metadata."""
        raise NotImplementedError

    def kwargs(self):
        return {"obs_var": self.obs_var, "prior_mean": self.prior_mean, "prior_var": self.prior_var}

    # -- shared
    def log_likelihood_rows(self, theta, graph, x, interventions=None):
        """log P(x_n | G, theta) for each row: [N]. Intervened entries contribute nothing."""
        mean = self.mean(theta, graph, x)
        logp = jstats.norm.logpdf(x, mean, jnp.sqrt(self.obs_var))  # [N, d]
        if interventions is not None:
            logp = jnp.where(interventions.astype(bool), 0.0, logp)
        return jnp.sum(logp, axis=-1)

    def log_likelihood(self, theta, graph, x, interventions=None):
        """log P(D | G, theta), a scalar."""
        return jnp.sum(self.log_likelihood_rows(theta, graph, x, interventions))

    def log_prior_theta(self, theta, graph):
        """log P(theta | G): independent N(prior_mean, prior_var) on active parameters.

        Inactive parameters are a point mass at 0 (they contribute no density).
        """
        mask = self.parameter_mask(graph)
        logp = jstats.norm.logpdf(theta, self.prior_mean, jnp.sqrt(self.prior_var))
        return jnp.sum(jnp.where(mask > 0, logp, 0.0))

    def sample_prior(self, rng, graph):
        """numpy draw of theta ~ P(theta | G) (rng: numpy Generator)."""
        import numpy as np

        graph = np.asarray(graph)
        shape = self.theta_shape(graph.shape[0])
        theta = self.prior_mean + np.sqrt(self.prior_var) * rng.standard_normal(shape)
        return theta * np.asarray(self.parameter_mask(graph))


def log_reward(model, graph_prior, theta, graph, x, interventions=None, num_total=None):
    """log R(G, theta) = log P(D | G, theta) + log P(theta | G) + log P(G).

    With `num_total` = N and x a mini-batch of M rows, the likelihood is scaled
    by N / M: the unbiased mini-batch estimate of the paper (section 3.5).
    """
    loglik = model.log_likelihood(theta, graph, x, interventions)
    if num_total is not None:
        loglik = loglik * (num_total / x.shape[0])
    return loglik + model.log_prior_theta(theta, graph) + graph_prior.log_prob(graph)
