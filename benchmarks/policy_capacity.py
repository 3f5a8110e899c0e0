"""Can JSP-GFN's network represent the exact sampler at d=5? Its graph policy fitted by supervision.

The flow leak toward complete DAGs (docs/jspgfn-beyond-d5.md) is either a limit of what the network can
represent or a property of how the SubTB loss trains it. This separates the two: with every DAG at d=5
listed, the optimal forward policy for the exact posterior is known (exact_flows.optimal_flows:
P*(stop | G), and P*(G' | G) = F*(G') / (|E(G')| F*(G)) under the uniform backward policy), so the same
network (the preset's architecture, the same optimiser and number of updates as training) is fitted to it
directly, by the KL divergence KL(P*(. | G) || P_phi(. | G)) over the actions of states G drawn half from
the optimal flow F* (the states the exact sampler visits) and half uniformly over the 29,281 DAGs. The
fitted policy's exact P_T is then compared with the exact posterior as benchmarks/flow_diagnosis.py does:
edge RMSE, complete-DAG mass, mean edges, and the KL at the end.

`--then-train N1 N2 ...`: q(theta | G) is fitted too (the ELBO term of loss.elbo_term on the same states),
then the paper's training (SubTB on the replay, the preset's schedules, a fresh prefill and optimiser)
continues from the fitted network, and P_T is diagnosed again at N1, N2, ... iterations: does the
training keep the exact sampler, or pull it back into the leak?

  .venv/bin/python benchmarks/policy_capacity.py --seeds 0 1 [--steps 6000] [--set embed_dim=64]
  .venv/bin/python benchmarks/policy_capacity.py --seeds 0 --then-train 1000 3000 6000 [--oracle]

`--oracle`: the training after the fit is marginal_reward_oracle.py's (the exact marginal reward, no theta).
`--residuals` (with --oracle): after the fit and at each --then-train iteration, the noise-free residuals of
the replay's transitions by how likely their action is under the exact optimal policy (log P*(a | G)):
share of the replay, mean residual, mean |residual|, share beyond the Huber delta, and the mean clipped
residual, i.e. the Huber gradient's push on the child's log P(stop | G') (< 0 lowers it: G' passes flow on).

  .venv/bin/python benchmarks/policy_capacity.py --seeds 0 --then-train 1000 --oracle --residuals

`--log-prob-fit --log-prob-floor=-inf` fits every valid action's log-probability as well (no floor): the start
nearest the loss's zero (lab notes, twelfth session: the oracle's training from it leaves the exact sampler for
about a thousand iterations and ends there).
"""

import argparse
import dataclasses
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).parent))
from _training import train_to  # noqa: E402
from flow_diagnosis import d5_problem, diagnose, edge_rmse, mean_field_gap  # noqa: E402
from jspgfn.gflownet import env as envlib  # noqa: E402
from jspgfn.gflownet import exact_flows, policy  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer, make_optimizer  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.loss import elbo_term, reparameterised  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.rewards import log_rewards  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.graphs import valid_actions_jax  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402
from marginal_reward_oracle import MarginalRewardTrainer  # noqa: E402

_FIT_LR = 1e-3  # the quick preset's learning rate; --set learning_rate=... changes the training after the fit only


def optimal_action_log_probs(lattice, log_exact):
    """log P*(a | G) float64 [M, d*d + 1] (edges flattened, then stop; -inf where invalid), and log F* [M]."""
    m, d = len(lattice.graphs), lattice.graphs.shape[-1]
    log_flow, log_stop = exact_flows.optimal_flows(lattice, log_exact)
    target = np.full((m, d * d + 1), -np.inf)
    target[:, -1] = log_stop
    for level in range(int(lattice.num_edges.max())):
        parent, action, child = exact_flows.edges_by_level(lattice, level)
        target[parent, action] = log_flow[child] - np.log(lattice.num_edges[child]) - log_flow[parent]
    return target, log_flow


def fit(trainer, lattice, target, log_flow, steps, batch_size, seed, with_q=False, log_prob_fit=False, floor=-100.0):
    """Adam on the mean KL(P* || P_phi) over batches of states (half from F*, half uniform), plus (log_prob_fit)
    the mean squared error of the log-probabilities of the actions with P* > 0 in float32 (log P* above about
    -103; both sides floored at `floor`) or, with floor=-inf, of every valid action (log P* finite in float64,
    no floor), plus (with_q) the negative ELBO of q(theta | G) on the same states: (params, the mean of the
    KL and squared error over the last 100 steps)."""
    cfg = trainer.cfg
    params = trainer.init(seed).params
    optimizer = make_optimizer(dataclasses.replace(cfg, learning_rate=_FIT_LR, num_iterations=steps))
    opt_state = optimizer.init(params)
    graphs = jnp.asarray(lattice.graphs)
    p_star = jnp.asarray(np.exp(target), jnp.float32)  # [M, A], 0 where invalid
    log_p_star = jnp.asarray(np.where(np.isfinite(target), target, 0.0), jnp.float32)
    # which log-probabilities the squared error covers: P* > 0 in float32, or (no floor) every valid action
    covered = jnp.asarray(np.isfinite(target)) if floor == -np.inf else p_star > 0
    flow_probs = np.exp(log_flow - np.logaddexp.reduce(log_flow))
    log_mixture = jnp.asarray(np.log(0.5 * flow_probs / flow_probs.sum() + 0.5 / len(flow_probs)), jnp.float32)

    x = jnp.asarray(trainer.data, jnp.float32)

    def loss_fn(params, idx, key):
        g = graphs[idx]
        out = trainer.network.apply(params, g)
        emask = valid_actions_jax(g, envlib.closure_of(g), cfg.max_parents)
        log_p = policy.action_log_probs(out["stop_logit"], out["edge_logits"], emask)
        fit_loss = jnp.mean(jnp.sum(p_star[idx] * (log_p_star[idx] - log_p), axis=1))  # the KL
        if log_prob_fit:  # the unlikely actions' log-probabilities too
            fitted = covered[idx]
            error = jnp.where(fitted, jnp.maximum(log_p_star[idx], floor) - jnp.maximum(log_p, floor), 0.0)
            fit_loss = fit_loss + jnp.mean(jnp.sum(error**2, axis=1) / jnp.sum(fitted, axis=1))
        if not with_q:
            return fit_loss, fit_loss
        node_mask = policy.node_mask_of(trainer.model, g)
        theta = jax.lax.stop_gradient(
            policy.sample_theta(key, jax.lax.stop_gradient(out), node_mask, cfg.num_theta_samples)
        )
        log_r = log_rewards(
            trainer.model, trainer.graph_prior, reparameterised(out, theta, node_mask), g, x, x.shape[0]
        )
        return fit_loss + elbo_term(out, log_r, node_mask, x.shape[0]), fit_loss

    @jax.jit
    def step(params, opt_state, key):
        k_idx, k_theta = jax.random.split(key)
        idx = jax.random.categorical(k_idx, log_mixture, shape=(batch_size,))
        (_, kl), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, idx, k_theta)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, kl

    key = jax.random.PRNGKey(seed)
    losses = []
    for _ in range(steps):
        key, sub = jax.random.split(key)
        params, opt_state, loss = step(params, opt_state, sub)
        losses.append(float(loss))
    return params, float(np.mean(losses[-100:]))


_LIKELIHOOD_BINS = ((-5.0, "log P*(a|G) >= -5"), (-30.0, "-30 <= log P* < -5"), (-np.inf, "log P* < -30"))


def residual_report(trainer, params, replay, lattice, target, chunk=4096):
    """Print the oracle's residuals on every transition of the replay, by the exact log P*(a | G) of the action.
    The child's stop is the online network's (with stop_target_tau > 0 the loss would use the target's)."""
    graphs, actions, delta = trainer.replay_residuals(params, replay, chunk)
    log_p_star = target[exact_flows.index_of(lattice, graphs), actions]
    huber = trainer.cfg.huber_delta
    push = np.clip(delta, -huber, huber)
    print(
        f"    {'action class':22s} {'share':>6s} {'mean':>8s} {'mean|.|':>8s} {'>delta':>7s} {'push':>7s}", flush=True
    )
    upper = np.inf
    for lower, label in _LIKELIHOOD_BINS:
        sel = (log_p_star >= lower) & (log_p_star < upper)
        upper = lower
        if not sel.any():
            continue
        print(
            f"    {label:22s} {sel.mean():6.3f} {delta[sel].mean():8.2f} {np.abs(delta[sel]).mean():8.2f} "
            f"{(np.abs(delta[sel]) > huber).mean():7.3f} {push[sel].mean():7.3f}",
            flush=True,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--steps", type=int, default=6000)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--then-train", type=int, nargs="*", default=[], metavar="ITERATION")
    parser.add_argument(
        "--target",
        choices=("exact", "mean-field"),
        default="exact",
        help="fit the optimal policy of the exact posterior, or of P_mf(G) (the diag family's SubTB fixed "
        "point at the mean-field optimum, benchmarks/family_floor.py): the sampler with zero mean residuals",
    )
    parser.add_argument(
        "--oracle",
        action="store_true",
        help="train after the fit with the exact marginal reward and no theta (marginal_reward_oracle.py): "
        "no noise in the residuals (how far the fit is from their zero: --residuals)",
    )
    parser.add_argument(
        "--log-prob-fit",
        action="store_true",
        help="fit also the squared error of the log-probabilities (floored at -100) of the actions with P* > 0 "
        "in float32 (log P* above about -103), not only the KL: the fit then aims at the loss's zero, not only at "
        "the sampler; final_KL is then that sum",
    )
    parser.add_argument(
        "--log-prob-floor",
        type=float,
        default=-100.0,
        help="with --log-prob-fit: the floor on both sides of the squared error; -inf fits every valid action's "
        "log-probability as it is (log P* in float64, no floor, none left out)",
    )
    parser.add_argument(
        "--residuals",
        action="store_true",
        help="with --oracle: the replay's residuals by the exact likelihood of their action, after the fit "
        "and at each --then-train iteration",
    )
    args = parser.parse_args()
    if args.residuals and not args.oracle:
        parser.error("--residuals needs --oracle (the residuals are the noise-free ones of the exact reward)")
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    cfg = get_preset(args.preset, **overrides)
    print(
        f"# cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} jax={jax.__version__} preset={args.preset} "
        f"steps={args.steps} batch={args.batch_size} overrides={overrides}",
        flush=True,
    )
    lattice = exact_flows.dag_lattice(5)
    complete = lattice.num_edges == 10
    print("seed  final_KL  rmse_PT  TV     complete:PT  exact    edges:PT exact", flush=True)
    for seed in args.seeds:
        likelihood, family = resolve_model("lingauss-diag")
        model = get_model(likelihood)
        prior = get_graph_prior(cfg.graph_prior, 5)
        ds, log_exact = d5_problem(seed, model, prior, lattice)
        log_target = log_exact
        if args.target == "mean-field":
            log_target = log_exact - mean_field_gap(model, ds.train, lattice.graphs)
        target_logp, log_flow = optimal_action_log_probs(lattice, log_target)
        trainer_class = MarginalRewardTrainer if args.oracle else Trainer
        trainer = trainer_class(cfg, model, prior, family, ds.train.astype(np.float32))
        params, final_kl = fit(
            trainer,
            lattice,
            target_logp,
            log_flow,
            args.steps,
            args.batch_size,
            seed,
            with_q=bool(args.then_train),
            log_prob_fit=args.log_prob_fit,
            floor=args.log_prob_floor,
        )
        scorer = TrajectoryScorer(trainer.network.apply, params, 5, cfg.max_parents)
        log_edges, log_stop = scorer.log_edges(lattice.graphs)
        log_pt, _ = exact_flows.terminating_log_probs(lattice, log_stop, log_edges.reshape(len(log_stop), -1))
        pt = np.exp(log_pt)
        print(
            f"{seed:4d} {final_kl:9.4f} {edge_rmse(lattice, log_pt, log_exact):8.3f} "
            f"{0.5 * np.abs(pt - np.exp(log_exact)).sum():6.3f} {pt[complete].sum():11.2e} "
            f"{np.exp(log_exact)[complete].sum():8.1e} {pt @ lattice.num_edges:8.2f} "
            f"{np.exp(log_exact) @ lattice.num_edges:5.2f}",
            flush=True,
        )
        if args.then_train:
            state = trainer.init(seed)
            target = None if state.target_params is None else params
            state = state._replace(params=params, opt_state=trainer.optimizer.init(params), target_params=target)
            if args.residuals:
                print("  at the fit, on the fresh prefill:", flush=True)
                residual_report(trainer, params, state.replay, lattice, target_logp)
            done = 0
            for target_iteration in sorted(args.then_train):
                state, done, _ = train_to(trainer, state, done, target_iteration)
                r = diagnose(trainer, state, lattice, log_exact, ds.train)
                print(
                    f"  then SubTB training, iteration {done:6d}: rmse_PT {r['rmse_pt']:.3f} rmse_q {r['rmse_q']:.3f} "
                    f"complete:PT {r['complete_pt']:.2e} edges:PT {r['edges_pt']:.2f}",
                    flush=True,
                )
                if args.residuals:
                    residual_report(trainer, state.params, state.replay, lattice, target_logp)


if __name__ == "__main__":
    main()
