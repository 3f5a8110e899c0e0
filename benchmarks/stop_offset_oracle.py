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

Every option of accuracy_exact_edges.py applies (--set, --seed, --preset ...); --weight scales the offset.
"""

import argparse
import dataclasses
import functools
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_exact_edges  # noqa: E402
from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
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
    empty_score: float  # log P(D | base graph), computed once (the empty graph unless OracleTrainer.base_graph)

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
        log_marginal = jax.lax.stop_gradient(score(adjacency))  # [B], also returned (marginal_reward_oracle.py)
        offset = log_marginal - self.empty_score
        return {**out, "stop_logit": out["stop_logit"] + self.weight * offset, "log_marginal": log_marginal}


class OracleTrainer(Trainer):
    weight: float = 1.0
    base_graph = None  # uint8 [d, d]: the offset is log P(D | G) - log P(D | base graph) (None: the empty graph)

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
            log_marginal_likelihood_graphs(
                self.model, x, np.zeros((x.shape[1],) * 2, np.uint8) if self.base_graph is None else self.base_graph
            ),
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--weight", type=float, default=1.0, help="0 gives the paper's parametrisation")
    args, rest = parser.parse_known_args()
    OracleTrainer.weight = args.weight
    accuracy_exact_edges.main(OracleTrainer, rest, note=f" oracle stop offset, weight={args.weight}")


if __name__ == "__main__":
    main()
