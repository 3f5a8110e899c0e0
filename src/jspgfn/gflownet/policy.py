"""Forward-policy distributions from the network outputs (pure functions).

P(G' | G)       = (1 - P(stop | G)) * softmax over valid edges of the edge logits
P(theta | G)    = P(stop | G) * prod_i N(theta_i | loc_i, Sigma_i) over ACTIVE params
Stopping is forced (P(stop | G) = 1) when no edge can be added.
theta is handled in the model's node layout [..., d, P] (model.to_node_params);
`node_mask` [..., d, P] marks the active parameters (model.parameter_mask).
"""

import jax
import jax.numpy as jnp

from jspgfn.gflownet import triangular

_LOG_2PI = 1.8378770664093453
_NEG = -1e9


def log_policy_edges(stop_logit, edge_logits, edge_mask):
    """Log-probabilities of the structure actions.

    Args: stop_logit [B], edge_logits [B, d, d], edge_mask bool [B, d, d].
    Returns: (log_stop [B], log_edges [B, d, d]) with log_edges = log P(G + (i->j) | G)
      (very negative on invalid edges) and log_stop = log P(stop | G) (0 when forced).
    """
    b = edge_logits.shape[0]
    forced = ~jnp.any(edge_mask, axis=(-2, -1))
    log_stop = log_stop_prob(stop_logit, edge_mask)
    log_continue = jnp.where(forced, _NEG, jax.nn.log_sigmoid(-stop_logit))
    flat = jnp.where(edge_mask, edge_logits, _NEG).reshape(b, -1)
    log_edges = jax.nn.log_softmax(flat, axis=-1).reshape(edge_logits.shape)
    log_edges = jnp.where(edge_mask, log_edges + log_continue[:, None, None], _NEG)
    return log_stop, log_edges


def log_stop_prob(stop_logit, edge_mask):
    """log P(stop | G): stop_logit [B], edge_mask bool [B, d, d] -> [B] (0 when stopping is forced)."""
    forced = ~jnp.any(edge_mask, axis=(-2, -1))
    return jnp.where(forced, 0.0, jax.nn.log_sigmoid(stop_logit))


def action_log_probs(stop_logit, edge_logits, edge_mask):
    """[B, d*d + 1] log-probabilities of every action (edges flattened, then stop)."""
    log_stop, log_edges = log_policy_edges(stop_logit, edge_logits, edge_mask)
    b = log_stop.shape[0]
    return jnp.concatenate([log_edges.reshape(b, -1), log_stop[:, None]], axis=1)


def uniform_logits(mask):
    """Logits of the paper's exploration, uniform over the valid actions.

    mask bool [B, A] -> float [B, A]: 0 where valid, -inf elsewhere (unnormalised).
    """
    return jnp.where(mask, 0.0, -jnp.inf)


def exploration_log_probs(log_probs, mask):
    """The exploratory actions of `explore_policy_stop` (beyond the paper): the stop with the policy's own
    probability, otherwise an edge drawn uniformly among the valid ones.

    Args: log_probs float [B, A] (action_log_probs: edges flattened, then stop),
      mask bool [B, A] (valid edges, then stop).
    Returns: float [B, A] log-probabilities (-inf on invalid actions; where the stop is forced, only it).
    """
    log_stop = log_probs[:, -1]
    valid_edges = mask[:, :-1]
    log_continue = jax.nn.logsumexp(jnp.where(valid_edges, log_probs[:, :-1], -jnp.inf), axis=-1)
    num_edges = jnp.maximum(jnp.sum(valid_edges, axis=-1), 1).astype(log_probs.dtype)
    log_edge = log_continue - jnp.log(num_edges)
    edges = jnp.where(valid_edges, log_edge[:, None], -jnp.inf)
    return jnp.concatenate([edges, log_stop[:, None]], axis=1)


def standard_normal(key, shape, pool_factor=0, groups=1):
    """Standard normal noise [B, S, ...].

    pool_factor = 0: i.i.d. draws. pool_factor = k > 0: the batch is split into `groups`
    equal blocks (2 in the loss: the graphs G, then the graphs G'); each block shares a
    pool of k*S i.i.d. draws, element b takes S consecutive pool entries from a random
    offset and gives every coordinate its own random sign. The S draws of an element
    are i.i.d. N(0, I), and elements of different blocks are independent, so each
    transition's (theta_1..S, theta'_1..S) has exactly the i.i.d. law and the loss and
    its gradient stay unbiased; only different transitions are dependent (uncorrelated).
    It needs about 32x fewer random bits, which otherwise dominate an iteration on CPU
    for large B * S * d * P. (A variant without the gather, sub-blocks broadcasting one
    pool, measured slower: XLA then recomputes the noise inside each consumer.)
    """
    if pool_factor <= 0:
        return jax.random.normal(key, shape)
    b, s, rest = shape[0], shape[1], shape[2:]
    k_pool, k_off, k_sign = jax.random.split(key, 3)
    pool_size = pool_factor * s
    pool = jax.random.normal(k_pool, (groups * pool_size,) + rest)
    block = (jnp.arange(b) * groups // b)[:, None]  # [B, 1]
    offsets = jax.random.randint(k_off, (b, 1), 0, pool_size)
    eps = pool[block * pool_size + (offsets + jnp.arange(s)) % pool_size]  # [B, S, ...]
    last = rest[-1]
    num_words = -(-last // 32)
    words = jax.random.bits(k_sign, (b, s) + rest[:-1] + (num_words,), jnp.uint32)
    bits = (words[..., None] >> jnp.arange(32, dtype=jnp.uint32)) & 1  # [..., W, 32]
    bits = bits.reshape(words.shape[:-1] + (num_words * 32,))[..., :last]
    return jnp.where(bits > 0, eps, -eps)


def active_factor(tril, node_mask):
    """The full family's Cholesky factor restricted to the active parameters: tril [B, d, P, P] with the rows
    and columns of inactive parameters replaced by the identity's, node_mask [B, d, P] (0/1).

    q(theta_active | G) = N(loc_active, L_aa L_aa^T), with L_aa the factor's active block: sampled as
    loc + L_aa eps and scored with triangular solves against the same factor, never re-factorising L L^T
    (whose Cholesky decomposition fails in float32 on an ill-conditioned factor).
    """
    m = node_mask.astype(tril.dtype)
    eye = jnp.eye(tril.shape[-1], dtype=tril.dtype)
    return tril * m[..., :, None] * m[..., None, :] + eye * (1.0 - m)[..., None, :]


def sample_theta(key, out, node_mask, num_samples, pool_factor=0, groups=1, share_halves=False):
    """theta ~ P(theta | G, stop), exactly 0 on inactive parameters.

    Args: out: network outputs (loc/scale [B, d, P], optional tril [B, d, P, P]);
      node_mask [B, d, P]; num_samples S; pool_factor, groups: see `standard_normal`.
      share_halves: the second half of the batch takes the first half's standard normal noise eps
        (theta = loc + scale * eps): in the loss, theta'_s of G' shares eps_s with theta_s of G.
    Returns: theta [B, S, d, P] (node layout).
    """
    loc = out["loc"]
    if share_halves:
        half = standard_normal(key, (loc.shape[0] // 2, num_samples) + loc.shape[1:], pool_factor, 1)
        eps = jnp.concatenate([half, half])
    else:
        eps = standard_normal(key, (loc.shape[0], num_samples) + loc.shape[1:], pool_factor, groups)
    if "tril" in out:
        noise = jnp.einsum("bdpq,bsdq->bsdp", active_factor(out["tril"], node_mask), eps)
    else:
        noise = out["scale"][:, None] * eps
    return jnp.where(node_mask[:, None] > 0, loc[:, None] + noise, 0.0)


def theta_log_prob(out, theta, node_mask):
    """log N(theta_active | loc_active, Sigma_active) summed over nodes.

    Args: out as in `sample_theta`; theta [B, S, d, P]; node_mask [B, d, P] (0/1).
    Returns: [B, S]. Inactive coordinates contribute nothing (density over the
    active parameters only).
    """
    m = node_mask.astype(theta.dtype)
    diff = (theta - out["loc"][:, None]) * m[:, None]
    if "tril" in out:
        factor = active_factor(out["tril"], node_mask)  # the active parameters' Cholesky factor
        z = triangular.solve_lower(factor[:, None], diff[..., None])[..., 0]  # [B, S, d, P]
        log_det = jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)  # [B, d]
        per_node = -0.5 * jnp.sum(z**2, axis=-1) - log_det[:, None] - 0.5 * _LOG_2PI * m.sum(-1)[:, None]
        return per_node.sum(-1)
    # Per-graph terms are computed once, not once per theta sample.
    inv_scale = (m / out["scale"])[:, None]  # [B, 1, d, P], 0 on inactive parameters
    log_norm = jnp.sum(m * (jnp.log(out["scale"]) + 0.5 * _LOG_2PI), axis=(-2, -1))  # [B]
    return -0.5 * jnp.sum((diff * inv_scale) ** 2, axis=(-2, -1)) - log_norm[:, None]


def node_mask_of(model, adjacency):
    """Active-parameter mask in node layout: [B, d, d] -> float [B, d, P]."""
    mask = jax.vmap(model.parameter_mask)(adjacency.astype(jnp.float32))
    return jax.vmap(model.to_node_params)(mask).astype(jnp.float32)


def to_model_theta(model, theta_nodes):
    """Node layout [..., d, P] -> the model's theta layout (model.from_node_params)."""
    return model.from_node_params(theta_nodes)
