"""The d=3 sampler's exact P_T against the exact posterior and the diagonal family's target, for training options.

  .venv/bin/python benchmarks/exact_pt_d3.py "" "last_step_closed_form=true"

Each argument is one run: comma-separated KEY=VALUE training options over tests/test_gflownet_posterior.py's CONFIG,
on that test's data (er1, d=3, N=20, seed 2); "" is the paper's loss. Prints the max edge-marginal error of the
sampler's exact P_T (exact_flows.terminating_log_probs over all 25 DAGs, no sampling) against the exact posterior and
against the diagonal family's target P_mf(G) proportional to P(D | G) exp(-KL gap of the best diagonal q), and the
twelve likeliest graphs under each (forty-third session, docs/jspgfn-beyond-d5.md).
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "tests"))

from flow_diagnosis import edge_marginals, mean_field_gap, normalise  # noqa: E402
from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.generate import generate  # noqa: E402
from jspgfn.gflownet import exact_flows  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.train import train  # noqa: E402
from jspgfn.models import get_model  # noqa: E402
from test_gflownet_posterior import CONFIG  # noqa: E402


def main(runs):
    ds = generate("er1", "linear", 3, 20, 10, 2)
    lattice = exact_flows.dag_lattice(3)
    model = get_model("lingauss", obs_var=0.01)
    log_r = log_marginal_likelihood_graphs(model, ds.train, lattice.graphs)
    gaps = mean_field_gap(model, ds.train, lattice.graphs)
    log_exact, log_mf = normalise(log_r), normalise(log_r - gaps)
    off = ~np.eye(3, dtype=bool)

    def max_error(log_p, log_q):
        return float(np.abs(edge_marginals(lattice, log_p) - edge_marginals(lattice, log_q))[off].max())

    print(f"diagonal family's target: max error against exact {max_error(log_mf, log_exact):.3f}")
    for run in runs:
        options = dict(CONFIG)
        for pair in filter(None, run.split(",")):
            key, value = pair.split("=", 1)
            options[key] = parse_value(value)
        with tempfile.TemporaryDirectory() as tmp:
            trainer, state, _ = train(ds, "lingauss-diag", "quick", 0, f"{tmp}/run", overrides=options, progress=False)
        log_edges, log_stop = TrajectoryScorer(trainer.network.apply, state.params, 3).log_edges(lattice.graphs)
        log_pt, _ = exact_flows.terminating_log_probs(lattice, log_stop, log_edges.reshape(len(log_stop), -1))
        print(f"{run or 'paper'}: P_T max error against exact {max_error(log_pt, log_exact):.3f}, "
              f"against the family's target {max_error(log_pt, log_mf):.3f}")  # fmt: skip
        for k in np.argsort(-log_exact)[:12]:
            print(f"  {lattice.num_edges[k]} edges: exact {np.exp(log_exact[k]):.4f} family's target "
                  f"{np.exp(log_mf[k]):.4f} P_T {np.exp(log_pt[k]):.4f} (gap {gaps[k]:.2f} nats)")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:] or [""])
