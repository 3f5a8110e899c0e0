"""The exact policy at the states one edge short of the complete DAG (option `last_step_closed_form`, beyond the
paper; linear Gaussian model only).

A DAG over d variables with m - 1 edges, m = d (d - 1) / 2, can only grow into complete DAGs (one or two of them),
and a complete DAG stops by force: its flow is its reward, F(G') = R(G'). The optimal forward policy at such a
state G is then known in closed form from the marginal reward R(G) = P(D | G) P(G) alone:

  P(stop | G) proportional to R(G),   P(G + e | G) proportional to R(G + e) P_B(G | G + e) = R(G + e) / m,

that is, in policy.py's parametrisation, edge logits log R(G + e) - log R(G) (closed_form.edge_gains) and stop
logit log m - logsumexp over the valid e of those gains. The network's structure outputs are replaced by these
there (theta's are kept), for acting, the loss and sampling alike; elsewhere nothing changes.

Why: the complete-DAG mass left at d=5 and the runaway to the complete DAG at d=20 both sit at these states,
whose stop the network fits from the sampler's own rare visits (docs/jspgfn-beyond-d5.md, thirty-ninth and
forty-third sessions). With a parent limit the states that can only grow into forced stops are others; the
option refuses max_parents < d - 1.
"""

import dataclasses

import jax
import jax.numpy as jnp

from jspgfn.gflownet import closed_form
from jspgfn.gflownet import env as envlib


def last_step_logits(model, graph_prior, x, interventions, adjacency):
    """The exact structure logits at the states one edge short of complete: adjacency uint8 [B, d, d], x float
    [N, d], interventions 0/1 [N, d] or None -> (is_last bool [B], stop_logit [B], edge_logits [B, d, d]); the
    logits are meaningful only where is_last (zeros elsewhere, and nothing is computed when no state is last)."""
    b, d = adjacency.shape[0], adjacency.shape[-1]
    complete = d * (d - 1) // 2
    is_last = jnp.sum(adjacency, axis=(-2, -1), dtype=jnp.int32) == complete - 1

    def exact(_):
        gains = closed_form.edge_gains(model, graph_prior, x, interventions, adjacency)  # [B, d, d]
        valid = envlib.edge_mask(envlib.EnvState(adjacency, envlib.closure_of(adjacency)))
        flat = jnp.where(valid, gains, -jnp.inf).reshape(b, -1)
        stop = jnp.log(float(complete)) - jax.nn.logsumexp(flat, axis=-1)
        return jnp.where(is_last, stop, 0.0), jnp.where(is_last[:, None, None] & valid, gains, 0.0)

    def skip(_):
        return jnp.zeros((b,), jnp.float32), jnp.zeros((b, d, d), jnp.float32)

    stop_logit, edge_logits = jax.lax.cond(jnp.any(is_last), exact, skip, None)
    return is_last, stop_logit, edge_logits


@dataclasses.dataclass(frozen=True)
class LastStepNetwork:
    """A network (networks.make_network's, or a ScoreOffsetNetwork) whose stop and edge logits at the states one
    edge short of the complete DAG are last_step_logits' on the data x float [N, d] (and its interventions [N, d]
    or None), without gradient (edge logits of the first edge_rows graphs only, as the base's); its other outputs,
    and every output elsewhere, are the base network's."""

    base: object
    model: object
    graph_prior: object
    x: jax.Array
    interventions: jax.Array | None = None

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, edge_rows)
        x, inter = closed_form.as_float32(self.x, self.interventions)
        is_last, stop_logit, edge_logits = jax.lax.stop_gradient(
            last_step_logits(self.model, self.graph_prior, x, inter, adjacency)
        )
        r = out["edge_logits"].shape[0]  # edge_rows graphs, or all B
        return {
            **out,
            "stop_logit": jnp.where(is_last, stop_logit, out["stop_logit"]),
            "edge_logits": jnp.where(is_last[:r, None, None], edge_logits[:r], out["edge_logits"]),
        }

    def on_data(self, x, interventions=None):
        """The same network with its logits (and its base's offset, if any) on other data of the same shape."""
        base = self.base.on_data(x, interventions) if hasattr(self.base, "on_data") else self.base
        return dataclasses.replace(self, base=base, x=x, interventions=interventions)
