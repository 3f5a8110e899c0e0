"""The JSP-GFN backbone and heads (haiku), on dense d x d adjacency matrices.

Backbone: node embeddings -> one graph-network layer (edge MLP [H, H] on the
existing edges, summed into receivers and senders, node MLP [H, E], global
update) -> self-attention block (multi-head attention + feed-forward [H, E],
LayerNorm) -> graph embedding g [B, E] and node embeddings u, v, w [B, d, E].

Cost: the edge MLP's input [h_i, h_j] does not depend on the graph (the input
node features are learned embeddings of the node index), so its hidden layer is
computed once for the d x d pairs and only the sum over the graph's edges is per
graph (a matmul batched over the nodes, O(B d^2 H)). Linear maps that directly follow
one another (edge output -> node input, w_i -> theta head input) are folded into one,
and per-graph terms (g) are computed once per graph rather than per node: the same
function class as the plain network with about half the FLOPs. The loss asks for the
edge logits of the graphs G only (`edge_rows`), not of G' (docs/speed.md).

Heads (see `PolicyNet.__call__`): stop logit from g, edge logits u_i . v_j,
theta distribution parameters per node from [w_i, g].
"""

import dataclasses
import math

import haiku as hk
import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class NetConfig:
    embed_dim: int = 128
    mlp_hidden: int = 128
    num_heads: int = 4
    key_size: int = 32
    theta_hidden: int = 128
    init_scale: float = 0.1  # initial standard deviation of P(theta | G, stop)
    family: str = "diag"  # diag | full
    ffn: bool = True  # feed-forward sub-block after the attention
    theta_layers: int = 2  # hidden layers of the theta head (1 or 2)
    logit_scale: float = 1.0  # stop and edge logits are multiplied by this (the released code: N)
    stop_bias: float = 0.0  # added to the stop logit (before logit_scale): where P(stop | G) starts, beyond the paper
    # > 0: a learned level per edge count, times this, added to the stop logit (before logit_scale); beyond the paper
    stop_count_scale: float = 0.0
    # the stop logit also sums an MLP [H, 1] of each node's state over the nodes (before logit_scale): a stop that
    # decomposes over the nodes as -log P(stop | G) ~ the gain each node can still make does; beyond the paper
    stop_node_sum: bool = False


def _mlp(sizes, name, activate_final=False):
    return hk.nets.MLP(sizes, activate_final=activate_final, name=name)


def _layer_norm(name):
    return hk.LayerNorm(axis=-1, create_scale=True, create_offset=True, name=name)


class Backbone(hk.Module):
    """adjacency [B, d, d] -> (g [B, E], x [B, d, E] node states, u [R, d, E], u_self [R, d]).

    u and u_self (the edge-logit terms, see the end of __call__) are computed for the first
    R = edge_rows graphs only (all B when edge_rows is None). w_i of the paper (the input of
    the theta head) is a linear map of x_i; it is folded into the theta head's first layer
    (two linear maps compose to one).
    """

    def __init__(self, cfg, name="backbone"):
        super().__init__(name=name)
        self.cfg = cfg

    def __call__(self, adjacency, edge_rows=None):
        cfg = self.cfg
        b, d, _ = adjacency.shape
        e, h = cfg.embed_dim, cfg.mlp_hidden
        a = adjacency.astype(jnp.float32)
        nodes = hk.Embed(d, e, name="node_embed")(jnp.arange(d))  # [d, E], the same for every graph

        # Graph network. Edge model on each edge i -> j: MLP [H, H] of [h_i, h_j]. Its input
        # does not depend on the graph, so the hidden layer is computed once for all d x d pairs;
        # its linear output layer, composed with the node model's first layer, is folded into
        # `to_in` / `to_out`, and the sum over the graph's edges becomes a batched matmul per node.
        # The graph network runs node-major ([d, B, H]): that is the natural output layout of
        # those matmuls (batched over the node), so no strided transpose is needed until the
        # attention block (a transpose of whole H-rows).
        send = hk.Linear(h, name="edge_sender")(nodes)  # [d, H]
        recv = hk.Linear(h, with_bias=False, name="edge_receiver")(nodes)  # [d, H]
        hidden = jax.nn.relu(send[:, None, :] + recv[None, :, :])  # [d(i), d(j), H]
        to_in = hk.Linear(h, name="edge_to_receiver")(hidden)  # [d, d, H]
        to_out = hk.Linear(h, name="edge_to_sender")(hidden)  # [d, d, H]
        batched = (((2,), (1,)), ((0,), (0,)))  # contract the last axis of a with axis 1, batch axis 0
        # msg[j, b] = sum_i a[b, i, j] to_in[i, j] (messages in) + sum_i a[b, j, i] to_out[j, i] (out)
        msg = jax.lax.dot_general(jnp.transpose(a, (2, 0, 1)), jnp.swapaxes(to_in, 0, 1), batched)
        msg = msg + jax.lax.dot_general(jnp.transpose(a, (1, 0, 2)), to_out, batched)  # [d, B, H]
        num_edges = a.sum(axis=(1, 2))[:, None] / d  # [B, 1]
        glob = hk.Linear(h, name="global_in")(jnp.concatenate([num_edges, msg.mean(axis=0)], -1))  # [B, H]
        pre = msg + hk.Linear(h, name="node_self")(nodes)[:, None] + glob[None]
        update = hk.Linear(e, name="node_out")(jax.nn.relu(pre))  # node MLP [H, E]
        x = _layer_norm("gn_norm")(nodes[:, None] + update)  # [d, B, E]
        x = jnp.swapaxes(x, 0, 1)  # [B, d, E]

        # Self-attention block over the d nodes.
        attn = hk.MultiHeadAttention(
            cfg.num_heads, cfg.key_size, model_size=e, w_init=hk.initializers.VarianceScaling(1.0), name="attention"
        )
        x = _layer_norm("attn_norm")(x + attn(x, x, x))
        if cfg.ffn:
            x = _layer_norm("ffn_norm")(x + _mlp([h, e], "ffn")(x))

        g = _mlp([h, e], "global_mlp")(jnp.concatenate([glob, x.mean(axis=1)], -1))
        g = _layer_norm("global_norm")(g)
        # Edge logits u_i . v_j with u = U x + b_u, v = V x + b_v equal
        # (A x_i + c) . x_j + a . x_i + const with A = V^T U, c = V^T b_u, a = U^T b_v:
        # one E x E map instead of two, the same function class (the constant cancels).
        x_edges = x if edge_rows is None else x[:edge_rows]
        u = hk.Linear(e, name="u")(x_edges)  # A x_i + c
        u_self = hk.Linear(1, name="u_self")(x_edges)[..., 0]  # a . x_i (the term that depends on i only)
        return g, x, u, u_self


class PolicyNet(hk.Module):
    """All heads. __call__(adjacency [B, d, d], edge_rows=None) -> dict:

    stop_logit [B]        logit of P(stop | G)
    edge_logits [R, d, d] unmasked logits u_i . v_j / sqrt(E) of adding i -> j
                          (v_j = x_j, the bilinear map folded into u; see Backbone), for the
                          first R = edge_rows graphs only (R = B when edge_rows is None; the
                          loss needs them for G, not for G')
    loc, scale [B, d, P]  per-node Gaussian over theta_i (node layout, P params)
    tril [B, d, P, P]     (family "full") the covariance factor diag(scale) (I + N) (law: policy.active_factor)
    """

    def __init__(self, cfg, params_per_node, name="policy"):
        super().__init__(name=name)
        self.cfg = cfg
        self.p = params_per_node

    def __call__(self, adjacency, edge_rows=None):
        cfg, p = self.cfg, self.p
        g, x, u, u_self = Backbone(cfg)(adjacency, edge_rows)
        b, d, e = x.shape
        stop_logit = _mlp([cfg.mlp_hidden, 1], "stop_mlp")(g)[:, 0]
        if cfg.stop_bias != 0.0:  # the same as starting the last bias there (same function class and gradients)
            stop_logit = stop_logit + cfg.stop_bias
        if cfg.stop_count_scale > 0.0:
            # One parameter per edge count k = 0..d(d-1)/2, starting at 0: graphs of one density can move their
            # stop level without moving the others'. Scaled so that Adam's steps (about the learning rate per
            # parameter) move it at a useful rate in nats.
            levels = hk.get_parameter("stop_by_edge_count", [d * (d - 1) // 2 + 1], init=jnp.zeros)
            counts = jnp.sum(adjacency, axis=(1, 2), dtype=jnp.int32)
            stop_logit = stop_logit + cfg.stop_count_scale * levels[counts]
        if cfg.stop_node_sum:
            stop_logit = stop_logit + jnp.sum(_mlp([cfg.mlp_hidden, 1], "stop_node_mlp")(x)[..., 0], axis=-1)
        stop_logit = cfg.logit_scale * stop_logit
        edge_logits = (jnp.einsum("bie,bje->bij", u, x[: u.shape[0]]) + u_self[:, :, None]) / jnp.sqrt(e)
        edge_logits = cfg.logit_scale * edge_logits

        # theta head: MLP [H, H] on [w_i, g] with w_i = W x_i folded into the first layer,
        # whose g part is computed once per graph.
        first = (
            hk.Linear(cfg.theta_hidden, name="theta_w")(x)
            + hk.Linear(cfg.theta_hidden, with_bias=False, name="theta_g")(g)[:, None, :]
        )
        hidden = jax.nn.relu(first)
        if cfg.theta_layers >= 2:
            hidden = jax.nn.relu(hk.Linear(cfg.theta_hidden, name="theta_hidden")(hidden))
        zeros = hk.initializers.Constant(0.0)
        loc = hk.Linear(p, w_init=zeros, name="theta_loc")(hidden)
        # softplus(raw) = init_scale at initialisation.
        scale_bias = math.log(math.expm1(cfg.init_scale))
        raw = hk.Linear(
            p,
            w_init=hk.initializers.VarianceScaling(0.01),
            b_init=hk.initializers.Constant(scale_bias),
            name="theta_scale",
        )(hidden)
        out = {"stop_logit": stop_logit, "edge_logits": edge_logits, "loc": loc, "scale": jax.nn.softplus(raw) + 1e-6}
        if cfg.family == "full":
            n_off = p * (p - 1) // 2
            off = hk.Linear(n_off, w_init=zeros, name="theta_tril")(hidden)  # [B, d, n_off]
            rows, cols = jnp.tril_indices(p, k=-1)
            unit = jnp.eye(p) + jnp.zeros((b, d, p, p)).at[..., rows, cols].set(off)  # unit lower triangular
            # L = diag(scale) (I + N): row i scaled by scale_i, so the factor's condition number is set by the
            # dimensionless N and does not grow as the scales shrink toward a narrow posterior (docs/decisions.md).
            out["tril"] = out["scale"][..., :, None] * unit
        return out


def make_network(cfg, params_per_node):
    """hk.transform'ed policy without rng: init(key, adjacency), apply(params, adjacency, edge_rows=None)
    (edge_rows: a Python int, see PolicyNet)."""
    return hk.without_apply_rng(
        hk.transform(lambda adj, edge_rows=None: PolicyNet(cfg, params_per_node)(adj, edge_rows))
    )
