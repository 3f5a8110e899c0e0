"""The jitted JSP-GFN training iteration (Algorithm 1) as pure functions of a TrainState.

One iteration: step `num_envs` environments with the epsilon-uniform / policy
mixture, store the non-stop transitions in the replay buffer, sample a batch of
transitions, draw theta on-policy, take one optimiser step on the SubTB loss.
`run_chunk(state, n)` runs n iterations in one `lax.scan` (one dispatch); `run_group_chunk` runs
K runs of the same shape (other data and seeds) at once, the scan vmapped over a leading run axis.
"""

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jspgfn.errors import JspgfnError
from jspgfn.gflownet import closed_form, local_search, policy, score_exploration
from jspgfn.gflownet import env as envlib
from jspgfn.gflownet import replay as replaylib
from jspgfn.gflownet import trajectories as trajlib
from jspgfn.gflownet.last_step import LastStepNetwork
from jspgfn.gflownet.loss import LossConfig, subtb_loss, trajectory_loss
from jspgfn.gflownet.networks import NetConfig, make_network
from jspgfn.gflownet.score_offset import ScoreOffsetNetwork
from jspgfn.models import LinearGaussian


class TrainState(NamedTuple):
    params: dict
    opt_state: tuple
    env: envlib.EnvState
    replay: replaylib.Replay
    key: jax.Array  # uint32 [2]
    step: jax.Array  # int32 [], optimisation steps done
    trajectories: trajlib.Trajectories | None = None  # only with the trajectory term (trajectory_balance > 0)
    priorities: jax.Array | None = None  # float [C], only with prioritised replay (replay_priority > 0)
    target_params: dict | None = None  # Polyak average of params, only with stop_target_tau > 0
    anchor: replaylib.Replay | None = None  # the prefill's transitions, only with replay_anchor > 0
    terminals: jax.Array | None = None  # uint8 [E, d, d]: each environment's last graph, only with backward_every > 0
    backward: replaylib.Replay | None = None  # the backward trajectories' transitions, only with backward_batch > 0


def sub_config(cls, cfg, **given):
    """A NetConfig or LossConfig (`cls`) whose fields take the TrainConfig `cfg`'s values of the same names,
    except those `given` (e.g. family=...): the training options are defined once, in TrainConfig."""
    names = [field.name for field in dataclasses.fields(cls) if field.name not in given]
    return cls(**{name: getattr(cfg, name) for name in names}, **given)


def net_config(cfg, family):
    return sub_config(NetConfig, cfg, family=family)


def loss_config(cfg):
    return sub_config(LossConfig, cfg)


def make_optimizer(cfg):
    schedule = optax.warmup_cosine_decay_schedule(
        0.0,
        cfg.learning_rate,
        max(1, cfg.warmup),
        max(cfg.num_iterations, cfg.warmup + 1),
        cfg.learning_rate * cfg.end_learning_rate_factor,
    )
    return optax.chain(optax.clip_by_global_norm(cfg.grad_clip), optax.adam(schedule))


def _exploration_ramp(cfg, step, start, end):
    """start at step 0, linear to end after the first exploration_fraction of the run, then end."""
    horizon = max(1.0, cfg.exploration_fraction * cfg.num_iterations)
    frac = jnp.clip(step / horizon, 0.0, 1.0)
    return start + frac * (end - start)


def exploration(cfg, step):
    """epsilon at an optimisation step: linear from start to end over a share of the run."""
    return _exploration_ramp(cfg, step, cfg.exploration_start, cfg.exploration_end)


def score_share(cfg, step):
    """The share of exploratory actions drawn by the score gains at an optimisation step (with
    explore_score_temperature > 0): explore_score_share, or with explore_score_share_end set, linear from
    the one to the other while epsilon falls (beyond the paper)."""
    if cfg.explore_score_share_end is None:
        return cfg.explore_score_share
    return _exploration_ramp(cfg, step, cfg.explore_score_share, cfg.explore_score_share_end)


def stop_target_on(cfg, step):
    """bool []: whether the child's stop comes from the target network at this optimisation step
    (stop_target_tau > 0, after the first stop_target_after share of the run and, where stop_target_until < 1,
    before that share; beyond the paper)."""
    on = step >= jnp.floor(cfg.stop_target_after * cfg.num_iterations)
    if cfg.stop_target_until < 1.0:
        on = on & (step < jnp.floor(cfg.stop_target_until * cfg.num_iterations))
    return on


@dataclasses.dataclass(frozen=True)
class Trainer:
    """Everything static about a run; methods are pure and jitted."""

    cfg: object  # TrainConfig
    model: object
    graph_prior: object
    family: str  # posterior family of theta: "diag" or "full" (jspgfn.models.FAMILIES)
    data: np.ndarray  # float [N, d]
    interventions: np.ndarray | None = None  # 0/1 [N, d]: entries set by hard interventions

    def __post_init__(self):
        if self.cfg.stop_score_offset > 0 and type(self.model) is not LinearGaussian:
            raise JspgfnError(
                f"stop_score_offset is for the linear Gaussian model only, not {type(self.model).__name__} "
                "(the score of the empty graph must be exact: no parameters)"
            )
        if self.cfg.backward_every > 0 and type(self.model) is not LinearGaussian:
            raise JspgfnError(
                f"backward_every is for the linear Gaussian model only, not {type(self.model).__name__} "
                "(its local moves need the closed-form marginal likelihood)"
            )
        if self.cfg.last_step_closed_form:
            if type(self.model) is not LinearGaussian:
                raise JspgfnError(
                    f"last_step_closed_form is for the linear Gaussian model only, not {type(self.model).__name__} "
                    "(it needs the closed-form marginal likelihood)"
                )
            d = self.data.shape[1]
            if self.cfg.max_parents is not None and self.cfg.max_parents < d - 1:
                raise JspgfnError(
                    f"last_step_closed_form needs no parent limit (max_parents {self.cfg.max_parents} < d - 1 = "
                    f"{d - 1}): with a limit, the states that can only grow into forced stops are others"
                )
        if self.cfg.explore_score_temperature > 0 and type(self.model) is not LinearGaussian:
            raise JspgfnError(
                f"explore_score_temperature is for the linear Gaussian model only, not {type(self.model).__name__} "
                "(it needs the closed-form marginal likelihood)"
            )

    @functools.cached_property
    def network(self):
        """The policy network; with stop_score_offset > 0 its stop logit reads the trainer's data
        (score_offset.ScoreOffsetNetwork), with last_step_closed_form its logits one edge short of the complete DAG
        do (last_step.LastStepNetwork); both beyond the paper."""
        network = make_network(net_config(self.cfg, self.family), self.params_per_node)
        if self.cfg.stop_score_offset > 0:
            weight, closed = self.cfg.stop_score_offset, self.cfg.stop_score_closed_form
            args = (self.model, self.graph_prior, weight, self.data, self.interventions, closed)
            network = ScoreOffsetNetwork(network, *args)
        if self.cfg.last_step_closed_form:
            network = LastStepNetwork(network, self.model, self.graph_prior, self.data, self.interventions)
        return network

    def network_on(self, data, interventions):
        """The network for a run on `data` float [N, d] (interventions [N, d] or None; may be traced): the
        network itself, or where it reads data (stop_score_offset, last_step_closed_form) its copy on that data."""
        if hasattr(self.network, "on_data"):
            return self.network.on_data(data, interventions)
        return self.network

    @property
    def num_variables(self):
        return self.data.shape[1]

    @property
    def params_per_node(self):
        return self.model.theta_shape(self.num_variables)[-1]

    @functools.cached_property
    def optimizer(self):
        return make_optimizer(self.cfg)

    def init(self, seed, data=None, interventions=None):
        """TrainState at iteration 0, after the uniform prefill of the replay buffer. data (float [N, d]) and
        interventions: the run's, where it is not the trainer's own (a run of a group); only the prefill
        with explore_policy_stop and stop_score_offset reads them."""
        cfg, d = self.cfg, self.num_variables
        key = jax.random.PRNGKey(seed)
        key, k_init, k_fill = jax.random.split(key, 3)
        params = self.network.init(k_init, jnp.zeros((1, d, d), jnp.uint8))
        opt_state = self.optimizer.init(params)
        env = envlib.reset(cfg.num_envs, d)
        replay = replaylib.init(cfg.replay_capacity, d)
        # with replay_anchor the prefill fills a buffer of its own size, kept, and the replay gets its recent part
        anchor = replaylib.init(cfg.prefill * cfg.num_envs, d) if cfg.replay_anchor > 0 else None
        filled = replay if anchor is None else anchor
        traj = trajlib.init(cfg.num_envs, cfg.trajectory_capacity, d) if cfg.trajectory_balance > 0 else None
        if cfg.explore_policy_stop:
            env, filled, traj = self.prefill_exploring(params, env, filled, k_fill, traj, data, interventions)
        else:
            env, filled, traj = prefill_replay(env, filled, k_fill, cfg.prefill, cfg.max_parents, traj)
        if anchor is None:
            replay = filled
        else:
            anchor, replay = filled, replaylib.with_recent(replay, filled)
        priorities = replaylib.init_priorities(cfg.replay_capacity) if cfg.replay_priority > 0 else None
        target = params if cfg.stop_target_tau > 0 else None
        step = jnp.zeros((), jnp.int32)
        terminals = jnp.zeros((cfg.num_envs, d, d), jnp.uint8) if cfg.backward_every > 0 else None
        backward = replaylib.init(cfg.replay_capacity, d) if cfg.backward_batch > 0 else None
        return TrainState(
            params, opt_state, env, replay, key, step, traj, priorities, target, anchor, terminals, backward
        )

    @functools.partial(jax.jit, static_argnums=0)
    def prefill_exploring(self, params, env, replay, key, traj=None, data=None, interventions=None):
        """The prefill with explore_policy_stop: `prefill` steps of every environment with the exploratory
        actions of `act` (epsilon 1: the initial network's stop, a uniform edge otherwise): (env, replay, traj).
        data, interventions: the run's (network_on), default the trainer's."""
        network = self.network if data is None else self.network_on(data, interventions)
        choose = lambda env, k: self.act(params, env, k, 1.0, network)  # noqa: E731
        return _prefill_scan(env, replay, key, self.cfg.prefill, traj, choose)

    def act(self, params, env, key, epsilon, network=None, data=None, interventions=None, share=None):
        """Sample one action per environment from (1 - eps) P_phi + eps uniform: int32 [E]. With
        explore_policy_stop the exploratory part keeps P_phi's stop (policy.exploration_log_probs); with
        explore_score_temperature it follows the score gains on `data` (score_exploration), for a share of
        the exploratory actions (uniform for the rest): `share` (float [], may be traced; score_share),
        default explore_score_share. network, data, interventions: the run's (network_on), default the
        trainer's."""
        k_mix, k_act = jax.random.split(key)
        out = (self.network if network is None else network).apply(params, env.adjacency)
        emask = envlib.edge_mask(env, self.cfg.max_parents)
        logp = policy.action_log_probs(out["stop_logit"], out["edge_logits"], emask)
        amask = envlib.action_mask(env, self.cfg.max_parents)
        if self.cfg.explore_policy_stop:
            exploratory = policy.exploration_log_probs(logp, amask)
        elif self.cfg.explore_score_temperature > 0:
            if data is None:
                data, interventions = self.data, self.interventions
            gains = closed_form.edge_gains(self.model, self.graph_prior, data, interventions, env.adjacency)
            exploratory = score_exploration.exploration_logits(gains, amask, self.cfg.explore_score_temperature)
            if self.cfg.explore_score_share < 1 or self.cfg.explore_score_share_end is not None:
                share = self.cfg.explore_score_share if share is None else share
                exploratory = score_exploration.mix_uniform(exploratory, amask, share)
        else:
            exploratory = policy.uniform_logits(amask)
        explore = jax.random.bernoulli(k_mix, epsilon, (logp.shape[0],))
        # onpolicy_envs: the first environments act with the sampler's policy alone (beyond the paper)
        explore &= jnp.arange(logp.shape[0]) >= self.cfg.onpolicy_envs
        logits = jnp.where(explore[:, None], exploratory, jnp.where(amask, logp, -jnp.inf))
        return jax.random.categorical(k_act, logits).astype(jnp.int32)

    def loss(
        self,
        params,
        graphs,
        actions,
        key,
        x,
        interventions=None,
        trajectories=None,
        target_params=None,
        use_target=True,
        network=None,
    ):
        """The SubTB loss on replayed transitions, plus (trajectories = (actions [K, T], length [K]),
        with trajectory_balance > 0) the whole-trajectory term. network: the run's (network_on), default the
        trainer's."""
        cfg = loss_config(self.cfg)
        apply_fn = (self.network if network is None else network).apply
        args = (self.model, self.graph_prior)
        loss, metrics = subtb_loss(
            params,
            apply_fn,
            *args,
            graphs,
            actions,
            key,
            x,
            self.data.shape[0],
            cfg,
            interventions,
            target_params,
            use_target,
        )
        if trajectories is not None:
            term, abs_delta = trajectory_loss(
                params,
                apply_fn,
                *args,
                *trajectories,
                jax.random.fold_in(key, 1),
                x,
                self.data.shape[0],
                cfg,
                interventions,
            )
            loss = loss + cfg.trajectory_balance * term
            metrics = {**metrics, "trajectory_loss": term, "trajectory_abs_delta": abs_delta, "loss": loss}
        return loss, metrics

    def iteration(self, state, _=None):
        """One iteration on the trainer's own data (a constant of the compiled step): (state, metrics)."""
        return self.iteration_on(state, self.data, self.interventions)

    def iteration_on(self, state, data, interventions):
        """One iteration on `data` float [N, d] (and its interventions 0/1 [N, d] or None), which may be
        traced: the step of run_group_chunk, where each run of a group has its own data of the trainer's
        shape. (state, metrics)."""
        cfg = self.cfg
        key, k_act, k_rep, k_theta, k_rows = jax.random.split(state.key, 5)
        network = self.network_on(data, interventions)
        epsilon = exploration(cfg, state.step)
        share = score_share(cfg, state.step)
        actions = self.act(state.params, state.env, k_act, epsilon, network, data, interventions, share)
        env, is_stop = envlib.step(state.env, actions)
        replay = replaylib.add(state.replay, state.env.adjacency, actions, ~is_stop)
        terminals, backward = state.terminals, state.backward
        if cfg.backward_every > 0:  # its key is folded in, so runs without it keep their random streams
            terminals = jnp.where(is_stop[:, None, None], state.env.adjacency, terminals)
            into = replay if backward is None else backward  # with backward_batch, a buffer of their own
            into = jax.lax.cond(
                state.step % cfg.backward_every == 0,
                lambda r: self.add_backward(r, terminals, jax.random.fold_in(k_rep, 4), data, interventions),
                lambda r: r,
                into,
            )
            if backward is None:
                replay = into
            else:
                backward = into
        priorities = state.priorities
        if state.anchor is not None:
            graphs, acts = replaylib.sample_mixed(replay, state.anchor, k_rep, cfg.batch_size, cfg.anchor_batch)
        elif backward is not None:
            graphs, acts = replaylib.sample_mixed(
                replay, backward, k_rep, cfg.batch_size, cfg.backward_share_of_batch, fallback=True
            )
        elif priorities is None:
            graphs, acts, _ = replaylib.sample(replay, k_rep, cfg.batch_size)
        else:
            priorities = replaylib.add_priorities(priorities, state.replay, ~is_stop)
            graphs, acts, idx = replaylib.sample_prioritised(
                replay, priorities, k_rep, cfg.batch_size, cfg.replay_priority
            )
        if cfg.replay_reversal > 0:  # its key is folded in, so runs without it keep their random streams
            graphs = replaylib.reverse_one_edge(
                graphs, acts, jax.random.fold_in(k_rep, 3), cfg.replay_reversal, cfg.max_parents
            )
        traj, traj_batch = state.trajectories, None
        if traj is not None:  # its keys are folded in, so runs without the term keep their random streams
            traj = trajlib.record(traj, actions, is_stop)
            traj_batch = trajlib.sample(traj, jax.random.fold_in(k_rep, 1), cfg.trajectory_batch)
        x = jnp.asarray(data, jnp.float32)
        interventions = None if interventions is None else jnp.asarray(interventions, jnp.float32)
        if cfg.minibatch_rows is not None and cfg.minibatch_rows < x.shape[0]:
            rows = jax.random.randint(k_rows, (cfg.minibatch_rows,), 0, x.shape[0])
            x = x[rows]
            interventions = None if interventions is None else interventions[rows]
        use_target = stop_target_on(cfg, state.step)
        (loss, metrics), grads = jax.value_and_grad(self.loss, has_aux=True)(
            state.params, graphs, acts, k_theta, x, interventions, traj_batch, state.target_params, use_target, network
        )
        per_transition = metrics.pop("per_transition")
        if priorities is not None:
            priorities = replaylib.update_priorities(priorities, idx, per_transition)
        updates, opt_state = self.optimizer.update(grads, state.opt_state, state.params)
        params = optax.apply_updates(state.params, updates)
        target = state.target_params
        if target is not None:
            # Until the target is used it is a copy of the network (step size 1), then a Polyak average.
            tau = jnp.where(use_target, cfg.stop_target_tau, 1.0)
            target = optax.incremental_update(params, target, tau)
        new = TrainState(
            params,
            opt_state,
            env,
            replay,
            key,
            state.step + 1,
            traj,
            priorities,
            target,
            state.anchor,
            terminals,
            backward,
        )
        return new, metrics

    def add_backward(self, replay, terminals, key, data, interventions):
        """`replay` with the transitions of one uniformly random trajectory to each of terminals uint8 [E, d, d]
        after backward_moves local moves by the closed-form score (option backward_every, beyond the paper;
        local_search.py)."""
        k_move, k_order = jax.random.split(key)
        x = jnp.asarray(data, jnp.float32)
        inter = None if interventions is None else jnp.asarray(interventions, jnp.float32)
        moves, max_parents = self.cfg.backward_moves, self.cfg.max_parents
        graphs = local_search.local_moves(self.model, self.graph_prior, x, inter, terminals, k_move, moves, max_parents)
        states, actions, valid = local_search.backward_transitions(graphs, k_order)
        return replaylib.add(replay, states, actions, valid)

    @functools.partial(jax.jit, static_argnums=(0, 2))
    def run_chunk(self, state, num):
        """num iterations in one scan: (state, metrics averaged over the chunk)."""
        state, metrics = jax.lax.scan(self.iteration, state, None, length=num)
        return state, jax.tree_util.tree_map(jnp.mean, metrics)

    @functools.partial(jax.jit, static_argnums=(0, 5))
    def run_group_chunk(self, states, active, data, interventions, num):
        """num iterations of K runs in one dispatch: run_chunk vmapped over a leading run axis.

        states: TrainState whose leaves have a leading axis K (one run each); active: bool [K], a run
        with False keeps its state (it is done); data: float [K, N, d], each run's training data;
        interventions: 0/1 [K, N, d] or None. Returns (states, metrics averaged over the chunk, each
        [K]). Every run has this trainer's options, d and N; only the data and the state differ.
        """

        def one(state, x, inter, on):
            new, metrics = jax.lax.scan(lambda s, _: self.iteration_on(s, x, inter), state, None, length=num)
            new = jax.tree_util.tree_map(lambda a, b: jnp.where(on, a, b), new, state)
            return new, jax.tree_util.tree_map(jnp.mean, metrics)

        return jax.vmap(one)(states, data, interventions, active)

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


@functools.partial(jax.jit, static_argnums=(3, 4))
def prefill_replay(env, replay, key, steps, max_parents, traj=None):
    """Fill the replay buffer with `steps` uniform-policy steps of every environment (and record the
    trajectories in `traj`, when given): (env, replay, traj)."""

    def uniform_action(env, k):
        logits = policy.uniform_logits(envlib.action_mask(env, max_parents))
        return jax.random.categorical(k, logits).astype(jnp.int32)

    return _prefill_scan(env, replay, key, steps, traj, uniform_action)


def _prefill_scan(env, replay, key, steps, traj, choose):
    """`steps` steps of every environment with actions `choose(env, key)` int32 [E], each transition added
    to the replay (and recorded in `traj`, when given): (env, replay, traj)."""

    def body(carry, k):
        env, replay, traj = carry
        actions = choose(env, k)
        new_env, is_stop = envlib.step(env, actions)
        traj = None if traj is None else trajlib.record(traj, actions, is_stop)
        return (new_env, replaylib.add(replay, env.adjacency, actions, ~is_stop), traj), None

    if steps == 0:
        return env, replay, traj
    (env, replay, traj), _ = jax.lax.scan(body, (env, replay, traj), jax.random.split(key, steps))
    return env, replay, traj
