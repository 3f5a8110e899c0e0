"""SubTB loss over undirected paths (G, theta) <- (G, .) -> (G', .) -> (G', theta').

For a transition G -> G' (adding one edge) and S samples theta_s ~ P(. | G),
theta'_t ~ P(. | G'), all S x S pairs give the residual (eq. 8 of the paper)

  delta[s, t] = log R(G', theta'_t) + log P_B(G | G') + log P(theta_s | G)
              - log R(G, theta_s) - log P(G' | G) - log P(theta'_t | G')

with stop-gradient on theta and theta', P(theta | G) = P(stop | G) q(theta | G),
log P_B(G | G') = -log(#edges of G'), and loss = mean Huber(delta / residual_scale).
Optional: the length-2 SubTB condition in differential form as a penalty
penalty/2 * ||grad_theta log q - grad_theta log R||^2 over active parameters,
normalised by the number of active parameters (guarded: >= 1) and by N^2.
Optional (`shared_theta_noise`, beyond the paper): theta_s and theta'_s are drawn with the same standard
normal noise (theta = loc + scale * eps); the stop and edge logits learn from those S pairs (s, s), q from
the S(S - 1) other pairs, independent as in the paper (stop-gradient on the other part in each). The
condition holds for every pair, so the solution is the paper's; in the pairs (s, s) the noise of the
nodes whose parents G -> G' leaves alone cancels where their q is the same under G and G'
(docs/jspgfn-beyond-d5.md, sixth session). Needs S >= 2.
Optional (`theta_elbo` > 0, beyond the paper): a variational term that fits
q(theta | G) directly, theta_elbo * mean over the 2B graphs of
-(E_q[log R(G, theta)] + H(q)) / N, with reparameterised theta (see `elbo_term`; either family).
Optional (`target_params`, training option `stop_target_tau` > 0, beyond the paper): the child's
log P(stop | G') from a slowly updated copy of the network, without gradient (one more forward pass on
the B graphs G'); the loss value and its solution are unchanged. `use_target` (a traced bool) switches it
on; while False the loss is the paper's (options `stop_target_after` and `stop_target_until`: the target only
after, or before, a share of the run).
Optional (`trajectory_balance` > 0, beyond the paper): the same SubTB condition over every
sub-trajectory (G_i, theta_i) <- (G_i, .) -> ... -> (G_j, .) -> (G_j, theta_j) of whole replayed
trajectories, SubTB(lambda) (see `trajectory_loss`).
"""

import dataclasses

import jax
import jax.numpy as jnp
import optax

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy, triangular
from jspgfn.gflownet.rewards import log_rewards
from jspgfn.gflownet.trajectories import states_along
from jspgfn.graphs import valid_actions_jax


@dataclasses.dataclass(frozen=True)
class LossConfig:
    num_theta_samples: int = 1  # S
    huber_delta: float = 1.0
    residual_scale: float = 1.0  # delta is divided by this before the Huber loss
    penalty: float = 0.0  # lambda of the optional length-2 score penalty
    max_parents: int | None = None
    noise_pool: int = 0  # 0: i.i.d. theta noise; k: pooled noise (policy.standard_normal)
    shared_theta_noise: bool = False  # theta_s, theta'_s share noise: the pairs (s, s) train the structure
    theta_elbo: float = 0.0  # weight of the auxiliary ELBO term on q(theta | G) (0: off, the paper's loss)
    trajectory_balance: float = 0.0  # weight of the whole-trajectory SubTB term (0: off, the paper's loss)
    trajectory_lambda: float = 1.0  # SubTB(lambda) weight of a sub-trajectory of n transitions: lambda ** (n - 1)


def uniform_log_pb(num_edges_next):
    """log P_B(G | G') of the uniform backward policy: float [B] #edges of G' -> float [B].

    Every edge of G' is equally likely to be the one removed: log P_B = -log(#edges), with
    #edges guarded to >= 1 (G' = G + one edge always has one; the guard keeps it finite).
    """
    return -jnp.log(jnp.maximum(num_edges_next, 1.0))


def next_graphs(graphs, actions):
    """G' = G + edge(actions): graphs uint8 [B, d, d], actions int [B] (i*d + j)."""
    d = graphs.shape[-1]
    onehot = jax.nn.one_hot(actions, d * d, dtype=graphs.dtype).reshape(graphs.shape)
    return graphs | onehot


def transition_terms(params, apply_fn, graphs, actions, max_parents, target_params=None, use_target=True):
    """The graph policy's terms of the transitions G -> G' = G + edge(actions) (graphs uint8 [B, d, d],
    actions int32 [B]): (both uint8 [2B, d, d] = G then G', the network's outputs on both (edge logits of G
    only), log P(stop) [2B] (the child's from target_params without gradient where given and use_target),
    log P_F(G' | G) [B], log P_B(G | G') [B], the online network's log P(stop | G') [B])."""
    b = graphs.shape[0]
    both = jnp.concatenate([graphs, next_graphs(graphs, actions)], axis=0)  # [2B, d, d]
    out = apply_fn(params, both, b)  # edge logits [B, d, d] of G only: those of G' are not used
    emask = valid_actions_jax(both, envlib.closure_of(both), max_parents)
    log_stop = policy.log_stop_prob(out["stop_logit"], emask)  # [2B]
    _, log_edges = policy.log_policy_edges(out["stop_logit"][:b], out["edge_logits"], emask[:b])
    log_pf = log_edges.reshape(b, -1)[jnp.arange(b), actions]  # [B]
    log_pb = uniform_log_pb(jnp.sum(both[b:], axis=(-2, -1)).astype(jnp.float32))  # [B]
    online_child = log_stop[b:]
    if target_params is not None:
        out_next = apply_fn(target_params, both[b:], 0)
        log_stop_next = jax.lax.stop_gradient(policy.log_stop_prob(out_next["stop_logit"], emask[b:]))
        log_stop = jnp.concatenate([log_stop[:b], jnp.where(use_target, log_stop_next, online_child)])
    return both, out, log_stop, log_pf, log_pb, online_child


def subtb_loss(
    params,
    apply_fn,
    model,
    graph_prior,
    graphs,
    actions,
    key,
    x,
    num_total,
    cfg,
    interventions=None,
    target_params=None,
    use_target=True,
):
    """The JSP-GFN loss on a batch of transitions.

    Args:
      params: network parameters; apply_fn(params, adjacency [n, d, d], edge_rows) -> outputs
        (edge logits for the first edge_rows graphs; networks.make_network).
      model, graph_prior: likelihood model and graph prior (jspgfn.models).
      graphs: uint8 [B, d, d] states G; actions: int32 [B] edges added (G -> G').
      key: PRNG key for theta; x: float [M, d] (mini-)batch of data; num_total: N.
      cfg: LossConfig; interventions: optional 0/1 [M, d], the intervened entries of x.
      target_params: optional parameters of a slowly updated copy of the network; when given, the
        child's log P(stop | G') comes from it, without gradient (beyond the paper).
      use_target: bool [] (may be traced): whether target_params is used; False gives the paper's loss.
    Returns: (loss scalar, metrics dict).
    """
    b, d, _ = graphs.shape
    s = cfg.num_theta_samples
    both, out, log_stop, log_pf, log_pb, _ = transition_terms(
        params, apply_fn, graphs, actions, cfg.max_parents, target_params, use_target
    )

    node_mask = policy.node_mask_of(model, both)  # [2B, d, P]
    theta = jax.lax.stop_gradient(
        policy.sample_theta(
            key, jax.lax.stop_gradient(out), node_mask, s, cfg.noise_pool, groups=2, share_halves=cfg.shared_theta_noise
        )
    )  # [2B, S, d, P]
    log_q = policy.theta_log_prob(out, theta, node_mask)  # [2B, S]
    if cfg.theta_elbo > 0:
        # The same values, with the reparameterisation gradient of theta = loc + scale * eps.
        log_r_grad = log_rewards(
            model, graph_prior, reparameterised(out, theta, node_mask), both, x, num_total, interventions
        )
        log_r = jax.lax.stop_gradient(log_r_grad)
    else:
        log_r = log_rewards(model, graph_prior, theta, both, x, num_total, interventions)  # [2B, S], no grad

    def residuals(log_stop, log_q, log_pf):  # all S x S pairs (theta_s, theta'_t): [B, S, S']
        log_pt = log_stop[:, None] + log_q  # log P(theta | G)
        lhs = log_r[b:][:, None, :] + log_pb[:, None, None] + log_pt[:b][:, :, None]
        rhs = log_r[:b][:, :, None] + log_pf[:, None, None] + log_pt[b:][:, None, :]
        return (lhs - rhs) / cfg.residual_scale

    delta = residuals(log_stop, log_q, log_pf)
    if cfg.shared_theta_noise:
        # The same values; the structure (stop and edge logits) learns from the S pairs (s, s) that share
        # their noise, q from the S(S - 1) independent pairs (s, t), s != t, as in the paper.
        sg = jax.lax.stop_gradient
        shared = jnp.eye(s, dtype=bool)
        structure = optax.huber_loss(residuals(log_stop, sg(log_q), log_pf), delta=cfg.huber_delta)
        theta_part = optax.huber_loss(residuals(sg(log_stop), log_q, sg(log_pf)), delta=cfg.huber_delta)
        loss = jnp.mean(structure, where=shared) + jnp.mean(theta_part, where=~shared)
        extra = {"abs_delta_shared": jnp.mean(jnp.abs(delta), where=shared)}
    else:
        extra = {}
        loss = jnp.mean(optax.huber_loss(delta, delta=cfg.huber_delta))
    per_transition = jax.lax.stop_gradient(jnp.mean(jnp.abs(delta), axis=(1, 2)))  # [B], replay priorities
    metrics = {
        "subtb_loss": loss,
        "abs_delta": jnp.mean(jnp.abs(delta)),
        "mean_delta": jnp.mean(delta),
        "per_transition": per_transition,
        **extra,
    }

    if cfg.theta_elbo > 0:
        elbo = elbo_term(out, log_r_grad, node_mask, num_total)
        loss = loss + cfg.theta_elbo * elbo
        metrics["neg_elbo"] = elbo

    if cfg.penalty > 0:
        pen = score_penalty(out, model, graph_prior, theta, both, node_mask, x, num_total, interventions)
        loss = loss + 0.5 * cfg.penalty * pen
        metrics["penalty"] = pen
    metrics["loss"] = loss
    return loss, metrics


def reparameterised(out, theta, node_mask):
    """theta [B, S, d, P] drawn from q (no gradient), node_mask [B, d, P] -> the same values, differentiable in
    q's parameters as loc + scale * eps (diagonal family) or loc + L_aa eps (full family, L_aa the active
    parameters' Cholesky factor, policy.active_factor), with eps recovered from theta and held fixed."""
    loc = out["loc"][:, None]
    if "tril" in out:
        factor = policy.active_factor(out["tril"], node_mask)[:, None]  # [B, 1, d, P, P]
        eps = triangular.solve_lower(factor, (theta - loc)[..., None])
        noise = (factor @ jax.lax.stop_gradient(eps))[..., 0]
    else:
        scale = out["scale"][:, None]
        noise = scale * jax.lax.stop_gradient((theta - loc) / scale)
    return jnp.where(node_mask[:, None] > 0, loc + noise, 0.0)


def elbo_term(out, log_r, node_mask, num_total):
    """mean over graphs of -(mean_s log R(G, theta_s) + H(q(. | G))) / max(1, N), the negative ELBO of
    q(theta | G) per data row (entropy in closed form, constants dropped): log_r [B, S] (differentiable
    through reparameterised theta), node_mask [B, d, P]."""
    if "tril" in out:  # log det of the active factor; inactive parameters have 1 on its diagonal
        factor = policy.active_factor(out["tril"], node_mask)
        entropy = jnp.sum(jnp.log(jnp.diagonal(factor, axis1=-2, axis2=-1)), axis=(-2, -1))  # [B]
    else:
        entropy = jnp.sum(node_mask * jnp.log(out["scale"]), axis=(-2, -1))  # [B]
    return -jnp.mean(jnp.mean(log_r, axis=1) + entropy) / jnp.maximum(float(num_total), 1.0)


def score_penalty(out, model, graph_prior, theta, graphs, node_mask, x, num_total, interventions=None):
    """mean over (G, theta) of ||grad log q - grad log R||^2 / max(1, #active) / max(1, N)^2.

    Every denominator is guarded: the empty graph has no active linear parameters.
    """

    def log_q_sum(t):
        return jnp.sum(policy.theta_log_prob(out, t, node_mask))

    def log_r_sum(t):
        return jnp.sum(log_rewards(model, graph_prior, t, graphs, x, num_total, interventions))

    diff = jax.grad(log_q_sum)(theta) - jax.lax.stop_gradient(jax.grad(log_r_sum)(theta))
    diff = diff * node_mask[:, None]
    num_active = jnp.maximum(node_mask.sum(axis=(-2, -1)), 1.0)[:, None]  # [2B, 1]
    per = jnp.sum(diff**2, axis=(-2, -1)) / num_active
    return jnp.mean(per) / jnp.maximum(float(num_total), 1.0) ** 2


def trajectory_loss(params, apply_fn, model, graph_prior, actions, length, key, x, num_total, cfg, interventions=None):
    """SubTB(lambda) over the sub-trajectories of whole trajectories G_0 = empty -> ... -> G_L (beyond the paper).

    The condition of the length-3 paths (module docstring), written for every undirected path
    (G_i, theta_i) <- (G_i, .) -> ... -> (G_j, .) -> (G_j, theta_j), i < j <= L: with
    f(G, theta) = log R(G, theta) - log q(theta | G) - log P(stop | G),
      delta[i, j, s] = f(G_j, theta_j,s) - f(G_i, theta_i,s)
                       + sum_{i<=k<j} (log P_B(G_k | G_k+1) - log P_F(G_k+1 | G_k)),
    (the sum of the transitions' residuals between i and j), weighted by trajectory_lambda ** (j - i - 1) and
    normalised per trajectory (Madan et al. 2023's SubTB(lambda)); lambda = 1 weighs every pair alike. Long
    pairs reach every transition between their ends at once, so an excess of flow into a region of low
    reward meets the reward where it enters, not only where it ends at a complete DAG (forced stop) and
    from there back one transition per update (docs/jspgfn-beyond-d5.md).

    Args: actions int32 [K, T] (edge actions, T = d(d-1)/2), length int32 [K]; the rest as `subtb_loss`.
    Returns: (loss, mean |delta| over the weighted pairs).
    """
    k, t = actions.shape
    d = x.shape[1]
    s = cfg.num_theta_samples
    states = states_along(actions, length, d)  # [K, T+1, d, d]
    flat = states.reshape(k * (t + 1), d, d)
    out = apply_fn(params, flat)
    log_stop, flow = trajectory_flows(out, flat, actions, length, cfg.max_parents)

    node_mask = policy.node_mask_of(model, flat)
    theta = jax.lax.stop_gradient(policy.sample_theta(key, jax.lax.stop_gradient(out), node_mask, s))
    log_q = policy.theta_log_prob(out, theta, node_mask)  # [K(T+1), S]
    log_r = log_rewards(model, graph_prior, theta, flat, x, num_total, interventions)
    f = (log_r - log_q - log_stop[:, None]).reshape(k, t + 1, s) + flow[..., None]  # [K, T+1, S]
    return subtb_lambda(f, length, cfg)


def trajectory_flows(out, flat, actions, length, max_parents):
    """The policy's terms along whole trajectories: out = the network's outputs on flat [K(T+1), d, d] (the
    states of `states_along`), actions int32 [K, T], length int32 [K] -> (log P(stop | G_i) [K(T+1)],
    sum_{k<i} (log P_B(G_k | G_k+1) - log P_F(G_k+1 | G_k)) [K, T+1])."""
    k, t = actions.shape
    d = flat.shape[-1]
    emask = valid_actions_jax(flat, envlib.closure_of(flat), max_parents)
    log_stop, log_edges = policy.log_policy_edges(out["stop_logit"], out["edge_logits"], emask)
    log_edges = log_edges.reshape(k, t + 1, d * d)[:, :t]
    taken = jnp.arange(t)[None, :] < length[:, None]  # [K, T]
    log_pf = jnp.where(taken, jnp.take_along_axis(log_edges, actions[..., None], axis=-1)[..., 0], 0.0)
    log_pb = jnp.where(taken, uniform_log_pb(jnp.arange(1, t + 1, dtype=jnp.float32)), 0.0)  # G_k+1: k+1 edges
    flow = jnp.concatenate([jnp.zeros((k, 1)), jnp.cumsum(log_pb - log_pf, axis=1)], axis=1)  # [K, T+1]
    return log_stop, flow


def subtb_lambda(f, length, cfg):
    """SubTB(lambda) over the pairs i < j <= length of f [K, T+1, S] (delta[i, j] = f[j] - f[i], see
    `trajectory_loss`), weighted by trajectory_lambda ** (j - i - 1), normalised per trajectory, Huber:
    -> (loss, mean |delta| over the weighted pairs)."""
    k, t1, _ = f.shape
    delta = (f[:, None, :, :] - f[:, :, None, :]) / cfg.residual_scale  # [K, i, j, S]
    i, j = jnp.arange(t1)[:, None], jnp.arange(t1)[None, :]
    valid = (i < j)[None] & (j[None] <= length[:, None, None])  # [K, i, j]
    weights = jnp.where(valid, cfg.trajectory_lambda ** jnp.maximum(j - i - 1, 0).astype(jnp.float32), 0.0)
    weights = weights / jnp.maximum(weights.sum(axis=(1, 2), keepdims=True), 1e-12)
    per_pair = jnp.mean(optax.huber_loss(delta, delta=cfg.huber_delta), axis=-1)  # [K, i, j]
    loss = jnp.sum(weights * per_pair) / k
    abs_delta = jnp.sum(weights * jnp.mean(jnp.abs(delta), axis=-1)) / k
    return loss, abs_delta
