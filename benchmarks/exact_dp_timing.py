"""Wall time and peak memory of the exact edge marginals by the subset dynamic program (exact_dp.py).

Random linear-Gaussian data (jspgfn.generate, ER1 graph), d = 6, 8, 10, 12 by default. Prints one row per d:
the local scores (all parent sets, or up to --max-parents), the dynamic program, their sum, the peak memory
that numpy allocated during both (tracemalloc), and the growth of the DP time per extra variable
((t_d / t_prev) ** (1 / (d - prev)); the algorithm is O(d 3^d)). Timings are single runs, not best-of.

    python benchmarks/exact_dp_timing.py --d 6 8 10 12 [--n 100] [--max-parents K] [--samples 0]
"""

import argparse
import time
import tracemalloc

import numpy as np

from jspgfn.exact_dp import local_scores, subset_posterior
from jspgfn.exact_sampler import sample_dags
from jspgfn.generate import generate
from jspgfn.models import LinearGaussian, get_graph_prior


def measure(d, n, seed, max_parents, num_samples):
    """(seconds for the scores, seconds for the DP, peak MiB, seconds for the samples or nan)."""
    x = generate("er1", "linear", d, n, 0, seed).train
    model = LinearGaussian()
    tracemalloc.start()
    start = time.perf_counter()
    scores = local_scores(model, x, max_parents=max_parents, graph_prior=get_graph_prior("uniform", d))
    middle = time.perf_counter()
    posterior = subset_posterior(scores)
    end = time.perf_counter()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    sampling = float("nan")
    if num_samples:
        begin = time.perf_counter()
        sample_dags(posterior, np.random.default_rng(seed), num_samples)
        sampling = time.perf_counter() - begin
    return middle - start, end - middle, peak / 2**20, sampling


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[6, 8, 10, 12])
    parser.add_argument("--n", type=int, default=100, help="training rows")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-parents", type=int, default=None)
    parser.add_argument("--samples", type=int, default=0, help="also time this many exact DAG samples")
    args = parser.parse_args()
    print(f"n={args.n} seed={args.seed} max_parents={args.max_parents}")
    print(f"{'d':>3} {'scores s':>9} {'DP s':>9} {'total s':>9} {'peak MiB':>9} {'DP growth':>10} {'samples s':>10}")
    previous = None
    for d in args.d:
        t_scores, t_dp, peak, t_samples = measure(d, args.n, args.seed, args.max_parents, args.samples)
        growth = "" if previous is None else f"{(t_dp / previous[1]) ** (1 / (d - previous[0])):.2f}x"
        times = f"{t_scores:>9.3f} {t_dp:>9.3f} {t_scores + t_dp:>9.3f}"
        print(f"{d:>3} {times} {peak:>9.1f} {growth:>10} {t_samples:>10.3f}", flush=True)
        previous = (d, t_dp)


if __name__ == "__main__":
    main()
