"""VBG (Nishikawa-Toomey et al., 2022): a DAG-GFlowNet over graphs alternated with Variational Bayes on theta.

The variational family is q(G, theta) = q_phi(G) q(theta), with q_phi(G) a GFlowNet over DAGs and
q(theta) = prod_j N(theta_j; mu_j, Sigma_j) a full Gaussian over all d incoming weights of node j
(theta_j = column j of the weight matrix; the weights of G's non-parents are masked out by G in the
likelihood). The ELBO E_q[log P(D | G, theta)] + E_q[log P(G)] - KL(q(G) || ...) - KL(q(theta) || P(theta))
is raised by alternating:

  (2) q(theta) update, closed form (coordinate ascent given q(G), observational linear Gaussian model
      with noise variance s2 and prior N(mu0, v0) on every weight, Lambda_0 = I / v0):
        Lambda_j = Lambda_0 + (E[G_:j G_:j^T] * X^T X) / s2,
        mu_j     = Lambda_j^-1 (Lambda_0 mu0 1 + (E[G_:j] * X^T x_j) / s2),
      with the expectations estimated from `theta_graph_samples` graphs drawn from the GFlowNet;
  (1) GFlowNet updates with the reward
        log R(G) = log P(G) + E_{q(theta)}[log P(D | G, theta)] - KL(q(theta_G) || P(theta_G | G)),
      where E[log N(x_j; w_j^T x, s2)] summed over rows
          = log N(x_j; X (G_:j * mu_j), s2 I) - tr((G_:j G_:j^T * Sigma_j) X^T X) / (2 s2),
      and theta_G are the weights of G's edges only: q(theta_G) is the marginal of q on them (for node j
      the sub-vector of mu_j and sub-block of Sigma_j on its parents), P(theta_G | G) = N(mu0, v0 I).
      The KL term is VBG's (the official code's compute_delta_score_lingauss_full has it): it charges
      each edge for the information its weight takes from the data, the Occam factor that the marginal
      likelihood has. Without it (theta seen in the fixed d x d space, where the KL is a constant of G)
      an edge whose weight q pins near 0 costs nothing and q(G) puts too much mass on dense graphs.

The GFlowNet is trained with the modified detailed-balance condition of DAG-GFlowNet (Deleu et al.,
2022), for every transition G -> G' (one edge added) with stop probabilities:
  log R(G') - log R(G) + log P_B(G | G') + log P(stop | G) = log P(G' | G) + log P(stop | G'),
uniform P_B (jspgfn.gflownet.loss.uniform_log_pb), Huber loss. Environment, replay buffer, network and
policy are the JSP-GFN machinery of jspgfn.gflownet (the network's theta head is unused). One round =
one jitted call: draw graphs from the GFlowNet and their moments, then `gflownet_iterations_per_round` GFlowNet
iterations in a lax.scan (act epsilon-uniform, store, sample a batch, loss, Adam). The q(theta) update
between them runs in float64 numpy on the d x d moments (it is tiny and float32 loses digits on
X^T X / s2).

Output: G from the trained GFlowNet and theta ~ q(theta) masked by G, i.e. theta_pa(j) is drawn from the
marginal of q(theta_j) on G's parents (the sub-vector of mu_j, the sub-block of Sigma_j), as VBG samples
(G, theta) from q(G) q(theta); theta is exactly 0 off G.
"""

import dataclasses
import functools
import math
import time
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from tqdm.auto import tqdm

from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import policy
from jspgfn.gflownet import replay as replaylib
from jspgfn.gflownet.core import prefill_replay
from jspgfn.gflownet.loss import next_graphs, uniform_log_pb
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.gflownet.sample import sample_graphs, sample_graphs_chunk
from jspgfn.graphs import valid_actions_jax
from jspgfn.models import get_graph_prior
from jspgfn_baselines.shared.common import check_finite_data, make_samples, require_observational

_LOG_2PI = 1.8378770664093453


class QTheta(NamedTuple):
    """q(theta) = prod_j N(mu[j], cov[j]): mu [d(node j), d(parent i)], cov [d(node), d, d]."""

    mu: np.ndarray
    cov: np.ndarray


# ----------------------------------------------------------------- q(theta): closed-form update


def graph_moments(graphs):
    """E[G] [d, d] and E[G_:j G_:j^T] [d(node j), d, d] of graphs [K, d, d] (uniform weights)."""
    g = jnp.asarray(graphs, jnp.float32)
    return g.mean(axis=0), jnp.einsum("kij,klj->jil", g, g) / g.shape[0]


def update_q(xtx, edge_mean, edge_outer, model):
    """The closed-form q(theta) update (float64): returns QTheta.

    Args: xtx = X^T X [d, d]; edge_mean = E[G] [d, d] (i -> j); edge_outer[j] = E[G_:j G_:j^T];
      model: LinearGaussian (obs_var s2, prior_mean mu0, prior_var v0).
      Lambda_j = I / v0 + (E[G_:j G_:j^T] * X^T X) / s2,
      mu_j = Lambda_j^-1 (mu0 / v0 1 + (E[G_:j] * X^T x_j) / s2).
    """
    xtx = np.asarray(xtx, np.float64)
    edge_mean = np.asarray(edge_mean, np.float64)
    edge_outer = np.asarray(edge_outer, np.float64)
    d = xtx.shape[0]
    s2, v0, mu0 = float(model.obs_var), float(model.prior_var), float(model.prior_mean)
    precision = np.eye(d) / v0 + edge_outer * xtx[None] / s2  # [d(node), d, d]
    shift = mu0 / v0 + edge_mean.T * xtx.T / s2  # row j: E[G_:j] * X^T x_j (xtx[:, j] = X^T x_j)
    cov = np.linalg.inv(precision)
    cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
    mu = np.linalg.solve(precision, shift[..., None])[..., 0]
    return QTheta(mu, cov)


def prior_q(model, d):
    return QTheta(np.full((d, d), float(model.prior_mean)), np.tile(np.eye(d) * float(model.prior_var), (d, 1, 1)))


# ----------------------------------------------------------------- reward and loss


def expected_log_likelihood(mu, cov, graphs, xtx, n, obs_var):
    """E_{q(theta)}[log P(D | G, theta)] for graphs [B, d, d] -> [B] (closed form, linear Gaussian).

    sum_j -0.5/s2 [ ||x_j - X (G_:j * mu_j)||^2 + tr((G_:j G_:j^T * Sigma_j) X^T X) ] - N d/2 log(2 pi s2),
    with ||x_j - X w||^2 = (e_j - w)^T X^T X (e_j - w) (sufficient statistics only).
    """
    g = graphs.astype(jnp.float32)
    d = g.shape[-1]
    w = g * mu.T[None]  # [B, d(i), d(j)]: weight of i -> j under mu, masked by G
    resid = jnp.eye(d)[None] - w
    sse = jnp.einsum("bij,ik,bkj->b", resid, xtx, resid)
    gj = jnp.swapaxes(g, -1, -2)  # [B, d(node j), d(parent i)]
    trace = jnp.einsum("bji,jil,bjl,il->b", gj, cov, gj, xtx)  # sum_j tr((g_j g_j^T * Sigma_j) X^T X)
    return -0.5 * (sse + trace) / obs_var - 0.5 * n * d * (_LOG_2PI + jnp.log(obs_var))


def kl_to_prior(mu, cov, graphs, prior_mean, prior_var):
    """KL(q(theta_G) || N(prior_mean, prior_var I)) of the weights on G's edges: graphs [B, d, d] -> [B].

    q(theta_G) is, per node j, the marginal of N(mu_j, Sigma_j) on G's parents of j (S = {i: G_ij = 1}):
      0.5 [tr(Sigma_S) / v0 + |mu_S - mu0|^2 / v0 - |S| + |S| log v0 - log det Sigma_S].
    log det Sigma_S is the log-determinant of Sigma_j with the non-parent rows and columns replaced by
    those of the identity (a fixed shape for every graph).
    """
    g = jnp.swapaxes(graphs.astype(jnp.float32), -1, -2)  # [B, d(node j), d(parent i)]
    v0 = prior_var
    num_parents = g.sum(axis=-1)  # [B, d]
    trace = jnp.einsum("bji,ji->bj", g, jnp.diagonal(cov, axis1=-2, axis2=-1)) / v0
    quad = jnp.einsum("bji,ji->bj", g, (mu - prior_mean) ** 2) / v0
    eye = jnp.eye(g.shape[-1])
    masked = g[..., :, None] * cov[None] * g[..., None, :] + eye * (1.0 - g[..., None, :])  # [B, d, d, d]
    chol = jnp.linalg.cholesky(masked)  # symmetric positive definite: cheaper than slogdet's LU
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)  # [B, d]
    kl = 0.5 * (trace + quad - num_parents + num_parents * jnp.log(v0) - logdet)
    return kl.sum(axis=-1)


def log_reward(graph_prior, mu, cov, graphs, xtx, n, obs_var, prior_mean, prior_var):
    """log R(G) = log P(G) + E_{q(theta)}[log P(D | G, theta)] - KL(q(theta_G) || P(theta_G | G)):
    graphs [B, d, d] -> [B].

    Looked up in this module when the training step is traced (the tests monkeypatch it).
    """
    return (
        graph_prior.log_prob(graphs.astype(jnp.float32))
        + expected_log_likelihood(mu, cov, graphs, xtx, n, obs_var)
        - kl_to_prior(mu, cov, graphs, prior_mean, prior_var)
    )


def log_marginal_likelihood(graphs, xtx, n, obs_var, prior_mean, prior_var):
    """log P(D | G) with theta integrated out (linear Gaussian, N(mu0, v0) weights): graphs [B, d, d] -> [B].

    The score of the first run (`VBGTrainer.warm_up`). Per node j with parents S, x_j ~ N(X_S mu0 1,
    s2 I + v0 X_S X_S^T), evaluated through the masked d x d posterior precision
    Lambda_j = (G_:j G_:j^T * X^T X) / s2 + diag(G_:j / v0 + 1 - G_:j) (Woodbury, determinant lemma),
    as jspgfn.conjugate does in float64 numpy.
    """
    g = jnp.swapaxes(graphs.astype(jnp.float32), -1, -2)  # [B, d(node j), d(parent i)]
    d = g.shape[-1]
    s2, v0, mu0 = obs_var, prior_var, prior_mean
    outer = g[..., :, None] * g[..., None, :]  # [B, d, d, d]
    precision = outer * xtx / s2 + jnp.eye(d) * (g / v0 + 1.0 - g)[..., None, :]
    chol = jnp.linalg.cholesky(precision)
    gram_m = jnp.einsum("il,bjl->bji", xtx, g)  # row j: X^T X G_:j
    rtr = jnp.diagonal(xtx)[None] - 2.0 * mu0 * jnp.sum(g * xtx, -1) + mu0**2 * jnp.sum(g * gram_m, -1)
    u = g * (xtx[None] - mu0 * gram_m) / s2  # xtx[j] = X^T x_j
    z = jax.scipy.linalg.solve_triangular(chol, u[..., None], lower=True)[..., 0]
    quad = rtr / s2 - jnp.sum(z**2, axis=-1)
    logdet = 2.0 * jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    logdet_cov = n * jnp.log(s2) + g.sum(-1) * jnp.log(v0) + logdet
    return jnp.sum(-0.5 * (n * _LOG_2PI + logdet_cov + quad), axis=-1)


def db_loss(params, apply_fn, log_reward_fn, graphs, actions, huber_delta):
    """Modified detailed balance of DAG-GFlowNet on transitions G -> G' = G + edge(actions).

    delta = log R(G') - log R(G) + log P_B(G | G') + log P(stop | G) - log P(G' | G) - log P(stop | G').
    Args: log_reward_fn(graphs [n, d, d]) -> [n] (no gradient). Returns (loss, metrics).
    """
    b = graphs.shape[0]
    both = jnp.concatenate([graphs, next_graphs(graphs, actions)], axis=0)  # [2B, d, d]
    out = apply_fn(params, both)
    emask = valid_actions_jax(both, envlib.closure_of(both))
    log_stop, log_edges = policy.log_policy_edges(out["stop_logit"], out["edge_logits"], emask)
    log_pf = log_edges[:b].reshape(b, -1)[jnp.arange(b), actions]
    log_pb = uniform_log_pb(jnp.sum(both[b:], axis=(-2, -1)).astype(jnp.float32))
    log_r = jax.lax.stop_gradient(log_reward_fn(both))
    delta = log_r[b:] - log_r[:b] + log_pb + log_stop[:b] - log_pf - log_stop[b:]
    loss = jnp.mean(optax.huber_loss(delta, delta=huber_delta))
    return loss, {"loss": loss, "abs_delta": jnp.mean(jnp.abs(delta))}


# ----------------------------------------------------------------- training


class State(NamedTuple):
    params: dict
    opt_state: tuple
    env: envlib.EnvState
    replay: replaylib.Replay
    key: jax.Array
    step: jax.Array


@dataclasses.dataclass(frozen=True)
class VBGTrainer:
    model: object
    graph_prior: object
    xtx: np.ndarray  # float [d, d]
    num_rows: int
    net: NetConfig
    num_rounds: int
    iterations_per_round: int
    theta_graph_samples: int
    batch_size: int
    num_envs: int
    replay_capacity: int
    prefill: int
    learning_rate: float
    exploration_end: float
    huber_delta: float
    per_round_schedule: bool = True
    first_run_iterations: int = 100

    @property
    def d(self):
        return self.xtx.shape[0]

    @functools.cached_property
    def network(self):
        return make_network(self.net, 1)  # theta head unused: graphs only

    @functools.cached_property
    def optimizer(self):
        return optax.chain(optax.clip_by_global_norm(10.0), optax.adam(self.learning_rate))

    def init(self, key):
        key, k_init, k_fill = jax.random.split(key, 3)
        params = self.network.init(k_init, jnp.zeros((1, self.d, self.d), jnp.uint8))
        env = envlib.reset(self.num_envs, self.d)
        replay = replaylib.init(self.replay_capacity, self.d)
        env, replay, _ = prefill_replay(env, replay, k_fill, self.prefill, None)
        return State(params, self.optimizer.init(params), env, replay, key, jnp.zeros((), jnp.int32))

    def epsilon(self, step):
        """epsilon-uniform exploration. per_round (VBG's official schedule): every round starts from uniform
        acting and reaches exploration_end after half of the round, and the first tenth of the rounds act
        uniformly throughout; global: linear from 1 to exploration_end over the first half of training."""
        if self.per_round_schedule:
            first = math.ceil(0.1 * self.num_rounds)  # rounds of uniform acting only
            in_round = step % self.iterations_per_round
            ramp = jnp.clip(in_round / max(1.0, 0.5 * self.iterations_per_round), 0.0, 1.0)
            ramp = jnp.where(step < first * self.iterations_per_round, 0.0, ramp)
            return 1.0 + ramp * (self.exploration_end - 1.0)
        horizon = max(1.0, 0.5 * self.num_rounds * self.iterations_per_round)
        return 1.0 + jnp.clip(step / horizon, 0.0, 1.0) * (self.exploration_end - 1.0)

    def act(self, params, env, key, epsilon):
        k_mix, k_act = jax.random.split(key)
        out = self.network.apply(params, env.adjacency)
        logp = policy.action_log_probs(out["stop_logit"], out["edge_logits"], envlib.edge_mask(env))
        amask = envlib.action_mask(env)
        explore = jax.random.bernoulli(k_mix, epsilon, (logp.shape[0],))
        logits = jnp.where(explore[:, None], jnp.where(amask, 0.0, -jnp.inf), jnp.where(amask, logp, -jnp.inf))
        return jax.random.categorical(k_act, logits).astype(jnp.int32)

    def iteration(self, log_reward_fn, state, epsilon=None):
        """One GFlowNet update under log_reward_fn (graphs [n, d, d] -> [n]); epsilon None: the schedule's."""
        key, k_act, k_rep = jax.random.split(state.key, 3)
        epsilon = self.epsilon(state.step) if epsilon is None else epsilon
        actions = self.act(state.params, state.env, k_act, epsilon)
        env, is_stop = envlib.step(state.env, actions)
        replay = replaylib.add(state.replay, state.env.adjacency, actions, ~is_stop)
        graphs, acts, _ = replaylib.sample(replay, k_rep, self.batch_size)
        (_, metrics), grads = jax.value_and_grad(db_loss, has_aux=True)(
            state.params, self.network.apply, log_reward_fn, graphs, acts, self.huber_delta
        )
        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        return State(params, opt_state, env, replay, key, state.step + 1), metrics

    def _constants(self):
        xtx = jnp.asarray(self.xtx, jnp.float32)
        return (
            xtx,
            float(self.num_rows),
            float(self.model.obs_var),
            float(self.model.prior_mean),
            float(self.model.prior_var),
        )

    @functools.partial(jax.jit, static_argnums=0)
    def train_round(self, state, mu, cov):
        """iterations_per_round GFlowNet updates under the reward of q = (mu, cov), in one scan."""
        mu, cov = mu.astype(jnp.float32), cov.astype(jnp.float32)
        xtx, n, obs_var, prior_mean, prior_var = self._constants()

        def reward(g):
            return log_reward(self.graph_prior, mu, cov, g, xtx, n, obs_var, prior_mean, prior_var)

        state, metrics = jax.lax.scan(
            lambda st, _: self.iteration(reward, st), state, None, length=self.iterations_per_round
        )
        return state, jax.tree_util.tree_map(jnp.mean, metrics)

    @functools.partial(jax.jit, static_argnums=0)
    def warm_up(self, state):
        """VBG's first run (the official code): first_run_iterations GFlowNet updates, acting uniformly, under
        the marginal-likelihood reward log P(G) + log P(D | G) before the first q(theta) update, so that the
        first q(theta) is fitted to graphs that explain the data. The schedule's step counter is not advanced.

        Without it the first q(theta) comes from the untrained GFlowNet's near-uniform dense graphs; at d=20
        its weights are poor, every edge then costs more than it explains, and VBG locks into the empty graph.
        """
        xtx, n, obs_var, prior_mean, prior_var = self._constants()

        def reward(g):
            return self.graph_prior.log_prob(g.astype(jnp.float32)) + log_marginal_likelihood(
                g, xtx, n, obs_var, prior_mean, prior_var
            )

        step = state.step
        state, metrics = jax.lax.scan(
            lambda st, _: self.iteration(reward, st, 1.0), state, None, length=self.first_run_iterations
        )
        return state._replace(step=step), jax.tree_util.tree_map(jnp.mean, metrics)

    @functools.partial(jax.jit, static_argnums=0)
    def sampled_moments(self, params, key):
        """E[G], E[G_:j G_:j^T] over theta_graph_samples graphs of the GFlowNet."""
        graphs = sample_graphs_chunk(self.network.apply, params, key, self.theta_graph_samples, self.d, None)
        return graph_moments(graphs)

    def update_q(self, params, key):
        edge_mean, edge_outer = self.sampled_moments(params, key)
        return update_q(self.xtx, edge_mean, edge_outer, self.model)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


def sample_theta_from_q(q, graphs, rng):
    """theta_k ~ q(theta) masked by G_k (the marginal of q(theta_j) on G_k's parents): [K, d, d], 0 off G."""
    k, d = graphs.shape[0], graphs.shape[-1]
    chol = np.linalg.cholesky(q.cov)  # [d, d, d]
    z = rng.standard_normal((k, d, d))
    node_major = q.mu[None] + np.einsum("jab,kjb->kja", chol, z)  # row j: theta_j ~ N(mu_j, Sigma_j)
    return np.swapaxes(node_major, -1, -2) * graphs


def run_vbg(
    dataset,
    model,
    seed,
    *,
    num_rounds,
    gflownet_iterations_per_round,
    theta_graph_samples,
    batch_size,
    num_envs,
    replay_capacity,
    prefill,
    learning_rate,
    exploration_end,
    huber_delta,
    schedule,
    first_run_iterations,
    embed_dim,
    mlp_hidden,
    num_heads,
    key_size,
    num_samples,
    graph_prior,
    progress=True,
):
    """Train VBG and return PosteriorSamples of num_samples pairs (G ~ GFlowNet, theta ~ q(theta) on G)."""
    require_observational("vbg", dataset)
    x = check_finite_data(dataset)
    d = dataset.num_variables
    trainer = VBGTrainer(
        model=model,
        graph_prior=get_graph_prior(graph_prior, d),
        xtx=x.T @ x,
        num_rows=x.shape[0],
        net=NetConfig(
            embed_dim=int(embed_dim),
            mlp_hidden=int(mlp_hidden),
            num_heads=int(num_heads),
            key_size=int(key_size),
            theta_hidden=8,
            theta_layers=1,
        ),
        num_rounds=int(num_rounds),
        iterations_per_round=int(gflownet_iterations_per_round),
        theta_graph_samples=int(theta_graph_samples),
        batch_size=int(batch_size),
        num_envs=int(num_envs),
        replay_capacity=int(replay_capacity),
        prefill=int(prefill),
        learning_rate=float(learning_rate),
        exploration_end=float(exploration_end),
        huber_delta=float(huber_delta),
        per_round_schedule=schedule == "per_round",
        first_run_iterations=int(first_run_iterations),
    )
    start = time.perf_counter()
    key = jax.random.PRNGKey(seed)
    key, k_init = jax.random.split(key)
    state = trainer.init(k_init)
    if trainer.first_run_iterations > 0:
        state, _ = trainer.warm_up(state)
    bar = tqdm(range(trainer.num_rounds), desc="vbg rounds", disable=not progress, leave=False)
    for _ in bar:
        key, k_q = jax.random.split(key)
        q = trainer.update_q(state.params, k_q)  # (2) from the current GFlowNet's graphs
        if trainer.per_round_schedule:  # a new reward: Adam restarts, as in VBG's official code
            state = state._replace(opt_state=trainer.optimizer.init(state.params))
        state, metrics = trainer.train_round(state, jnp.asarray(q.mu), jnp.asarray(q.cov))  # (1)
        bar.set_postfix(loss=float(metrics["loss"]))
    key, k_q, k_g = jax.random.split(key, 3)
    q = trainer.update_q(state.params, k_q)  # q(theta) matching the final q(G)
    graphs = sample_graphs(trainer.network.apply, state.params, k_g, int(num_samples), d)
    key, k_t = jax.random.split(key)
    rng = np.random.default_rng(int(jax.random.randint(k_t, (), 0, 2**31 - 1)))
    theta = sample_theta_from_q(q, graphs, rng)
    return make_samples(
        "vbg",
        model,
        seed,
        graphs,
        theta,
        time.perf_counter() - start,
        dataset,
        graph_prior=graph_prior,
        extra_metadata={"final_loss": float(metrics["loss"]), "q_theta_mean": q.mu.T.tolist()},
    )
