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

Exact sampling (root layering, as in Talvitie, Vuoksenmaa & Koivisto, UAI 2019): every DAG has one
layering L_1, L_2, ... (L_1 = its sources, L_{k+1} = the sources once L_1..L_k are removed); a node
of L_{k+1} has all its parents in U_k = L_1 | ... | L_k and at least one in L_k. Given the placed set
U and last layer L, the weight of the completions is
  Q(U, L) = sum_{Y subset of V \\ U} (-1)^|Y| prod_{y in Y} alpha_y(U \\ L) b(U | Y)
(inclusion-exclusion over sources whose parents avoid L), so the next layer X is drawn with
  P(X | U, L) proportional to prod_{j in X} (alpha_j(U) - alpha_j(U \\ L)) Q(U | X, X),
one superset-sum transform over the subsets of V \\ U per visited state; then each node of X draws
Pa subset of U with Pa & L nonempty, proportional to beta_j(Pa). Samples sharing a state share its work.
"""

import numbers
import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jspgfn.conjugate import (
    _code_masks,
    _log_marginals,
    _node_gaussians,
    check_linear,
    node_statistics,
    sample_posterior_theta,
)
from jspgfn.errors import JspgfnError

MAX_DP_VARIABLES = 20


# ------------------------------------------------------------ subsets as bitmasks


def _popcount(masks):
    return np.bitwise_count(np.asarray(masks, dtype=np.int64)).astype(np.int64)


def _sets_of_size(d, k):
    """The bitmasks of the k-subsets of d nodes, ascending: int64 [C(d, k)]."""
    masks = np.arange(1 << d, dtype=np.int64)
    return masks[_popcount(masks) == k]


def _member_bits(rows, d, inside):
    """For each row mask [n], its member (inside=True) or missing nodes, ascending: int64 [n, m]."""
    member = (rows[:, None] >> np.arange(d)) & 1 == (1 if inside else 0)
    m = int(member[0].sum()) if len(rows) else 0
    return np.nonzero(member)[1].reshape(len(rows), m)


def _subset_masks(bits):
    """All subsets of each row's nodes: bits int [n, m] -> masks int64 [n, 2^m].

    Column t holds the subset {bits[:, i] : bit i of t set} (t in 0..2^m - 1).
    """
    masks = np.zeros((bits.shape[0], 1), dtype=np.int64)
    for i in range(bits.shape[1]):
        masks = np.concatenate([masks, masks | (np.int64(1) << bits[:, i : i + 1])], axis=1)
    return masks


def _subset_sums(values):
    """sums[:, t] = sum of values[:, i] over the bits i of t: float [n, m] -> [n, 2^m]."""
    sums = np.zeros((values.shape[0], 1))
    for i in range(values.shape[1]):
        sums = np.concatenate([sums, sums + values[:, i : i + 1]], axis=1)
    return sums


def _parity_signs(m):
    """(-1)^popcount(t) for t in 0..2^m - 1: float [2^m]."""
    return 1.0 - 2.0 * (_popcount(np.arange(1 << m)) & 1)


def _signed_logsumexp(logs, signs):
    """log(sum_t signs[t] exp(logs[:, t])) per row: logs [n, T], signs [T] -> [n].

    The sums are weighted counts of DAGs (positive); a non-positive sum means the cancellation
    exceeded float64 and is reported, never returned.
    """
    top = np.max(logs, axis=1)
    total = np.sum(signs * np.exp(logs - top[:, None]), axis=1)
    if np.any(~(total > 0)):
        raise JspgfnError("the subset dynamic program lost all precision (a signed sum is not positive)")
    return top + np.log(total)


CHUNK_TERMS = 1 << 21  # terms of a DP level held at once (a few float64 arrays of this size, 16 MiB each)


def _chunks(rows, width):
    """Consecutive pieces of rows [n] with at most max(1, CHUNK_TERMS // width) rows each."""
    step = max(1, CHUNK_TERMS // width)
    return [rows[start : start + step] for start in range(0, len(rows), step)]


def dp_terms(d):
    """Terms the forward and backward passes read (what subset_posterior's progress counts):
    sum_{k >= 1} C(d, k) 2^k + sum_{k < d} C(d, k) 2^(d-k) = 2 (3^d - 1)."""
    return 2 * (3**d - 1)


# Rates for the time estimate, from benchmarks/exact_dp_timing.py on this project's 2-core machine under load
# (d = 15: local scores 2.7 s, DP 3.6 s), rounded up by about half; estimates, printed as such.
SECONDS_PER_SCORE = 1.5e-5  # one local score (d 2^(d-1) of them)
SECONDS_PER_DP_UNIT = 2.5e-8  # the DP's cost grows as d 3^d (k node passes over each level-k row)
MEMORY_MARGIN = 64 << 20  # bytes beyond the DP's arrays: the local scores' batches, numpy and Python


# One exact sample costs about d 2^(d/2) units (its states' superset sums, partly shared with other samples):
# measured here under load, 100,000 samples at d = 10 and 12 in 6 and 21 s, 10,000 at d = 14 in 4.6 s,
# 5,000 at d = 16 in 8.6 s; rounded up by about half. An estimate: the cost depends on how concentrated
# the posterior is.
SECONDS_PER_SAMPLE_UNIT = 4e-7
FEATURE_CHUNK = 4096  # sampled graphs whose path / Markov indicators are held at once (float64)


def dp_cost(d, num_samples=0):
    """(estimated seconds, estimated peak bytes) of `jspgfn exact` beyond d = 5: the local scores, the subset
    DP and num_samples exact samples with their features.

    Memory: the [d, 2^d] float64 tables (scores, alpha, non-descendants, the edge pass's [d, 2^(d-1)] pieces)
    plus a DP level's chunk temporaries and MEMORY_MARGIN; with samples, the sampler's two bounded caches,
    the samples (uint8 [K, d, d], about four copies while the distinct ones are counted) and a chunk of
    feature indicators. Time: the rates above (machine-dependent).
    """
    seconds = SECONDS_PER_SCORE * d * (1 << max(d - 1, 0)) + SECONDS_PER_DP_UNIT * d * 3**d
    tables = 5 * d * (1 << d) * 8
    chunk = 8 * CHUNK_TERMS * 8
    peak = tables + chunk + MEMORY_MARGIN
    if num_samples > 0:
        seconds += SECONDS_PER_SAMPLE_UNIT * num_samples * d * 2 ** (d / 2)
        peak += 2 * SAMPLER_CACHE_BYTES + 4 * num_samples * d * d + 4 * FEATURE_CHUNK * d * d * 8
    return seconds, peak


def available_memory():
    """Bytes of memory available to a new allocation (Linux MemAvailable, else physical memory; None if unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_dp_fits(d, source="dataset", available=None, num_samples=0):
    """Raise JspgfnError, with the estimated time and memory, when the DP and num_samples exact samples
    cannot run here.

    Refused: d > MAX_DP_VARIABLES, or an estimated peak memory above `available` bytes (default: this
    machine's available memory). Returns (estimated seconds, estimated bytes) otherwise.
    """
    seconds, peak = dp_cost(d, num_samples)
    job = "the subset dynamic program" + (f" and {num_samples:,} exact samples" if num_samples > 0 else "")
    estimate = f"estimated {_duration(seconds)} and {peak / 2**30:.2g} GiB of memory"
    if d > MAX_DP_VARIABLES:
        raise JspgfnError(
            f"{source}: d={d} is too large for the exact posterior: the subset dynamic program reads "
            f"2 (3^d - 1) = {dp_terms(d):.1e} terms ({estimate}); limit d <= {MAX_DP_VARIABLES}"
        )
    available = available_memory() if available is None else available
    if available is not None and peak > available:
        raise JspgfnError(
            f"{source}: d={d} does not fit this machine: {job} would take {estimate}, "
            f"and {available / 2**30:.2g} GiB are available"
        )
    return seconds, peak


def _duration(seconds):
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


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
        codes = _sets_of_size(d, k)
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
        signs = -_parity_signs(k)[:-1] * (-1.0) ** k  # (-1)^(|T| + 1), |T| = k - popcount(t)
        for rows in _chunks(_sets_of_size(d, k), 1 << k):
            bits = _member_bits(rows, d, inside=True)  # [n, k]
            below = _subset_masks(bits)[:, :-1]  # [n, 2^k - 1]: U = S \ T with T nonempty
            logs = log_g[below]
            for i in range(k):
                node = bits[:, i : i + 1]
                sink = (below >> node) & 1 == 0  # node in T
                logs += np.where(sink, log_alpha[node, below], 0.0)
            log_g[rows] = _signed_logsumexp(logs, signs)
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
        signs = -_parity_signs(m)[1:]  # (-1)^(|T| + 1)
        member = ((np.arange(1, 1 << m)[:, None] >> np.arange(m)) & 1).astype(np.float64)  # [2^m - 1, m]
        for rows in _chunks(_sets_of_size(d, k), 1 << m):
            missing = _member_bits(rows, d, inside=False)  # [n, m]
            added = _subset_masks(missing)[:, 1:]  # T nonempty
            logs = _subset_sums(log_alpha[missing, rows[:, None]])[:, 1:] + log_b[rows[:, None] | added]
            log_b[rows] = _signed_logsumexp(logs, signs)
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


# ------------------------------------------------------------ exact sampling


# Bytes each of the sampler's two caches may hold. Most states are visited by few samples, so an unbounded
# cache grew with the number of samples (4.1 GB at d = 16 with 100,000 samples); beyond the bound the oldest
# entries are forgotten and recomputed if a later sample needs them (timings: docs/findings/exact-dp.md).
SAMPLER_CACHE_BYTES = 64 << 20


class _BoundedCache(dict):
    """A dict of tuples of arrays that forgets its oldest entries once they hold more than max_bytes."""

    def __init__(self, max_bytes):
        super().__init__()
        self.max_bytes = max_bytes
        self.bytes = 0

    def __setitem__(self, key, arrays):
        super().__setitem__(key, arrays)
        self.bytes += sum(a.nbytes for a in arrays)
        while self.bytes > self.max_bytes and len(self) > 1:
            self.bytes -= sum(a.nbytes for a in self.pop(next(iter(self))))


class _LayerSampler:
    """The conditional distributions of the root layering of P(G | D) (module docstring), cached per state
    (at most SAMPLER_CACHE_BYTES per cache)."""

    def __init__(self, posterior):
        self.scores = posterior.scores
        self.log_alpha = posterior.log_alpha
        self.log_b = posterior.log_backward
        self.d = posterior.scores.shape[0]
        self._all = np.arange(1 << self.d, dtype=np.int64)
        self._layers = _BoundedCache(SAMPLER_CACHE_BYTES)
        self._parents = _BoundedCache(SAMPLER_CACHE_BYTES)

    def layer_probs(self, placed, last):
        """P(next layer = X | placed U, last layer L) -> (masks int64 [2^m], probs [2^m]), m = |V \\ U|.

        placed = 0 (nothing placed yet; last ignored) draws the sources L_1.
        """
        key = (placed, last)
        if key not in self._layers:
            masks = self._all[(self._all & placed) == 0]  # subsets of V \ U, ascending = compressed order
            free = np.flatnonzero((~placed >> np.arange(self.d)) & 1)[None]  # [1, m]
            m = free.shape[1]
            alpha = self.log_alpha[free[0], placed]  # [m] log alpha_y(U)
            logs = self.log_b[placed | masks] + _subset_sums(alpha[None])[0]
            signs = _parity_signs(m)
            h = signs * np.exp(logs - np.max(logs))  # (-1)^|Z| b(U | Z) prod_{y in Z} alpha_y(U), scaled
            for i in range(m):  # superset sums: h[X] = sum_{Z superset of X} h[Z]
                view = h.reshape(-1, 2, 1 << i)
                view[:, 0, :] += view[:, 1, :]
            if placed == 0:
                rho = np.zeros(m)
            else:  # log (1 - alpha_j(U \ L) / alpha_j(U)): P(Pa_j meets L | Pa_j subset of U)
                with np.errstate(divide="ignore"):
                    rho = np.log(-np.expm1(self.log_alpha[free[0], placed & ~last] - alpha))
            probs = signs * h * np.exp(_subset_sums(rho[None])[0])
            probs[0] = 0.0
            probs = np.clip(probs, 0.0, None)
            self._layers[key] = (masks, probs / probs.sum(), _cdf(probs))
        return self._layers[key][:2]

    def parent_probs(self, node, placed, last):
        """P(Pa_node = c | node in the layer after (U, L)) -> (codes int64 [K], probs [K]); U = 0: only {}."""
        key = (node, placed, last)
        if key not in self._parents:
            if placed == 0:
                codes = np.zeros(1, dtype=np.int64)
            else:
                codes = self._all[((self._all & ~placed) == 0) & ((self._all & last) != 0)]
            logits = self.scores[node, codes]
            probs = np.exp(logits - np.max(logits))
            self._parents[key] = (codes, probs / probs.sum(), _cdf(probs))
        return self._parents[key][:2]

    def draw_layers(self, rng, placed, last, size):
        """size next layers (int64 masks [size]) from the state (U, L)."""
        self.layer_probs(placed, last)
        masks, _, cdf = self._layers[placed, last]
        return masks[np.searchsorted(cdf, rng.random(size), side="right")]

    def draw_parents(self, rng, node, placed, last, size):
        """size parent codes (int64 [size]) of a node of the layer after (U, L)."""
        self.parent_probs(node, placed, last)
        codes, _, cdf = self._parents[node, placed, last]
        return codes[np.searchsorted(cdf, rng.random(size), side="right")]


def _cdf(weights):
    """Cumulative distribution of non-negative weights [K] (sum > 0), exactly 1 from the last positive one on.

    searchsorted(cdf, u, side="right") with u in [0, 1) then never returns a zero-weight index.
    """
    cdf = np.cumsum(weights) / np.sum(weights)
    cdf[np.flatnonzero(weights)[-1] :] = 1.0
    return cdf


def sample_dags(posterior, rng, num_samples, progress=None):
    """num_samples i.i.d. DAGs from P(G | D): SubsetPosterior, numpy Generator -> uint8 [K, d, d].

    Draws the root layering layer by layer, then the parent sets given the layering. The samples in
    one state (U, L) are drawn together, so the cost grows with the number of distinct states visited.
    progress(n), if given, is called as n more samples are complete (num_samples in all).
    """
    d = posterior.scores.shape[0]
    full = (1 << d) - 1
    sampler = _LayerSampler(posterior)
    graphs = np.zeros((num_samples, d, d), dtype=np.uint8)
    stack = [(0, 0, np.arange(num_samples))]
    while stack:
        placed, last, index = stack.pop()
        layers = sampler.draw_layers(rng, placed, last, len(index))  # [n] the next layer of each sample
        if placed:
            union = int(np.bitwise_or.reduce(layers))
            for node in range(d):
                if union >> node & 1:
                    rows = index if len(index) == 1 else index[(layers >> node) & 1 == 1]
                    parents = sampler.draw_parents(rng, node, placed, last, len(rows))
                    graphs[rows, :, node] = (parents[:, None] >> np.arange(d)) & 1
        if len(index) == 1:
            groups = [(int(layers[0]), index)]
        else:
            unique, inverse = np.unique(layers, return_inverse=True)
            groups = [(int(layer), index[inverse == i]) for i, layer in enumerate(unique)]
        for layer, rows in groups:
            if placed | layer != full:
                stack.append((placed | layer, layer, rows))
            elif progress is not None:
                progress(len(rows))
    return graphs


def log_prob_dags(posterior, graphs):
    """Normalised log P(G | D) of graphs [K, d, d] under the posterior's scores -> float64 [K]."""
    graphs = np.asarray(graphs).astype(np.int64)
    d = graphs.shape[-1]
    codes = np.einsum("kij,i->kj", graphs, np.left_shift(1, np.arange(d, dtype=np.int64)))
    return posterior.scores[np.arange(d), codes].sum(axis=-1) - posterior.log_z


def sample_joint(model, x, posterior, rng, num_samples, interventions=None):
    """(graphs uint8 [K, d, d], theta float64 [K, d, d]) i.i.d. from P(G, theta | D).

    G from sample_dags, theta from the closed form P(theta | G, D) (conjugate.sample_posterior_theta);
    posterior must come from local_scores of the same model, data and interventions.
    """
    graphs = sample_dags(posterior, rng, num_samples)
    return graphs, sample_posterior_theta(model, x, graphs, rng, interventions)


def _chunked_features(feature, graphs, weights):
    """feature(graphs, weights) [d, d] (weights summing to 1), FEATURE_CHUNK graphs at a time: the float64
    indicators of 100,000 distinct d = 20 DAGs alone would take 320 MB."""
    total = sum(
        feature(graphs[start : start + FEATURE_CHUNK], weights[start : start + FEATURE_CHUNK])
        * weights[start : start + FEATURE_CHUNK].sum()
        for start in range(0, len(graphs), FEATURE_CHUNK)
    )
    return np.clip(total, 0.0, 1.0)


def monte_carlo_error(frequencies, num_samples):
    """Standard error sqrt(p (1 - p) / K) of Monte Carlo feature estimates p [...] from K samples."""
    p = np.asarray(frequencies, dtype=np.float64)
    return np.sqrt(p * (1.0 - p) / max(int(num_samples), 1))


# ------------------------------------------------------------ the exact.npz contract beyond d = 5


def compute_dp_posterior(
    dataset, model, graph_prior, num_samples=100_000, seed=0, max_parents=None, progress=None, sample_progress=None
):
    """exact.ExactPosterior for d > 5: exact edge marginals (subset DP); path and Markov features, and the
    listed graphs with their frequencies, from num_samples exact i.i.d. DAGs (Monte Carlo).

    graphs [M, d, d] are the distinct sampled DAGs and log_probs [M] their log sample frequencies (a Monte
    Carlo stand-in for the full list, which is too long beyond d = 5); metadata records the method, the
    number of samples, the seed and the largest standard error of the path and Markov features.
    progress(terms), if given, follows the dynamic program (dp_terms(d) in all), sample_progress(n) the
    samples (num_samples in all).
    """
    from jspgfn.exact import ExactPosterior, posterior_metadata
    from jspgfn.features import markov_features, path_features

    source = dataset.source or "dataset"
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            scores = local_scores(model, dataset.train, dataset.train_interventions, max_parents, graph_prior)
    except (JspgfnError, np.linalg.LinAlgError) as error:
        raise JspgfnError(
            f"{source}: the exact posterior is not finite for this data ({error}); rescale the data"
        ) from error
    posterior = subset_posterior(scores, progress)
    graphs = sample_dags(posterior, np.random.default_rng(seed), num_samples, sample_progress)
    unique, counts = np.unique(graphs.reshape(num_samples, -1), axis=0, return_counts=True)
    d = dataset.num_variables
    unique = unique.reshape(-1, d, d).astype(np.uint8)
    weights = counts / num_samples
    path, markov = (_chunked_features(feature, unique, weights) for feature in (path_features, markov_features))
    mc_error = {
        name: float(monte_carlo_error(f, num_samples).max()) for name, f in (("path", path), ("markov", markov))
    }
    metadata = {
        **posterior_metadata(dataset, model, graph_prior),
        "method": "subset dynamic program (edge marginals exact); path, markov, graphs: Monte Carlo",
        "max_parents": max_parents,
        "num_exact_samples": int(num_samples),
        "sample_seed": int(seed),
        "monte_carlo_max_standard_error": mc_error,
        "num_dags": int(len(unique)),
        "log_z": posterior.log_z,
    }
    edge = np.clip(posterior.edge, 0.0, 1.0)
    return ExactPosterior(unique, np.log(weights), edge, path, markov, metadata)
