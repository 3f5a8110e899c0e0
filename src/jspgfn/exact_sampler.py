"""Exact i.i.d. DAGs from P(G | D) given the subset dynamic program's tables (exact_dp.SubsetPosterior).

Root layering, as in Talvitie, Vuoksenmaa & Koivisto, UAI 2019: every DAG has one
layering L_1, L_2, ... (L_1 = its sources, L_{k+1} = the sources once L_1..L_k are removed); a node
of L_{k+1} has all its parents in U_k = L_1 | ... | L_k and at least one in L_k. Given the placed set
U and last layer L, the weight of the completions is
  Q(U, L) = sum_{Y subset of V \\ U} (-1)^|Y| prod_{y in Y} alpha_y(U \\ L) b(U | Y)
(inclusion-exclusion over sources whose parents avoid L), so the next layer X is drawn with
  P(X | U, L) proportional to prod_{j in X} (alpha_j(U) - alpha_j(U \\ L)) Q(U | X, X),
one superset-sum transform over the subsets of V \\ U per visited state; then each node of X draws
Pa subset of U with Pa & L nonempty, proportional to beta_j(Pa). Samples sharing a state share its work.
(alpha, b and beta as in exact_dp.py's docstring; sets of nodes are int bitmasks, subsets.py.)
"""

import numpy as np

from jspgfn.conjugate import sample_posterior_theta
from jspgfn.subsets import parity_signs, subset_sums

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
            logs = self.log_b[placed | masks] + subset_sums(alpha[None])[0]
            signs = parity_signs(m)
            h = signs * np.exp(logs - np.max(logs))  # (-1)^|Z| b(U | Z) prod_{y in Z} alpha_y(U), scaled
            for i in range(m):  # superset sums: h[X] = sum_{Z superset of X} h[Z]
                view = h.reshape(-1, 2, 1 << i)
                view[:, 0, :] += view[:, 1, :]
            if placed == 0:
                rho = np.zeros(m)
            else:  # log (1 - alpha_j(U \ L) / alpha_j(U)): P(Pa_j meets L | Pa_j subset of U)
                with np.errstate(divide="ignore"):
                    rho = np.log(-np.expm1(self.log_alpha[free[0], placed & ~last] - alpha))
            probs = signs * h * np.exp(subset_sums(rho[None])[0])
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
