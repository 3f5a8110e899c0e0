"""B-PC* and B-GES*: bootstrap structure learning with exact parameter posteriors.

For each of `num_bootstrap` resamples of the rows (with replacement), learn a
CPDAG with causal-learn (PC with Fisher-z tests, or GES with the BIC score),
draw a random consistent DAG extension, and draw theta ~ P(theta | G, D) from
the closed-form linear-Gaussian posterior on the full data (appendix D). As in
the DiBS paper, PC retries with alpha / 2 when its CPDAG has no consistent
extension; a resample whose graph still cannot be extended is redrawn.
"""

import time

import numpy as np

from jspgfn.errors import JspgfnError
from jspgfn.exact import sample_posterior_theta
from jspgfn_baselines.shared.common import check_finite_data, make_samples, require_observational
from jspgfn_baselines.shared.dag_extension import from_causallearn, random_dag_extension

MAX_REDRAWS = 20


def learn_cpdag(kind, x, alpha=0.01):
    """causal-learn endpoint matrix of the CPDAG learnt from x [N, d]."""
    import warnings

    if x.shape[1] == 1:  # the empty graph is the only one; causal-learn's GES fails on a single column
        return np.zeros((1, 1), dtype=int)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "b-pc":
            from causallearn.search.ConstraintBased.PC import pc
            from causallearn.utils.cit import fisherz

            return pc(x, alpha, fisherz, stable=True, show_progress=False, verbose=False).G.graph
        from causallearn.search.ScoreBased.GES import ges

        return ges(x, score_func="local_score_BIC")["G"].graph


def bootstrap_dag(kind, x, rng, alpha=0.01, max_alpha_halvings=0):
    """One DAG from one bootstrap resample, or None if no extendable CPDAG was found."""
    rows = rng.integers(0, x.shape[0], size=x.shape[0])
    resample = x[rows]
    for _ in range(max_alpha_halvings + 1):
        try:
            directed, undirected = from_causallearn(learn_cpdag(kind, resample, alpha))
        except (np.linalg.LinAlgError, ValueError):  # singular resample (e.g. repeated rows)
            return None
        dag = random_dag_extension(directed, undirected, rng)
        if dag is not None:
            return dag
        alpha /= 2
    return None


def run_bootstrap(kind, dataset, model, seed, *, num_bootstrap, alpha=0.01, max_alpha_halvings=0):
    """num_bootstrap DAGs from bootstrap resamples, each with theta ~ P(theta | G, D) on the full data."""
    require_observational(kind, dataset)
    if num_bootstrap < 1:
        raise JspgfnError(f"{kind}: num_bootstrap must be >= 1, got {num_bootstrap}")
    x = check_finite_data(dataset)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    graphs, redraws = [], 0
    while len(graphs) < num_bootstrap:
        dag = bootstrap_dag(kind, x, rng, alpha, max_alpha_halvings)
        if dag is None:
            redraws += 1
            if redraws > MAX_REDRAWS * max(1, len(graphs)):
                raise JspgfnError(f"{kind}: could not extend the learnt CPDAGs of {dataset.source} to DAGs")
            continue
        graphs.append(dag)
    graphs = np.stack(graphs)
    theta = sample_posterior_theta(model, x, graphs, rng)
    return make_samples(
        kind,
        model,
        seed,
        graphs,
        theta,
        time.perf_counter() - start,
        dataset,
        extra_metadata={"redrawn_resamples": redraws},
    )
