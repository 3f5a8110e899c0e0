"""How the oracle's training from scratch reaches the leak at d=5: the level of the stop logits and the mean
clipped residual over the first iterations.

The twelfth session found that the oracle's training (marginal_reward_oracle.py: the exact marginal reward, no
theta) started near the zero of its loss (policy_capacity.py --log-prob-fit --log-prob-floor=-inf) ends at the
exact sampler (after leaving it for about a thousand iterations), while from scratch it ends in the leak into
complete DAGs. The account to test: under the paper's
full gradient a shift c of every stop logit z changes the residual of G -> G' by (1 - P(stop | G)) + P(stop | G)
- (1 - P(stop | G')) = P(stop | G'), so the level moves against the mean Huber-clipped residual weighted by the
child's P(stop | G'), a rate that vanishes once the stops desaturate; a replay whose clipped residuals are
positive on average (score gains of tens of nats, capped at the Huber delta) pushes every stop logit down until
P(stop) is small everywhere: the complete DAG takes the flow.

At each --eval-at iteration (from scratch, the preset's schedules), on d=5 dataset S of flow_diagnosis.py:
the exact P_T's complete-DAG mass and edge RMSE, log P(stop | G) minus the optimal one averaged over the DAGs
of each edge band (uniformly: every DAG counts, not only those the sampler visits), and on the replay the mean
clipped residual, the share of positive residuals and the mean clipped residual weighted by P(stop | G') (the
level's drift, per the account).

  .venv/bin/python benchmarks/early_drift.py --seed 0 --eval-at 50 100 200 400 700 1000 3000 6000
"""

import argparse
import os
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _training import train_to  # noqa: E402
from flow_diagnosis import d5_problem, diagnose  # noqa: E402
from jspgfn.gflownet import exact_flows  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.loss import next_graphs  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402
from marginal_reward_oracle import MarginalRewardTrainer  # noqa: E402

_BANDS = ((0, 3), (4, 6), (7, 9))  # edge counts, inclusive


def replay_drift(trainer, params, replay, chunk=4096):
    """On every transition of the replay: (mean clipped residual, share > 0, mean of clipped residual times the
    child's P(stop | G'))."""
    graphs, actions, delta = trainer.replay_residuals(params, replay, chunk)
    children = np.asarray(next_graphs(graphs, actions))
    scorer = TrajectoryScorer(trainer.network.apply, params, graphs.shape[-1], trainer.cfg.max_parents)
    _, log_stop_child = scorer.log_edges(children)
    clipped = np.clip(delta, -trainer.cfg.huber_delta, trainer.cfg.huber_delta)
    return clipped.mean(), (delta > 0).mean(), (clipped * np.exp(log_stop_child)).mean()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0, help="the d=5 dataset (flow_diagnosis.py's seeds)")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--eval-at", type=int, nargs="+", default=[50, 100, 200, 400, 700, 1000, 3000, 6000])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    cfg = get_preset("quick", **overrides)
    print(f"# cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} jax={jax.__version__} overrides={overrides}")
    lattice = exact_flows.dag_lattice(5)
    likelihood, family = resolve_model("lingauss-diag")
    model = get_model(likelihood)
    prior = get_graph_prior(cfg.graph_prior, 5)
    ds, log_exact = d5_problem(args.seed, model, prior, lattice)
    _, log_stop_opt = exact_flows.optimal_flows(lattice, log_exact)
    forced = lattice.num_edges == 10
    trainer = MarginalRewardTrainer(cfg, model, prior, family, ds.train.astype(np.float32))
    state, done = trainer.init(args.train_seed), 0
    bands = "  ".join(f"stop-opt[{lo}-{hi}]" for lo, hi in _BANDS)
    print(f"  iter  complete:PT  rmse_PT  {bands}  push  share>0  push*P(stop|G')", flush=True)
    for target in sorted(args.eval_at):
        state, done, _ = train_to(trainer, state, done, target)
        r = diagnose(trainer, state, lattice, log_exact, ds.train)
        gap = r["log_stop"] - log_stop_opt
        levels = [gap[(lattice.num_edges >= lo) & (lattice.num_edges <= hi) & ~forced].mean() for lo, hi in _BANDS]
        push, positive, drift = replay_drift(trainer, state.params, state.replay)
        print(
            f"{done:6d} {r['complete_pt']:11.2e} {r['rmse_pt']:8.3f}  "
            + "  ".join(f"{v:14.1f}" for v in levels)
            + f"  {push:5.2f}  {positive:7.2f}  {drift:14.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
