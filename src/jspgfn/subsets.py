"""Sets of nodes as int bitmasks (bit i = node i), and the signed log-sums over subsets that the subset
dynamic program (exact_dp.py) and the exact sampler (exact_sampler.py) share.

Shapes: n rows (sets), m members per row, 2^m subsets of each row's members; masks are int64.
"""

import numpy as np

from jspgfn.errors import JspgfnError


def popcount(masks):
    """The number of nodes in each mask: int [...] -> int64 [...]."""
    return np.bitwise_count(np.asarray(masks, dtype=np.int64)).astype(np.int64)


def sets_of_size(d, k):
    """The bitmasks of the k-subsets of d nodes, ascending: int64 [C(d, k)]."""
    masks = np.arange(1 << d, dtype=np.int64)
    return masks[popcount(masks) == k]


def member_bits(rows, d, inside):
    """For each row mask [n], its member (inside=True) or missing nodes, ascending: int64 [n, m]."""
    member = (rows[:, None] >> np.arange(d)) & 1 == (1 if inside else 0)
    m = int(member[0].sum()) if len(rows) else 0
    return np.nonzero(member)[1].reshape(len(rows), m)


def subset_masks(bits):
    """All subsets of each row's nodes: bits int [n, m] -> masks int64 [n, 2^m].

    Column t holds the subset {bits[:, i] : bit i of t set} (t in 0..2^m - 1).
    """
    masks = np.zeros((bits.shape[0], 1), dtype=np.int64)
    for i in range(bits.shape[1]):
        masks = np.concatenate([masks, masks | (np.int64(1) << bits[:, i : i + 1])], axis=1)
    return masks


def subset_sums(values):
    """sums[:, t] = sum of values[:, i] over the bits i of t: float [n, m] -> [n, 2^m]."""
    sums = np.zeros((values.shape[0], 1))
    for i in range(values.shape[1]):
        sums = np.concatenate([sums, sums + values[:, i : i + 1]], axis=1)
    return sums


def parity_signs(m):
    """(-1)^popcount(t) for t in 0..2^m - 1: float [2^m]."""
    return 1.0 - 2.0 * (popcount(np.arange(1 << m)) & 1)


def signed_logsumexp(logs, signs):
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


def chunks(rows, width):
    """Consecutive pieces of rows [n] with at most max(1, CHUNK_TERMS // width) rows each."""
    step = max(1, CHUNK_TERMS // width)
    return [rows[start : start + step] for start in range(0, len(rows), step)]
