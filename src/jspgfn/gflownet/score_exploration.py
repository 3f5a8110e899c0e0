"""Exploration by the model's closed-form score gains (option `explore_score_temperature`, beyond the paper).

The paper's exploratory action is uniform over the valid actions. With a temperature T > 0 it is drawn
instead with probability proportional to

  edge i -> j:  exp((log P(x_j | pa_j + i) - log P(x_j | pa_j) + log P(G + (i -> j)) - log P(G)) / T)
  stop:         1

the local ratio R(G + (i -> j)) / R(G) of the marginal reward (theta integrated out) raised to 1 / T. At a
graph that lacks edges the data need (each worth tens to hundreds of nats), the exploratory step adds one
of them, where a uniform edge almost never does (docs/jspgfn-beyond-d5.md, twenty-ninth session). Only the
behaviour policy changes: the loss and its solution are the paper's (section 3.3: any sampling distribution
of full support; the mixture keeps the policy's support).

Linear Gaussian likelihood only (the gains are closed_form.edge_gains). The score reads the run's whole
training data, not a mini-batch.
"""

import jax
import jax.numpy as jnp

from jspgfn.gflownet import policy


def exploration_logits(gains, mask, temperature):
    """Logits of the exploratory action: gains / T on the valid edges, 0 on the stop, -inf elsewhere.
    gains float [B, d, d], mask bool [B, d*d + 1] (valid edges flattened, then stop) -> [B, d*d + 1].
    A non-finite gain (a float32 Cholesky that failed) makes that edge impossible, never the draw NaN."""
    b = gains.shape[0]
    edges = gains.reshape(b, -1) / temperature
    logits = jnp.concatenate([jnp.where(jnp.isfinite(edges), edges, -jnp.inf), jnp.zeros((b, 1))], axis=1)
    return jnp.where(mask, logits, -jnp.inf)


def mix_uniform(logits, mask, share):
    """Log-probabilities of share * softmax(logits) + (1 - share) * uniform over the valid actions: logits
    float [B, A] (-inf off the mask), mask bool [B, A], share float [] in [0, 1] (may be traced) -> float [B, A]
    (-inf off the mask).
    The uniform part keeps visiting the graphs the score leads away from (docs/jspgfn-beyond-d5.md, thirtieth
    session: at d=5 the score-led exploration alone leaves dense graphs untrained)."""
    led = jax.nn.log_softmax(logits, axis=-1) + jnp.log(share)
    uniform = jax.nn.log_softmax(policy.uniform_logits(mask), axis=-1) + jnp.log1p(-share)
    return jnp.where(mask, jnp.logaddexp(led, uniform), -jnp.inf)
