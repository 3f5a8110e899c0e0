"""Exact edge posteriors and exact DAG sampling by dynamic programming over node subsets (d <= ~15).

The posterior over DAGs is structure-modular: P(G | D) is proportional to prod_j beta_j(Pa_j) with
beta_j(Pa) = exp(score_j(Pa)), score_j(Pa) = log P(x_j | x_Pa) + log_edge_weight * |Pa| (the uniform,
Erdos-Renyi and edge priors of models/graph_prior.py), beta = 0 for excluded parent sets (max_parents).
Sets of nodes are int bitmasks (bit i = node i); parent codes as in conjugate.parent_codes.

Quantities (all kept as logarithms; sums with alternating signs are scaled by their largest term):
  alpha_j(U) = sum_{Pa subset of U} beta_j(Pa)                                  (zeta transform)
  g(S) = weight of the DAGs on S                     (Robinson's recursion weighted, Tian & He 2009):
       = sum_{nonempty T subset of S} (-1)^(|T|+1) g(S \\ T) prod_{j in T} alpha_j(S \\ T),   g({}) = 1
    (inclusion-exclusion over a set T of sinks; Z = g(V) = P(D) up to the prior's normaliser);
  b(S) = weight of the DAGs on V \\ S whose nodes may also take parents in S
       = sum_{nonempty T subset of V \\ S} (-1)^(|T|+1) b(S | T) prod_{j in T} alpha_j(S),   b(V) = 1
    (inclusion-exclusion over a set T of sources of the completion); b({}) = Z.
Edge posteriors (the forward-backward form of Tian & He 2009, Sec. 3): with ND(v) the non-descendants
of v, the graph splits into a DAG on S = ND(v), Pa_v subset of S, and the descendants, each of which
descends from v; inclusion-exclusion over the sources of the completion gives
  w_v(S) = P(ND(v) = S | D) = sum_{T subset of V \\ S, v in T} (-1)^(|T|+1) g(S) prod_{j in T} alpha_j(S) b(S | T) / Z,
  P(u -> v | D) = sum_{S: u in S, v not in S} w_v(S) (1 - alpha_v(S \\ {u}) / alpha_v(S)).
Cost O(d 3^d) time, O(d 2^d) memory beyond the local scores. The sums over T with signs lose at most
about log10(3^d) digits relative to Z (the absolute terms count each DAG at most 3^d times).

Sets of nodes and their subsets: subsets.py; exact samples from these tables: exact_sampler.py; the
exact.npz file beyond d = 5: exact_dp_posterior.py; the cost estimate and refusal: exact_dp_cost.py.
"""

import numbers
from typing import NamedTuple

import numpy as np

from jspgfn.conjugate import _code_masks, _log_marginals, _node_gaussians, check_linear, node_statistics
from jspgfn.errors import JspgfnError
from jspgfn.subsets import chunks, member_bits, parity_signs, sets_of_size, signed_logsumexp, subset_masks, subset_sums

MAX_DP_VARIABLES = 20


def dp_terms(d):
    """Terms the forward and backward passes read (what subset_posterior's progress counts):
    sum_{k >= 1} C(d, k) 2^k + sum_{k < d} C(d, k) 2^(d-k) = 2 (3^d - 1)."""
    return 2 * (3**d - 1)


# ------------------------------------------------------------ local scores


def local_scores(model, x, interventions=None, max_parents=None, graph_prior=None, batch_size=4096):
    """log beta_j(Pa) for every node j and parent code: float64 [d, 2^d].

    log P(x_j | x_Pa) (conjugate.py's closed form, theta integrated out) + graph_prior.log_edge_weight * |Pa|
    (uniform when graph_prior is None); -inf where Pa contains j or has more than max_parents nodes.
    Computed in batches of at most batch_size (node, parent set) pairs, one parent-set size at a time,
    so only the allowed sizes are evaluated and memory stays O(batch_size d^2).
    Raises JspgfnError when a score is not finite (data too large or badly scaled for float64).
    """
    check_linear(model)
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[1]
    if max_parents is None:
        max_parents = d - 1
    if isinstance(max_parents, bool) or not isinstance(max_parents, numbers.Integral) or max_parents < 0:
        raise JspgfnError(f"max_parents must be an integer >= 0, got {max_parents!r}")
    weight = 0.0 if graph_prior is None else float(graph_prior.log_edge_weight)
    stats = node_statistics(x, interventions)
    table = np.full((d, 1 << d), -np.inf)
    for k in range(min(int(max_parents), d - 1) + 1):
        codes = sets_of_size(d, k)
        nodes, index = np.nonzero((codes[None, :] >> np.arange(d)[:, None]) & 1 == 0)
        codes = codes[index]
        for start in range(0, len(nodes), batch_size):
            n, c = nodes[start : start + batch_size], codes[start : start + batch_size]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # checked below
                try:
                    gaussians = _node_gaussians(model, stats, n, _code_masks(c, d))
                    values = _log_marginals(model, stats, n, gaussians)
                except np.linalg.LinAlgError:
                    values = np.full(len(n), np.nan)
            if not np.all(np.isfinite(values)):
                raise JspgfnError(
                    f"a local score is not finite for this data with obs_var={model.obs_var}, "
                    f"prior_var={model.prior_var}; rescale the data"
                )
            table[n, c] = values + weight * k
    return table


# ------------------------------------------------------------ the dynamic program


class SubsetPosterior(NamedTuple):
    """Result of subset_posterior for d nodes (all logs natural).

    scores [d, 2^d]: log beta_j(Pa); log_alpha [d, 2^d]: log alpha_j(U);
    log_forward [2^d]: log g(S); log_backward [2^d]: log b(S);
    nondescendants [d, 2^d]: w_v(S) = P(ND(v) = S | D) (0 where v in S), each row sums to 1;
    edge [d, d]: P(i -> j | D); log_z: log Z = log sum_G prod_j beta_j(Pa_j).
    """

    scores: np.ndarray
    log_alpha: np.ndarray
    log_forward: np.ndarray
    log_backward: np.ndarray
    nondescendants: np.ndarray
    edge: np.ndarray
    log_z: float


def log_zeta(scores):
    """log alpha_j(U) = log sum_{Pa subset of U} exp(scores[j, Pa]): [d, 2^d] -> [d, 2^d]."""
    log_alpha = np.array(scores, dtype=np.float64)
    d = log_alpha.shape[0]
    for i in range(d):
        view = log_alpha.reshape(d, -1, 2, 1 << i)  # [d, high bits, bit i, low bits]
        view[:, :, 1, :] = np.logaddexp(view[:, :, 1, :], view[:, :, 0, :])
    return log_alpha


def log_forward(log_alpha, progress=None):
    """log g(S) for every S (DAGs on S, weighted): log_alpha [d, 2^d] -> [2^d]; log g(V) = log Z.

    Level |S| = k reads the 2^k subsets U = S \\ T of each S, one node of S per pass, CHUNK_TERMS
    terms at a time. progress(terms), if given, is called with the number of terms done.
    """
    d = log_alpha.shape[0]
    log_g = np.full(1 << d, -np.inf)
    log_g[0] = 0.0
    for k in range(1, d + 1):
        signs = -parity_signs(k)[:-1] * (-1.0) ** k  # (-1)^(|T| + 1), |T| = k - popcount(t)
        for rows in chunks(sets_of_size(d, k), 1 << k):
            bits = member_bits(rows, d, inside=True)  # [n, k]
            below = subset_masks(bits)[:, :-1]  # [n, 2^k - 1]: U = S \ T with T nonempty
            logs = log_g[below]
            for i in range(k):
                node = bits[:, i : i + 1]
                sink = (below >> node) & 1 == 0  # node in T
                logs += np.where(sink, log_alpha[node, below], 0.0)
            log_g[rows] = signed_logsumexp(logs, signs)
            if progress is not None:
                progress(len(rows) << k)
    return log_g


def log_backward(log_alpha, log_g, progress=None):
    """log b(S) for every S, and w_v(S) = P(ND(v) = S | D).

    log_alpha [d, 2^d], log_g [2^d] -> (log_b [2^d], nondescendants [d, 2^d]).
    Level |S| = k reads the 2^(d-k) subsets T of V \\ S of each S (subset sums of alpha_j(S), j in T),
    CHUNK_TERMS terms at a time. progress(terms), if given, is called with the number of terms done.
    """
    d = log_alpha.shape[0]
    full = (1 << d) - 1
    log_z = log_g[full]
    log_b = np.full(1 << d, -np.inf)
    log_b[full] = 0.0
    nondescendants = np.zeros((d, 1 << d))
    for k in range(d - 1, -1, -1):
        m = d - k
        signs = -parity_signs(m)[1:]  # (-1)^(|T| + 1)
        member = ((np.arange(1, 1 << m)[:, None] >> np.arange(m)) & 1).astype(np.float64)  # [2^m - 1, m]
        for rows in chunks(sets_of_size(d, k), 1 << m):
            missing = member_bits(rows, d, inside=False)  # [n, m]
            added = subset_masks(missing)[:, 1:]  # T nonempty
            logs = subset_sums(log_alpha[missing, rows[:, None]])[:, 1:] + log_b[rows[:, None] | added]
            log_b[rows] = signed_logsumexp(logs, signs)
            terms = signs * np.exp(logs + (log_g[rows] - log_z)[:, None])  # [n, 2^m - 1]
            nondescendants[missing, rows[:, None]] = terms @ member
            if progress is not None:
                progress(len(rows) << m)
    return log_b, nondescendants


def edge_from_nondescendants(nondescendants, log_alpha):
    """P(u -> v) = sum_{S ni u} w_v(S) (1 - alpha_v(S \\ u) / alpha_v(S)): [d, 2^d] x2 -> [d, d] in [0, 1]."""
    d = log_alpha.shape[0]
    masks = np.arange(1 << d, dtype=np.int64)
    edge = np.zeros((d, d))
    for u in range(d):
        sets = masks[(masks >> u) & 1 == 1]
        with_u = -np.expm1(log_alpha[:, sets ^ (1 << u)] - log_alpha[:, sets])  # [d, n] P(u in Pa_v | Pa_v subset S)
        edge[u] = np.sum(nondescendants[:, sets] * with_u, axis=1)
    np.fill_diagonal(edge, 0.0)
    return np.clip(edge, 0.0, 1.0)


def subset_posterior(scores, progress=None):
    """The exact posterior quantities of a structure-modular score table [d, 2^d] -> SubsetPosterior.

    scores[j, c] = log beta_j(parent code c), -inf where excluded (the empty set must be allowed).
    progress(terms), if given, is called as the passes go (dp_terms(d) in all).
    """
    scores = np.asarray(scores, dtype=np.float64)
    d = scores.shape[0]
    if scores.shape != (d, 1 << d):
        raise JspgfnError(f"scores must have shape [d, 2^d], got {scores.shape}")
    if d > MAX_DP_VARIABLES:
        raise JspgfnError(f"the subset dynamic program is limited to d <= {MAX_DP_VARIABLES}, got d={d}")
    if not np.all(np.isfinite(scores[:, 0])):
        raise JspgfnError("every node needs a finite score for the empty parent set")
    self_loops = (np.arange(1 << d)[None, :] >> np.arange(d)[:, None]) & 1 == 1
    if np.any(scores[self_loops] > -np.inf) or np.any(np.isnan(scores)) or np.any(scores == np.inf):
        raise JspgfnError("scores must be finite or -inf, and -inf wherever a node is its own parent")
    log_alpha = log_zeta(scores)
    log_g = log_forward(log_alpha, progress)
    log_b, nondescendants = log_backward(log_alpha, log_g, progress)
    edge = edge_from_nondescendants(nondescendants, log_alpha)
    return SubsetPosterior(scores, log_alpha, log_g, log_b, nondescendants, edge, float(log_g[-1]))


def edge_posterior(model, x, interventions=None, max_parents=None, graph_prior=None):
    """Exact P(i -> j | D) [d, d] and log Z (float) of the linear Gaussian model by the subset DP."""
    posterior = subset_posterior(local_scores(model, x, interventions, max_parents, graph_prior))
    return posterior.edge, posterior.log_z
