"""Trace a JSP-GFN run that collapses to the empty graph: what moves the empty graph's stop probability.

The stop logit at the empty graph G = {} gets gradient only from the replayed transitions {} -> {e}, through
their residual (eq. 8): d delta / d (stop logit of {}) = 1 (log P(stop | {}) and -log P({e} | {}) both rise
with it). So P(stop | {}) rises while those residuals are negative on average. Each residual is the sum of
  reward  = log R({e}, theta') - log R({}, theta)      (theta ~ q(. | {}), theta' ~ q(. | {e}))
  theta_q = log q(theta | {}) - log q(theta' | {e})
  stop    = log P(stop | {}) - log P(stop | {e})        (the child's from the target network where used)
  edge    = log P_B({} | {e}) - log P({e} | {})          (P_B = 1 from a one-edge graph)
This script trains one run and at every --every iterations prints, over all d(d-1) transitions {} -> {e},
the mean of each term (over theta pairs and edges) and of the residual, the largest |loc| and scale of
q(theta' | {e}) over the one-edge graphs' active parameters, beside the sampler's mean edges per sample,
P(stop | {}), edge RMSE against the exact marginals, and the replay: its stored transitions' mean edges of G,
and how many of the transitions written since the last print start at {}.

  .venv/bin/python benchmarks/collapse_trace.py gpu_data/d10er2/1 --exact gpu_data/d10er2/exact1.npz \
      --seed 1 --until 10000 --every 250 --set num_iterations=30000 --set stop_target_tau=0.1 \
      --set exploration_fraction=0.25
"""

import argparse
import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _training import train_to  # noqa: E402
from accuracy_exact_edges import compare  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact import load_exact  # noqa: E402
from jspgfn.gflownet import policy  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer, exploration, stop_target_on  # noqa: E402
from jspgfn.gflownet.loss import transition_terms  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.rewards import log_rewards  # noqa: E402
from jspgfn.gflownet.sample import sample_graphs  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402


def empty_graph_terms(trainer, state, x, key, num_theta=16):
    """The mean of each residual term over the d(d-1) transitions {} -> {e} and num_theta^2 theta pairs:
    dict of floats (reward, theta_q, stop, edge, residual, and the share of transitions whose mean residual
    is negative)."""
    d = trainer.num_variables
    actions = jnp.asarray([i * d + j for i in range(d) for j in range(d) if i != j], jnp.int32)
    b = actions.shape[0]
    graphs = jnp.zeros((b, d, d), jnp.uint8)
    use_target = stop_target_on(trainer.cfg, state.step)
    both, out, log_stop, log_pf, log_pb, _ = transition_terms(
        state.params, trainer.network.apply, graphs, actions, trainer.cfg.max_parents, state.target_params, use_target
    )
    mask = policy.node_mask_of(trainer.model, both)
    theta = policy.sample_theta(key, out, mask, num_theta)  # [2B, S, d, P], i.i.d. noise
    log_q = policy.theta_log_prob(out, theta, mask)  # [2B, S]
    log_r = log_rewards(trainer.model, trainer.graph_prior, theta, both, x, x.shape[0])  # [2B, S]
    reward = log_r[b:][:, None, :] - log_r[:b][:, :, None]  # [B, S, S']
    theta_q = log_q[:b][:, :, None] - log_q[b:][:, None, :]
    stop = (log_stop[:b] - log_stop[b:])[:, None, None]
    edge = (log_pb - log_pf)[:, None, None]
    residual = reward + theta_q + stop + edge
    per_edge = residual.mean(axis=(1, 2))
    terms = dict(reward=reward, theta_q=theta_q, stop=stop, edge=edge, residual=residual)
    result = {name: float(jnp.mean(value)) for name, value in terms.items()}
    result["negative_share"] = float(jnp.mean(per_edge < 0))
    result["log_stop_empty"] = float(log_stop[0])
    active = mask[b:] > 0  # the one-edge graphs' active parameters (node layout)
    result["child_loc"] = float(jnp.max(jnp.where(active, jnp.abs(out["loc"][b:]), 0.0)))
    result["child_scale"] = float(jnp.max(jnp.where(active, out["scale"][b:], 0.0)))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="dataset folder")
    parser.add_argument("--exact", type=Path, required=True, help="its `jspgfn exact` .npz")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss-diag")
    parser.add_argument("--until", type=int, required=True, help="last iteration traced")
    parser.add_argument("--every", type=int, default=250)
    parser.add_argument("--num-samples", type=int, default=300)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    cfg = get_preset(args.preset, **overrides)
    likelihood, family = resolve_model(args.model)
    x = load_dataset(args.data).train.astype(np.float32)
    d = x.shape[1]
    exact = load_exact(args.exact)
    trainer = Trainer(cfg, get_model(likelihood), get_graph_prior(cfg.graph_prior, d), family, x)
    state = trainer.init(args.seed)
    print(
        f"# device={jax.devices()[0].device_kind} jax={jax.__version__} cores={os.cpu_count()} "
        f"data={args.data} seed={args.seed} preset={args.preset} overrides={overrides}",
        flush=True,
    )
    print(
        "iter    eps  train_s  rmse  edges  logP(stop|{})  reward  theta_q    stop    edge  residual  neg  "
        "max|loc|  max_scale  replay_edges  new  new_from_{}"
    )
    done, seconds, key = 0, 0.0, jax.random.PRNGKey(7)
    xj = jnp.asarray(x)
    target = 0
    while True:
        index_before = int(state.replay.index)
        state, done, spent = train_to(trainer, state, done, target)
        seconds += spent
        graphs = sample_graphs(trainer.network.apply, state.params, jax.random.PRNGKey(123), args.num_samples, d)
        rmse, _ = compare(graphs.mean(0), exact.edge)
        terms = empty_graph_terms(trainer, state, xj, jax.random.fold_in(key, done))
        replay = jax.device_get(state.replay)
        stored = replay.graphs[: int(replay.size)]
        written = (int(replay.index) - index_before) % replay.actions.shape[0]
        recent = np.arange(index_before, index_before + written) % replay.actions.shape[0]
        from_empty = int((replay.graphs[recent].sum(axis=(1, 2)) == 0).sum())
        print(
            f"{done:5d} {float(exploration(cfg, done)):.3f} {seconds:8.0f} {rmse:.3f} {graphs.sum((1, 2)).mean():6.1f}"
            f" {terms['log_stop_empty']:14.2f} {terms['reward']:7.1f} {terms['theta_q']:8.1f} {terms['stop']:7.1f}"
            f" {terms['edge']:7.1f} {terms['residual']:9.2f} {terms['negative_share']:4.2f}"
            f" {terms['child_loc']:8.2f} {terms['child_scale']:10.3g}"
            f" {stored.sum(axis=(1, 2)).mean():13.1f} {written:4d} {from_empty:11d}",
            flush=True,
        )
        if done >= args.until:
            break
        target = min(done + args.every, args.until)
    print(f"# trained {seconds:.0f} s; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
