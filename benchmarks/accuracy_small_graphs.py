"""Accuracy of JSP-GFN against the exact posterior on d=5 ER1 linear-Gaussian data.

Prints, per seed: training time, iterations, edge/path/Markov-feature RMSE and
Pearson r against the exact posterior, and the theta cross-entropy
-E[log P(theta | G, D)] under the GFlowNet's samples (and the same quantity for
exact posterior samples, as a reference).

  .venv/bin/python benchmarks/accuracy_small_graphs.py --preset quick --seeds 0 1 2
  .venv/bin/python benchmarks/accuracy_small_graphs.py --set learning_rate=3e-4 --eval-every 500
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _exact_linear import exact_posterior  # noqa: E402
from jspgfn.conjugate import log_posterior_theta, sample_posterior_theta  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact import compute_exact_posterior  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.sample import sample_joint  # noqa: E402
from jspgfn.gflownet.train import (
    enable_compilation_cache,  # noqa: E402
    resolve_model,  # noqa: E402
)
from jspgfn.graphs import markov_blanket, transitive_closure  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402


def features(graphs):
    return {
        "edge": graphs.mean(0),
        "path": transitive_closure(graphs).mean(0),
        "markov": markov_blanket(graphs).mean(0),
    }


def compare(approx, exact):
    d = exact.shape[0]
    off = ~np.eye(d, dtype=bool)
    a, e = approx[off], exact[off]
    return float(np.sqrt(np.mean((a - e) ** 2))), float(np.corrcoef(a, e)[0, 1])


def exact_reference(ds, model, prior):
    """Exact features from jspgfn.exact (cross-checked against benchmarks/_exact_linear.py), and the
    theta cross-entropy of samples of the exact posterior: the floor to compare JSP-GFN's with."""
    _, _, mine = exact_posterior(ds.train, model.obs_var, model.prior_var, prior.log_edge_weight)
    ref = compute_exact_posterior(ds, model, prior)
    gap = max(float(np.abs(getattr(ref, k) - mine[k]).max()) for k in ("edge", "path", "markov"))
    assert gap < 1e-6, f"jspgfn.exact and benchmarks/_exact_linear.py disagree by {gap}"
    feats = {"edge": ref.edge, "path": ref.path, "markov": ref.markov}
    rng = np.random.default_rng(0)
    p = np.exp(ref.log_probs - ref.log_probs.max())
    g = ref.graphs[rng.choice(len(p), 4000, p=p / p.sum())]
    t = sample_posterior_theta(model, ds.train, g, rng)
    feats["theta_xent_exact"] = -float(np.mean(log_posterior_theta(model, ds.train, g, t)))
    return feats, lambda g, t: log_posterior_theta(model, ds.train, g, t)


def evaluate(trainer, state, x, exact_feats, log_post, num=4000, seed=123):
    graphs, theta = sample_joint(
        trainer.network.apply,
        trainer.model,
        state.params,
        jax.random.PRNGKey(seed),
        num,
        x.shape[1],
        trainer.cfg.max_parents,
    )
    res = {}
    for name, value in features(graphs).items():
        res[name] = compare(value, exact_feats[name])
    res["theta_xent"] = -float(np.mean(log_post(graphs, theta)))
    return res


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss-diag")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--eval-every", type=int, default=0, help="also evaluate every this many iterations")
    args = parser.parse_args()
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    cfg = get_preset(args.preset, **overrides)
    print(
        f"# cpu cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} preset={args.preset} "
        f"model={args.model} overrides={overrides}",
        flush=True,
    )
    rows = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as tmp:
            from jspgfn.cli import main as cli_main

            cli_main(
                [
                    "generate",
                    "--graph",
                    "er1",
                    "--model",
                    "linear",
                    "--d",
                    "5",
                    "--n",
                    "100",
                    "--seed",
                    str(seed),
                    "--out",
                    f"{tmp}/data",
                ]
            )
            ds = load_dataset(f"{tmp}/data")
        x = ds.train
        likelihood, family = resolve_model(args.model)
        model = get_model(likelihood)
        exact_feats, log_post = exact_reference(ds, model, get_graph_prior(cfg.graph_prior, 5))
        trainer = Trainer(cfg, model, get_graph_prior(cfg.graph_prior, 5), family, x.astype(np.float32))
        start = time.time()
        state = trainer.init(args.train_seed)
        done, chunk = 0, cfg.iterations_per_dispatch
        while done < cfg.num_iterations:
            n = min(chunk, cfg.num_iterations - done)
            state, metrics = trainer.run_chunk(state, n)
            done += n
            if args.eval_every and done % args.eval_every == 0 and done < cfg.num_iterations:
                jax.block_until_ready(state)
                el = time.time() - start
                r = evaluate(trainer, state, x, exact_feats, log_post)
                print(
                    f"  seed {seed} it {done} t={el:.0f}s loss={float(metrics['loss']):.3f} "
                    f"edge rmse={r['edge'][0]:.3f} r={r['edge'][1]:.3f} xent={r['theta_xent']:.2f}",
                    flush=True,
                )
                start += time.time() - el - start  # exclude evaluation time
        jax.block_until_ready(state)
        elapsed = time.time() - start
        r = evaluate(trainer, state, x, exact_feats, log_post)
        rows.append((seed, elapsed, r))
        print(
            f"seed {seed}: train {elapsed:.0f}s, {cfg.num_iterations} it | edge RMSE {r['edge'][0]:.3f} "
            f"r {r['edge'][1]:.3f} | path RMSE {r['path'][0]:.3f} r {r['path'][1]:.3f} | markov RMSE "
            f"{r['markov'][0]:.3f} r {r['markov'][1]:.3f} | theta xent {r['theta_xent']:.2f} "
            f"(exact posterior samples: {exact_feats.get('theta_xent_exact', float('nan')):.2f})",
            flush=True,
        )
    for key in ("edge", "path", "markov"):
        rm = np.array([row[2][key][0] for row in rows])
        pr = np.array([row[2][key][1] for row in rows])
        print(f"mean {key}: RMSE {rm.mean():.3f} (max {rm.max():.3f}), Pearson {pr.mean():.3f} (min {pr.min():.3f})")
    print(f"mean train seconds {np.mean([row[1] for row in rows]):.0f}")


if __name__ == "__main__":
    main()
