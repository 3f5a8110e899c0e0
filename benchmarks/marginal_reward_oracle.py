"""Is it theta, or the graph half of JSP-GFN, that keeps it from the posterior beyond d=5? An oracle test.

Trains JSP-GFN's network, acting, replay, exploration, optimiser and Huber loss exactly as the library does,
with one change: the residual of a transition G -> G' uses the EXACT log marginal likelihood
log P(D | G) + log P(G) (linear Gaussian, theta integrated out in closed form) in place of the sampled
log R(G, theta) - log q(theta | G) terms. This is DAG-GFlowNet's modified detailed balance with the exact
score (Deleu et al. 2022), whose solution is the exact posterior over graphs; no theta is drawn, so the
residuals carry no theta noise and q(theta | G) is left untrained. If this sampler reaches the exact edge
marginals where JSP-GFN does not, the cause is in the theta half (its noise, q); if it fails the same way,
it is in the graph half (network, exploration, replay, loss, schedule). The evaluation is
benchmarks/accuracy_exact_edges.py's. An oracle: it uses the closed form that JSP-GFN exists to avoid.

  .venv/bin/python benchmarks/marginal_reward_oracle.py /tmp/w/d10er2/0=/tmp/w/d10er2/exact0.npz \
      --eval-at 6000 15000 30000 [--seed S] [--set stop_target_tau=0.1 ...] [--stop-offset 1]

--d5 trains on flow_diagnosis.py's d=5 datasets instead and prints its exact diagnosis (`--seeds 0 1 ...`);
with --tabular the policy is a table of logits per DAG (all 29,281), no network.
--stop-offset W also adds W times the exact score to the stop logit (as benchmarks/stop_offset_oracle.py does,
here summed from the local-score table, so it composes with stop_target_tau), so the network has to learn only
the rest of log P(stop | G): about -log F(G), a smoother function of the graph.
--child-gradient BETA, --inflow-cut, --centred-semi-gradient change only the gradient that reaches the child's
log P(stop | G') in the residual of G -> G' (MarginalRewardTrainer.child_stop); --score-gain builds the policy's
logits on each edge's exact score gain (_ScoreGainLogits). Lab notes, ninth session.
--flow-heuristic W builds them on a heuristic log-flow, the relaxed best completion of each graph
(benchmarks/flow_heuristic.py). Lab notes, nineteenth session.
--forced-stop-squared (no Huber cap on the transitions into a forced stop) and --temper-until SHARE (the
likelihood's power rising from 0 to 1): lab notes, twelfth session.
--sibling W adds a term on the difference of two siblings' residuals (G -> G + e replayed, G -> G + e' drawn
uniformly): lab notes, twentieth session.

The options that act on theta (num_theta_samples, shared_theta_noise, noise_pool, penalty, theta_elbo) have no
effect here; stop_target_tau / stop_target_after, replay_priority and trajectory_balance (SubTB(lambda) over whole
trajectories, with the exact score) do.
"""

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_exact_edges  # noqa: E402
import flow_diagnosis  # noqa: E402
from flow_heuristic import HeuristicLogits, best_superset_table, parent_codes  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact_dp import local_scores  # noqa: E402
from jspgfn.gflownet import env as envlib  # noqa: E402
from jspgfn.gflownet import exact_flows  # noqa: E402
from jspgfn.gflownet.core import Trainer, loss_config  # noqa: E402
from jspgfn.gflownet.loss import (  # noqa: E402
    next_graphs,
    subtb_lambda,
    trajectory_flows,
    transition_terms,
    uniform_log_pb,
)
from jspgfn.gflownet.trajectories import states_along  # noqa: E402
from jspgfn.graphs import valid_actions_jax  # noqa: E402
from jspgfn_baselines.shared.vbg import log_marginal_likelihood  # noqa: E402


def sibling_actions(graphs, key, max_parents):
    """One edge action per graph (uint8 [B, d, d], each with a valid edge), uniform over its valid edges:
    int32 [B] (i * d + j), the sibling G + e' of the replayed child G + e (e' = e is allowed)."""
    b, d, _ = graphs.shape
    valid = valid_actions_jax(graphs, envlib.closure_of(graphs), max_parents).reshape(b, d * d)
    return jax.random.categorical(key, jnp.where(valid, 0.0, -jnp.inf)).astype(jnp.int32)


def table_log_marginal(local, graphs):
    """log P(D | G) summed from the local scores local float [d, 2^d] (a gather): graphs [B, d, d] -> float [B]."""
    d = graphs.shape[-1]
    return jnp.sum(jnp.asarray(local)[jnp.arange(d)[None, :], parent_codes(graphs)], axis=-1)


class MarginalRewardTrainer(Trainer):
    """The library's Trainer with the residual of DAG-GFlowNet's modified detailed balance on the exact score."""

    inflow_cut = False  # --inflow-cut
    child_gradient = 1.0  # --child-gradient
    centred_semi_gradient = False  # --centred-semi-gradient
    forced_stop_squared = False  # --forced-stop-squared
    temper_until = 0.0  # --temper-until: the likelihood's power rises from 0 to 1 over this share of the run
    sibling = 0.0  # --sibling: weight of the term on the difference of two siblings' residuals
    _beta = None  # that power at the step being traced (None: 1)

    def iteration_on(self, state, data, interventions):
        if self.temper_until > 0:  # the step is traced: its power is set for this trace only
            ramp = max(1.0, self.temper_until * self.cfg.num_iterations)
            self._beta = jnp.clip(state.step.astype(jnp.float32) / ramp, 0.0, 1.0)
        try:
            return super().iteration_on(state, data, interventions)
        finally:
            self._beta = None

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
        del interventions, network  # no theta; one dataset per trainer (self.network reads it)
        cfg = self.cfg
        b = graphs.shape[0]
        if self.sibling > 0:  # one scoring call for both children (two in one CPU step can hang: lab notes)
            others = sibling_actions(graphs, key, cfg.max_parents)
            both = self.residuals(
                params,
                jnp.concatenate([graphs, graphs]),
                jnp.concatenate([actions, others]),
                x,
                target_params,
                use_target,
            )
            delta, sibling_gap = both[:b], both[:b] - both[b:]
        else:
            delta = self.residuals(params, graphs, actions, x, target_params, use_target)
        per_transition = optax.huber_loss(delta, delta=cfg.huber_delta)
        if self.forced_stop_squared:  # no Huber cap where G' has no valid action (its stop is forced)
            child = next_graphs(graphs, actions)
            forced = ~jnp.any(valid_actions_jax(child, envlib.closure_of(child), cfg.max_parents), axis=(-2, -1))
            per_transition = jnp.where(forced, 0.5 * delta**2, per_transition)
        loss = jnp.mean(per_transition)
        metrics = {
            "subtb_loss": loss,
            "abs_delta": jnp.mean(jnp.abs(delta)),
            "mean_delta": jnp.mean(delta),
            "per_transition": jax.lax.stop_gradient(jnp.abs(delta)),
        }
        if self.sibling > 0:
            term = jnp.mean(optax.huber_loss(sibling_gap, delta=cfg.huber_delta))
            loss = loss + self.sibling * term
            metrics.update(sibling_loss=term, sibling_abs_gap=jnp.mean(jnp.abs(sibling_gap)))
        if trajectories is not None:
            term, abs_traj = self.trajectory_term(params, *trajectories)
            loss = loss + cfg.trajectory_balance * term
            metrics.update(trajectory_loss=term, trajectory_abs_delta=abs_traj)
        metrics["loss"] = loss
        return loss, metrics

    def residuals(self, params, graphs, actions, x, target_params=None, use_target=True):
        """The residual of each transition G -> G' (graphs uint8 [B, d, d], actions int32 [B]) on the data x
        float [M, d]: log R(G') - log R(G) + log P_B(G | G') + log P(stop | G) - log P_F(G' | G) - log P(stop | G')
        float [B], with the exact score as log R; < 0 where more flow enters G' than G' ends."""
        b = graphs.shape[0]
        both, out, log_stop, log_pf, log_pb, online_child = transition_terms(
            params, self.network.apply, graphs, actions, self.cfg.max_parents, target_params, use_target
        )
        if "log_marginal" in out:  # the stop-offset network has scored the graphs already
            log_marginal = out["log_marginal"]
        else:
            xtx = x.T @ x * (self.data.shape[0] / x.shape[0])  # the full data's X^T X (mini-batches rescaled)
            log_marginal = log_marginal_likelihood(
                both, xtx, self.data.shape[0], self.model.obs_var, 0.0, self.model.prior_var
            )
        if self._beta is not None:  # --temper-until: the tempered posterior P(D | G)^beta P(G)
            log_marginal = self._beta * log_marginal
        log_r = log_marginal + self.graph_prior.log_prob(both.astype(jnp.float32))
        log_r = jax.lax.stop_gradient(log_r)  # [2B]
        rest = log_r[b:] - log_r[:b] + log_pb + log_stop[:b] - log_pf  # [B]
        return rest - self.child_stop(log_stop[b:], online_child, jax.lax.stop_gradient(rest - log_stop[b:]))

    def replay_residuals(self, params, replay, chunk=4096):
        """The residuals of every transition of the replay (the online network's child stop): (graphs uint8
        [n, d, d], actions int32 [n], residuals float [n]), chunk transitions per jitted call."""
        n = int(replay.size)
        graphs, actions = np.asarray(replay.graphs[:n]), np.asarray(replay.actions[:n])
        x = jnp.asarray(self.data, jnp.float32)
        residuals = jax.jit(self.residuals)
        parts = [residuals(params, graphs[i : i + chunk], actions[i : i + chunk], x) for i in range(0, n, chunk)]
        return graphs, actions, np.concatenate([np.asarray(p) for p in parts])

    def child_stop(self, log_stop_child, online_child, delta):
        """The child's log P(stop | G') [B] as it enters the residual delta [B] (its value, no gradient): the same
        values; the gradient the paper's (all), --child-gradient BETA times it, --inflow-cut's (none from
        residuals < 0: an excess inflow is corrected at the parent, not passed on by G') or
        --centred-semi-gradient's (only that of the batch mean of the online network's child stops
        online_child [B]: a shift of every stop logit leaves the residuals unchanged, as under the full
        gradient, and the rest is semi-gradient, or the target network's where stop_target_tau > 0)."""
        sg = jax.lax.stop_gradient
        if self.inflow_cut:
            return jnp.where(delta < 0, sg(log_stop_child), log_stop_child)
        if self.centred_semi_gradient:
            mean = jnp.mean(online_child)
            return sg(log_stop_child) + mean - sg(mean)
        if self.child_gradient != 1.0:  # Baird's residual algorithm: 1 the full gradient, 0 the semi-gradient
            return self.child_gradient * log_stop_child + (1.0 - self.child_gradient) * sg(log_stop_child)
        return log_stop_child

    @functools.cached_property
    def local_table(self):
        """float32 [d, 2^d]: log P(x_j | x_Pa) per node and parent code (exact_dp.local_scores, uniform prior),
        -1e6 where Pa holds j. A gather, no LAPACK call in the step."""
        local = local_scores(self.model, np.asarray(self.data, np.float64))
        return np.where(np.isfinite(local), local, -1e6).astype(np.float32)

    def table_score(self, graphs):
        """log P(D | G) up to a constant, from the local scores: graphs [B, d, d] -> float [B]."""
        return table_log_marginal(self.local_table, graphs)

    def trajectory_term(self, params, actions, length):
        """loss.trajectory_loss (SubTB(lambda) over whole replayed trajectories) with the exact score in place of
        log R(G, theta) - log q(theta | G): actions int32 [K, T], length int32 [K] -> (loss, mean |delta|)."""
        k, t = actions.shape
        d = self.num_variables
        flat = states_along(actions, length, d).reshape(k * (t + 1), d, d)
        out = self.network.apply(params, flat)
        log_stop, flow = trajectory_flows(out, flat, actions, length, self.cfg.max_parents)
        f = (jax.lax.stop_gradient(self.table_score(flat)) - log_stop).reshape(k, t + 1) + flow
        return subtb_lambda(f[..., None], length, loss_config(self.cfg))


@dataclasses.dataclass(frozen=True)
class _Table:
    """A tabular policy over every DAG on d <= 5 nodes: a stop logit and d x d edge logits per DAG, looked up by
    the graph's code (no function approximation). init(key, adjacency), apply(params, adjacency, edge_rows) as
    the library's network; loc 0 and scale 1 stand in for the theta head, which the oracle does not use."""

    codes: np.ndarray  # int32 [M], sorted: the codes of the lattice's DAGs
    params_per_node: int

    @classmethod
    def of(cls, lattice, params_per_node):
        """The table over exact_flows.dag_lattice(d)'s DAGs: entry k of the parameters is lattice.graphs[k]."""
        m, d, _ = lattice.graphs.shape
        codes = lattice.graphs.reshape(m, -1).astype(np.int64) @ (np.int64(1) << np.arange(d * d))  # as in apply
        return cls(codes.astype(np.int32), params_per_node)

    def init(self, key, adjacency):
        del key
        d = adjacency.shape[-1]
        return {"stop": jnp.zeros(len(self.codes)), "edges": jnp.zeros((len(self.codes), d, d))}

    def apply(self, params, adjacency, edge_rows=None):
        b, d, _ = adjacency.shape
        codes = jnp.sum(adjacency.reshape(b, -1).astype(jnp.int32) << jnp.arange(d * d, dtype=jnp.int32), axis=-1)
        idx = jnp.searchsorted(jnp.asarray(self.codes), codes)
        rows = b if edge_rows is None else edge_rows
        shape = (b, d, self.params_per_node)
        return {
            "stop_logit": params["stop"][idx],
            "edge_logits": params["edges"][idx[:rows]],
            "loc": jnp.zeros(shape),
            "scale": jnp.ones(shape),
        }


class TabularTrainer(MarginalRewardTrainer):
    """The oracle with a tabular policy (d <= 5): what the loss, replay and optimiser do without a network."""

    @functools.cached_property
    def network(self):
        return _Table.of(exact_flows.dag_lattice(self.num_variables), self.params_per_node)


@dataclasses.dataclass(frozen=True)
class _ScoreGainLogits:
    """A transformed network whose policy is built on the exact score gain of each edge (soft Bellman form).

    At G, action "add i -> j" gets the logit l_ij = [s_j(Pa_j + i) - s_j(Pa_j)] + log P_B(G | G + ij) + u_ij(G)
    with u_ij = softplus(the network's edge logit) >= 0, and stop the logit 0 (stop_logit = -logsumexp(l) in the
    library's sigmoid/softmax layout). The modified DB residual of G -> G' = G + ij is then
    -u_ij(G) - log P(stop | G'): u learns -log P(stop | G + ij) = log F(G') - log R(G'), the child's flow beyond
    its own reward, which is 0 wherever the posterior stops (dense graphs) and where the network starts.
    local [d, 2^d]: log P(x_j | x_Pa) per node and parent code (exact_dp.local_scores; uniform graph prior).
    """

    base: object
    local: np.ndarray
    max_parents: int | None

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, None)  # every graph's edge logits: its stop logit needs them
        b, d, _ = adjacency.shape
        codes = parent_codes(adjacency)  # [B, d]
        table = jnp.asarray(self.local)
        nodes = jnp.arange(d)
        now = table[nodes[None, :], codes]  # [B, d]
        added = codes[:, None, :] | (1 << nodes)[None, :, None]  # [B, i, j]: Pa_j + i
        gain = table[nodes[None, None, :], added] - now[:, None, :]  # [B, i, j]
        log_pb = uniform_log_pb(jnp.sum(adjacency.astype(jnp.float32), axis=(1, 2)) + 1.0)  # G' has one more edge
        logits = gain + log_pb[:, None, None] + jax.nn.softplus(out["edge_logits"])
        emask = valid_actions_jax(adjacency, envlib.closure_of(adjacency), self.max_parents)
        lse = jax.nn.logsumexp(jnp.where(emask, logits, -1e9), axis=(1, 2))
        stop_logit = jnp.where(jnp.any(emask, axis=(1, 2)), -lse, 1e9)
        rows = b if edge_rows is None else edge_rows
        return {**out, "stop_logit": stop_logit, "edge_logits": logits[:rows]}


class ScoreGainTrainer(MarginalRewardTrainer):
    """The oracle with the policy built on the exact score gain of each edge (_ScoreGainLogits)."""

    @functools.cached_property
    def network(self):
        return _ScoreGainLogits(super().network, self.local_table, self.cfg.max_parents)


class FlowHeuristicTrainer(MarginalRewardTrainer):
    """The oracle with the policy built on the heuristic log-flow Phi_w (flow_heuristic.HeuristicLogits)."""

    weight = 1.0  # --flow-heuristic W
    stop_only = False  # --heuristic-stop-only

    @functools.cached_property
    def network(self):
        local = self.local_table
        return HeuristicLogits(
            super().network, local, best_superset_table(local), self.weight, self.cfg.max_parents, self.stop_only
        )


@dataclasses.dataclass(frozen=True)
class _TableStopOffset:
    """A network whose stop logit is shifted by weight * (log P(D | G) - log P(D | base graph)), the score summed
    from the local-score table: a gather, no LAPACK call, so it composes with the target network, which scores
    the children once more in the step (two Choleskys of the same graphs in one jitted CPU step hang)."""

    base: object
    local: np.ndarray  # float32 [d, 2^d], MarginalRewardTrainer.local_table
    weight: float
    base_score: float  # the table's score of the base graph (the empty graph unless --offset-base true-graph)

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, edge_rows)
        score = jax.lax.stop_gradient(table_log_marginal(self.local, adjacency))  # [B]; the residual reuses it
        stop_logit = out["stop_logit"] + self.weight * (score - self.base_score)
        return {**out, "stop_logit": stop_logit, "log_marginal": score}


class WithStopOffset(MarginalRewardTrainer):
    """Both oracles: the exact marginal reward, and the exact score added to the stop logit (from the table)."""

    weight = 1.0  # --stop-offset W
    base_graph = None  # uint8 [d, d] (None: the empty graph)

    @functools.cached_property
    def network(self):
        d = self.num_variables
        base = np.zeros((d, d), np.uint8) if self.base_graph is None else np.asarray(self.base_graph, np.uint8)
        base_score = float(self.table_score(jnp.asarray(base[None]))[0])
        return _TableStopOffset(super().network, self.local_table, self.weight, base_score)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument(
        "--stop-offset", type=float, default=0.0, help="> 0: also stop_offset_oracle.py's offset, with this weight"
    )
    parser.add_argument(
        "--offset-base",
        choices=["empty", "true-graph"],
        default="empty",
        help="the offset is log P(D | G) - log P(D | this graph); true-graph (one dataset only) leaves the network "
        "only -log F(G) + log F(true graph), tens of nats, to learn; empty leaves it a constant of about -log Z too",
    )
    parser.add_argument(
        "--d5", action="store_true", help="train on flow_diagnosis.py's d=5 datasets and diagnose P_T exactly there"
    )
    parser.add_argument("--tabular", action="store_true", help="with --d5: a table of logits per DAG, no network")
    parser.add_argument(
        "--score-gain", action="store_true", help="the policy's logits built on each edge's exact score gain"
    )
    parser.add_argument(
        "--flow-heuristic",
        type=float,
        default=None,
        metavar="W",
        help="the policy's logits built on the heuristic log-flow log R(G) + W h(G) (benchmarks/flow_heuristic.py)",
    )
    parser.add_argument(
        "--heuristic-stop-only",
        action="store_true",
        help="with --flow-heuristic: only the stop logit is offset (by -W h(G)); the edge logits are the network's",
    )
    parser.add_argument(
        "--inflow-cut",
        action="store_true",
        help="no gradient to the child's stop from residuals < 0 (an excess inflow is corrected at the parent)",
    )
    parser.add_argument(
        "--child-gradient",
        type=float,
        default=1.0,
        metavar="BETA",
        help="the child's stop gets BETA times its gradient (1: the paper's loss, 0: semi-gradient)",
    )
    parser.add_argument(
        "--centred-semi-gradient",
        action="store_true",
        help="the child's stop keeps only the gradient of the batch mean of the children's stops",
    )
    parser.add_argument(
        "--forced-stop-squared",
        action="store_true",
        help="a squared loss (no Huber cap) on the transitions into a state whose stop is forced (the complete "
        "DAG): the one boundary that pins the level of every stop logit weighs its residual in full",
    )
    parser.add_argument(
        "--temper-until",
        type=float,
        default=0.0,
        metavar="SHARE",
        help="> 0: train on the tempered posterior P(D | G)^beta P(G), beta rising linearly from 0 (the prior) "
        "to 1 over this share of the run: the network follows the solution from the prior's to the posterior's",
    )
    parser.add_argument(
        "--sibling",
        type=float,
        default=0.0,
        metavar="W",
        help="> 0: add W times the Huber loss of the difference between the residuals of G -> G + e (replayed) and "
        "G -> G + e' (e' uniform among G's valid edges): the two share log R(G) and log P(stop | G), so the term "
        "compares the edge logits at G with the children's flows directly",
    )
    args, rest = parser.parse_known_args()
    if args.centred_semi_gradient + args.inflow_cut + (args.child_gradient != 1.0) > 1:
        parser.error("--centred-semi-gradient, --inflow-cut and --child-gradient are exclusive")
    note = " oracle: exact marginal reward, no theta"
    if args.centred_semi_gradient:
        MarginalRewardTrainer.centred_semi_gradient = True
        note += "; centred semi-gradient"
    if args.child_gradient != 1.0:
        MarginalRewardTrainer.child_gradient = args.child_gradient
        note += f"; child gradient x{args.child_gradient}"
    if args.temper_until > 0:
        MarginalRewardTrainer.temper_until = args.temper_until
        note += f"; likelihood tempered from 0 to 1 over {args.temper_until} of the run"
    if args.sibling > 0:
        MarginalRewardTrainer.sibling = args.sibling
        note += f"; sibling term, weight {args.sibling}"
    if args.forced_stop_squared:
        MarginalRewardTrainer.forced_stop_squared = True
        note += "; squared loss into forced stops"
    if args.inflow_cut:
        MarginalRewardTrainer.inflow_cut = True
        note += "; inflow cut"
    if args.score_gain:
        if args.tabular or args.stop_offset > 0:
            parser.error("--score-gain takes neither --tabular nor --stop-offset")
        note += "; logits on the exact score gain"
        (flow_diagnosis.main if args.d5 else accuracy_exact_edges.main)(ScoreGainTrainer, rest, note=note)
        return
    if args.flow_heuristic is not None:
        if args.tabular or args.stop_offset > 0 or args.score_gain:
            parser.error("--flow-heuristic takes neither --tabular, --stop-offset nor --score-gain")
        FlowHeuristicTrainer.weight = args.flow_heuristic
        FlowHeuristicTrainer.stop_only = args.heuristic_stop_only
        note += f"; logits on the heuristic log-flow, w={args.flow_heuristic}"
        note += ", stop only" if args.heuristic_stop_only else ""
        (flow_diagnosis.main if args.d5 else accuracy_exact_edges.main)(FlowHeuristicTrainer, rest, note=note)
        return
    if args.tabular and not args.d5:
        parser.error("--tabular needs --d5 (a table over every DAG)")
    trainer_class = TabularTrainer if args.tabular else MarginalRewardTrainer
    note += "; tabular policy" if args.tabular else ""
    if args.stop_offset > 0:
        if args.tabular:
            parser.error("--stop-offset takes no --tabular")
        WithStopOffset.weight = args.stop_offset
        if args.offset_base == "true-graph":
            pairs = [a for a in rest if "=" in a and Path(a.split("=", 1)[0]).is_dir()]  # not --set's KEY=VALUE
            if args.d5 or len(pairs) != 1:
                parser.error("--offset-base true-graph takes one DATA=EXACT pair")
            WithStopOffset.base_graph = load_dataset(pairs[0].split("=", 1)[0]).graph
        trainer_class = WithStopOffset
        note = f"{note}; stop offset, weight={args.stop_offset}, base={args.offset_base}"
    if args.d5:
        flow_diagnosis.main(trainer_class, rest, note=note + " (rmse_q and rmse_mf: q is untrained here)")
    else:
        accuracy_exact_edges.main(trainer_class, rest, note=note)


if __name__ == "__main__":
    main()
