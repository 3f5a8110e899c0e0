"""What `jspgfn exact` costs beyond d = 5 (the local scores, the subset dynamic program and the exact samples),
estimated before it runs, and the refusal, with that estimate, of a run that cannot fit this machine.

dp_cost reads subsets.CHUNK_TERMS, exact_sampler.SAMPLER_CACHE_BYTES and exact_dp_posterior.FEATURE_CHUNK
when called, so the estimate follows them.
"""

import os
from pathlib import Path

from jspgfn import exact_dp_posterior, exact_sampler, subsets
from jspgfn.errors import JspgfnError
from jspgfn.exact_dp import MAX_DP_VARIABLES, dp_terms

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
    chunk = 8 * subsets.CHUNK_TERMS * 8
    peak = tables + chunk + MEMORY_MARGIN
    if num_samples > 0:
        seconds += SECONDS_PER_SAMPLE_UNIT * num_samples * d * 2 ** (d / 2)
        cache, features = exact_sampler.SAMPLER_CACHE_BYTES, exact_dp_posterior.FEATURE_CHUNK
        peak += 2 * cache + 4 * num_samples * d * d + 4 * features * d * d * 8
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
