"""Is the stop head's dynamic range what keeps JSP-GFN from the posterior beyond d=5? An oracle test.

With the paper's parametrisation the network's stop logit must track log R(G) - log F(G) over thousands of
nats (log R runs from about -1,300 at the empty graph to +800 at the posterior's graphs on a d=10 dataset
with obs_var 0.01 and N=100), to within a nat between sibling states, since every transition's condition
reads log P_F(G' | G) off the difference of two such values. This script adds the EXACT log marginal
likelihood log P(D | G) (linear Gaussian, theta integrated out; no gradient) to the stop logit, so the
network has to learn only the rest (about -log F(G), a far smaller range), then trains and compares the
edge marginals with the exact ones as benchmarks/accuracy_exact_edges.py does. An oracle: it uses the
closed form that JSP-GFN exists to avoid, to test the diagnosis, not as a method.

  .venv/bin/python benchmarks/stop_offset_oracle.py /tmp/w/d10er2/0=/tmp/w/d10er2/exact0.npz --eval-at 3000 6000
"""

import argparse
import dataclasses
import functools
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
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.sample import sample_graphs  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402
from jspgfn_baselines.shared.vbg import log_marginal_likelihood  # noqa: E402


@dataclasses.dataclass(frozen=True)
class _Offset:
    """A transformed network whose stop logit is shifted by weight * (log P(D | G) - log P(D | empty))."""

    base: object
    xtx: np.ndarray
    num_rows: int
    obs_var: float
    prior_var: float
    weight: float

    def init(self, *args, **kwargs):
        return self.base.init(*args, **kwargs)

    def apply(self, params, adjacency, edge_rows=None):
        out = self.base.apply(params, adjacency, edge_rows)
        xtx = jnp.asarray(self.xtx, jnp.float32)
        score = functools.partial(
            log_marginal_likelihood,
            xtx=xtx,
            n=self.num_rows,
            obs_var=self.obs_var,
            prior_mean=0.0,
            prior_var=self.prior_var,
        )
        empty = score(jnp.zeros((1,) + adjacency.shape[1:], jnp.uint8))
        offset = jax.lax.stop_gradient(score(adjacency) - empty)
        return {**out, "stop_logit": out["stop_logit"] + self.weight * offset}


class OracleTrainer(Trainer):
    weight: float = 1.0

    @functools.cached_property
    def network(self):
        x = np.asarray(self.data, np.float64)
        return _Offset(
            super().network,
            (x.T @ x).astype(np.float32),
            x.shape[0],
            self.model.obs_var,
            self.model.prior_var,
            self.weight,
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weight", type=float, default=1.0, help="0 gives the paper's parametrisation")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--eval-at", type=int, nargs="+", default=None)
    args = parser.parse_args()
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    eval_at = sorted(set(args.eval_at or [get_preset(args.preset).num_iterations]))
    cfg = get_preset(args.preset, **{"num_iterations": eval_at[-1], **overrides})
    OracleTrainer.weight = args.weight
    print(
        f"# cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} jax={jax.__version__} preset={args.preset} "
        f"weight={args.weight} num_iterations={cfg.num_iterations} overrides={overrides}",
        flush=True,
    )
    print("dataset  iter  train_s  edge_rmse  pearson  edges  exact_edges", flush=True)
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        ds, exact = load_dataset(data_dir), load_exact(exact_path)
        model = get_model("lingauss")
        d = ds.train.shape[1]
        trainer = OracleTrainer(cfg, model, get_graph_prior(cfg.graph_prior, d), "diag", ds.train.astype(np.float32))
        state = trainer.init(args.seed)
        done, elapsed = 0, 0.0
        for target in eval_at:
            state, done, seconds = train_to(trainer, state, done, target)
            elapsed += seconds
            graphs = sample_graphs(
                trainer.network.apply, state.params, jax.random.PRNGKey(123), 1000, d, cfg.max_parents
            )
            rmse, r = compare(graphs.mean(0), exact.edge)
            edges, exact_edges = float(graphs.sum(axis=(1, 2)).mean()), float(exact.edge.sum())
            print(
                f"{data_dir}  {done:6d} {elapsed:8.0f} {rmse:9.3f} {r:8.3f} {edges:6.1f} {exact_edges:8.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
