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

from jspgfn.conjugate import sample_posterior_theta
from jspgfn.errors import JspgfnError
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
    """(DAG, None) from one bootstrap resample, or (None, why): "singular" when causal-learn could not
    analyse the resample, "no extension" when no learnt CPDAG had a consistent DAG extension."""
    rows = rng.integers(0, x.shape[0], size=x.shape[0])
    resample = x[rows]
    for _ in range(max_alpha_halvings + 1):
        try:
            directed, undirected = from_causallearn(learn_cpdag(kind, resample, alpha))
        except (np.linalg.LinAlgError, ValueError):  # singular resample (e.g. repeated rows)
            return None, "singular"
        dag = random_dag_extension(directed, undirected, rng)
        if dag is not None:
            return dag, None
        alpha /= 2
    return None, "no extension"


def failure_message(kind, source, failures, num_rows, max_alpha_halvings):
    """Why no DAG came out of the resamples (failures: count per reason of bootstrap_dag), and what to try."""
    total = sum(failures.values())
    if failures["singular"] >= failures["no extension"]:
        why = (
            f"{failures['singular']} of {total} bootstrap resamples could not be analysed (a singular correlation "
            f"matrix: too few distinct rows among the {num_rows}, or columns that are exact copies or linear "
            "combinations of others)"
        )
        advice = "give more rows, or drop the columns that duplicate others"
    else:
        why = f"{failures['no extension']} of {total} learnt CPDAGs had no consistent DAG extension"
        if kind == "b-pc":
            why += f" (conflicting orientations, even with alpha halved {max_alpha_halvings} times)"
            advice = "raise max_alpha_halvings or lower alpha (--param), or use b-ges"
        else:
            advice = "use b-pc or another method"
    return f"{kind}: no DAG from the bootstrap resamples of {source}: {why}; {advice}"


def run_bootstrap(kind, dataset, model, seed, *, num_bootstrap, alpha=0.01, max_alpha_halvings=0):
    """num_bootstrap DAGs from bootstrap resamples, each with theta ~ P(theta | G, D) on the full data."""
    require_observational(kind, dataset)
    if num_bootstrap < 1:
        raise JspgfnError(f"{kind}: num_bootstrap must be >= 1, got {num_bootstrap}")
    x = check_finite_data(dataset)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    graphs, failures = [], {"singular": 0, "no extension": 0}
    while len(graphs) < num_bootstrap:
        dag, why = bootstrap_dag(kind, x, rng, alpha, max_alpha_halvings)
        if dag is None:
            failures[why] += 1
            if sum(failures.values()) > MAX_REDRAWS * max(1, len(graphs)):
                raise JspgfnError(failure_message(kind, dataset.source, failures, x.shape[0], max_alpha_halvings))
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
        extra_metadata={"redrawn_resamples": sum(failures.values())},
    )
