"""JSP-GFN's edge marginals against the exact ones (subset DP, `jspgfn exact`) as training goes on.

For each dataset folder (with its exact file, written by `jspgfn exact DATA --out EXACT`), trains
JSP-GFN (linear Gaussian) and, at each --eval-at iteration, samples 1,000 graphs and prints the
edge RMSE and Pearson r against the exact edge marginals, the mean number of edges per sample beside
the exact posterior's expectation, and the training seconds so far (sampling excluded): the curve of
accuracy against training cost. Works at any d the DP handles (d <= 20).

  jspgfn exact results/quick/medium_graphs_d10_er1/data/0 --out /tmp/e0.npz
  .venv/bin/python benchmarks/accuracy_exact_edges.py results/quick/medium_graphs_d10_er1/data/0=/tmp/e0.npz \
      --eval-at 6000 15000 30000 [--set huber_delta=10]
"""

import argparse
import os
import sys
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _training import train_to  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact import load_exact  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.sample import sample_graphs  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402


def compare(approx, exact):
    off = ~np.eye(exact.shape[0], dtype=bool)
    a, e = approx[off], exact[off]
    return float(np.sqrt(np.mean((a - e) ** 2))), float(np.corrcoef(a, e)[0, 1])


def exact_when_ready(exact_path):
    """The exact posterior of `jspgfn exact` at exact_path, or None while the file does not exist yet (a run can
    start while `jspgfn exact` works)."""
    return load_exact(exact_path) if Path(exact_path).exists() else None


def main(trainer_class=Trainer, argv=None, note=""):
    """trainer_class: Trainer or a subclass (benchmarks/stop_offset_oracle.py); note: added to the header."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT", help="dataset folder = its exact .npz")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss-diag")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--num-samples", type=int, default=1000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--eval-at", type=int, nargs="+", default=None)
    args = parser.parse_args(argv)
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    eval_at = sorted(set(args.eval_at or [get_preset(args.preset).num_iterations]))
    # the schedules (lr decay, exploration) span the last evaluation point
    cfg = get_preset(args.preset, **{"num_iterations": eval_at[-1], **overrides})
    print(
        f"# cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} jax={jax.__version__} preset={args.preset} "
        f"model={args.model} num_iterations={cfg.num_iterations} overrides={overrides}{note}",
        flush=True,
    )
    print("dataset  iter  train_s  edge_rmse  pearson  edges  exact_edges", flush=True)
    final = []
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        ds = load_dataset(data_dir)
        exact = None  # read at the first evaluation where it exists: a run can start while `jspgfn exact` works
        likelihood, family = resolve_model(args.model)
        model = get_model(likelihood)
        d = ds.train.shape[1]
        prior = get_graph_prior(cfg.graph_prior, d)
        trainer = trainer_class(cfg, model, prior, family, ds.train.astype(np.float32))
        state = trainer.init(args.seed)
        done, elapsed = 0, 0.0
        for target in eval_at:
            state, done, seconds = train_to(trainer, state, done, target)
            elapsed += seconds
            graphs = sample_graphs(
                trainer.network.apply, state.params, jax.random.PRNGKey(123), args.num_samples, d, cfg.max_parents
            )
            edges = float(graphs.sum(axis=(1, 2)).mean())
            if exact is None:
                exact = exact_when_ready(exact_path)
            if exact is None:  # `jspgfn exact` still at work: edges only
                print(f"{data_dir}  {done:6d} {elapsed:8.0f}  (no {exact_path} yet)  {edges:6.1f}", flush=True)
                continue
            exact_edges = float(exact.edge.sum())
            rmse, r = compare(graphs.mean(0), exact.edge)
            print(
                f"{data_dir}  {done:6d} {elapsed:8.0f} {rmse:9.3f} {r:8.3f} {edges:6.1f} {exact_edges:8.1f}", flush=True
            )
        if exact is None:
            raise SystemExit(f"{exact_path} never appeared: no edge RMSE for {data_dir}")
        final.append((rmse, edges / exact_edges))
    rm = np.array([f[0] for f in final])
    ratio = np.array([f[1] for f in final])
    print(f"mean edge RMSE {rm.mean():.3f} (max {rm.max():.3f}); edges / exact edges {ratio.mean():.2f}", flush=True)


if __name__ == "__main__":
    main()
