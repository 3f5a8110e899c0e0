"""JSP-GFN with its own theta-free score of G added to its stop logit (the library's option `stop_score_offset`,
beyond the paper, jspgfn.gflownet.score_offset), measured against the exact posterior.

The oracle measured the exact score log P(D | G) - log P(D | empty) in the stop logit better than the plain
oracle on d=10 ER2 1 over 30,000 iterations (docs/jspgfn-beyond-d5.md, twenty-first session): the network
then learns about -log F(G), smooth between neighbours, rather than -log P(stop | G), which jumps by hundreds
of nats per needed edge. JSP-GFN has no exact score, but its own q(theta | G) gives one at no extra network
call, score(G) = log R(G, mu_G) - log q(mu_G | G) with mu_G the mean of q(theta | G) (score_offset.py). This
script runs accuracy_seeds.py with `--set stop_score_offset=WEIGHT` and, after each evaluation, prints how the
score tracks the exact one, log P(D | G) + log P(G), on the sampler's graphs and on the exact posterior's: the
mean of each over the distinct graphs, and the error's mean and standard deviation (the offset steers the stop
only as well as this score ranks the graphs). With `--set stop_score_closed_form=true` the offset is the closed-form
score instead (the library's float32 one, whose error against the float64 one the report adds). Linear Gaussian
model:

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 gpu_data/d10er2/1=gpu_data/d10er2/exact1.npz \
      --seeds 0 --eval-at 6000 15000 30000 [--set stop_target_tau=0.1 --set theta_elbo=1]

Every argument but --weight, --d5 and --no-report is accuracy_seeds.py's (whose table this prints; several
datasets train together, each run's score on its own data). --d5 trains on flow_diagnosis.py's d=5 datasets
instead and prints its exact diagnosis (edge RMSE, complete-DAG mass of P_T):

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 --d5 --seeds 0 1 2 3 4 --eval-at 6000
"""

import argparse
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import accuracy_seeds  # noqa: E402
import family_floor  # noqa: E402
import flow_diagnosis  # noqa: E402
from jspgfn.conjugate import log_marginal_likelihood_graphs  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402


class ReportingTrainer(Trainer):
    """The library's Trainer, with the score's report that accuracy_seeds.py calls after each evaluation."""

    def report(self, state, graphs, exact, data):
        """Print the theta-free score's error (beside, for the diagonal family, its floor: minus the summed
        mean-field gap, family_floor.py, what the error would be at q's best; the rest is q's training) and, with
        stop_score_closed_form, the error of the closed-form float32 score the offset used, against the float64
        exact score on the distinct graphs among `graphs` uint8 [K, d, d] (the sampler's)
        and among the exact posterior's samples (exact: accuracy_exact_edges.load_exact), for the run (Trainer
        state) on data float32 [N, d]."""
        params = state.params
        apply = jax.jit(self.network_on(data, None).apply)
        for name, sample in (("sampler", graphs), ("exact posterior", exact.graphs)):
            distinct = np.unique(np.asarray(sample, np.uint8), axis=0)
            out = apply(params, jnp.asarray(distinct))
            true = log_marginal_likelihood_graphs(self.model, data, distinct, graph_prior=self.graph_prior)
            error = np.asarray(out["theta_free_score"], np.float64) - true
            line = (
                f"#   {name}'s {len(distinct)} distinct graphs ({distinct.sum(axis=(1, 2)).mean():.1f} edges): "
                f"exact score {true.mean():.1f}; theta-free score's error {error.mean():.1f} +- {error.std():.1f}"
            )
            if self.family == "diag":
                floor = -family_floor.mean_field_gaps_of(self.model, data, distinct)
                line += f" (the diagonal family's floor {floor.mean():.1f} +- {floor.std():.1f})"
            if self.cfg.stop_score_closed_form:
                closed = np.asarray(out["stop_score"], np.float64) - true
                line += f"; the offset's closed-form score's {closed.mean():.2f} +- {closed.std():.2f}"
            print(line, flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], add_help=False)
    parser.add_argument("--weight", type=float, default=1.0, help="the offset's weight (0: the library's JSP-GFN)")
    parser.add_argument("--d5", action="store_true", help="flow_diagnosis.py's d=5 datasets, diagnosed exactly")
    parser.add_argument("--no-report", action="store_true", help="no score report (accuracy_seeds.py's table only)")
    args, rest = parser.parse_known_args(argv)
    rest = [*rest, "--set", f"stop_score_offset={args.weight}"]
    note = f"; score stop offset, weight={args.weight}"
    if args.d5:
        flow_diagnosis.main(Trainer, rest, note=note)
        return
    print(f"#{note[1:]}", flush=True)
    report = args.weight > 0 and not args.no_report
    accuracy_seeds.main(rest, trainer_class=ReportingTrainer if report else Trainer)


if __name__ == "__main__":
    main()
