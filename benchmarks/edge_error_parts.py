"""Where a run's edge error lies: in whether two variables are adjacent, or in which way the edge points.

For a pair {i, j} with errors e_ij = run_ij - exact_ij and e_ji, the squared error splits exactly as

  e_ij^2 + e_ji^2 = (a^2 + o^2) / 2,   a = e_ij + e_ji (adjacency),  o = e_ij - e_ji (orientation),

so the sum of squared errors over all pairs is an adjacency part (how often i and j are joined, either way) plus an
orientation part (the error in the net direction P(i -> j) - P(j -> i)). A sampler that finds the right skeleton but
splits the directions wrongly has only an orientation part; one that joins a pair the posterior orients one way too
rarely has equal parts (a = o); so an orientation part well above the adjacency part points to directions. Each row
of an `accuracy_seeds.py --json` file (also `score_stop_offset.py --json`; rows hold the sampler's edge marginals,
"marginal") is split by the exact adjacency P(i ~ j) of its pairs: sure (>= 0.9), likely (0.5-0.9), weak (0.1-0.5),
absent (<= 0.1), each with its mean signed adjacency error (> 0: the run joins its pairs more often than the
posterior), and the pairs whose direction the posterior leaves open (adjacent with P >= 0.5, the rarer direction >=
10%).

  .venv/bin/python benchmarks/score_stop_offset.py --weight 1 DATA=EXACT ... --json ROWS.json [--set ...]
  .venv/bin/python benchmarks/edge_error_parts.py ROWS.json DATA=EXACT ... [--iteration 6000] [--pairs 5] [--mean-field]
"""

import argparse
import json
from pathlib import Path

import numpy as np

from jspgfn.dataset import load_dataset
from jspgfn.exact import load_exact

SURE, LIKELY, ABSENT = 0.9, 0.5, 0.1
CLASSES = ("sure", "likely", "weak", "absent", "open")


def pair_errors(run, exact):
    """Per unordered pair i < j of run, exact float [d, d] (edge marginals) -> (a, o, adjacency, minor) float
    [d (d - 1) / 2] each: adjacency and orientation errors, the exact P(i ~ j) and the exact rarer direction's
    share of it (0 where P(i ~ j) = 0)."""
    i, j = np.triu_indices(run.shape[0], 1)
    e_ij, e_ji = run[i, j] - exact[i, j], run[j, i] - exact[j, i]
    adjacency = exact[i, j] + exact[j, i]
    minor = np.divide(
        np.minimum(exact[i, j], exact[j, i]), adjacency, out=np.zeros_like(adjacency), where=adjacency > 0
    )
    return e_ij + e_ji, e_ij - e_ji, adjacency, minor


def error_parts(run, exact):
    """The split of sum_{i != j} (run - exact)^2 (run, exact float [d, d]) -> dict of floats: "total", and for
    each class of pair ("all" and CLASSES: see the module) its adjacency and orientation parts ("<class>_adj",
    "<class>_ori"), its number of pairs ("<class>_n") and its mean adjacency error ("<class>_signed", nan where
    it has no pairs)."""
    a, o, adjacency, minor = pair_errors(run, exact)
    classes = {
        "all": np.ones_like(adjacency, bool),
        "sure": adjacency >= SURE,
        "likely": (adjacency >= LIKELY) & (adjacency < SURE),
        "weak": (adjacency > ABSENT) & (adjacency < LIKELY),
        "absent": adjacency <= ABSENT,
        "open": (adjacency >= LIKELY) & (minor >= 0.1),
    }
    parts = {"total": float(np.sum(a**2 + o**2) / 2)}
    for name, mask in classes.items():
        parts[f"{name}_adj"] = float(np.sum(a[mask] ** 2) / 2)
        parts[f"{name}_ori"] = float(np.sum(o[mask] ** 2) / 2)
        parts[f"{name}_n"] = int(mask.sum())
        parts[f"{name}_signed"] = float(a[mask].mean()) if mask.any() else float("nan")
    return parts


def share(parts, name):
    """'<pairs> <adjacency share>/<orientation share> <mean signed adjacency error>' of error_parts' dict."""
    total = parts["total"]
    adj, ori = parts[name + "_adj"] / total, parts[name + "_ori"] / total
    return f"{parts[name + '_n']:2d} {adj:.2f}/{ori:.2f} {parts[name + '_signed']:+.3f}"


def worst_pairs(run, exact, graph, k):
    """Lines for the k pairs i < j with the largest squared error: 'i-j true ab exact P(i->j)/P(j->i) run
    ...' with ab the true graph's two entries (graph uint8 [d, d] or None: '?')."""
    i, j = np.triu_indices(run.shape[0], 1)
    a, o, _, _ = pair_errors(run, exact)
    error = (a**2 + o**2) / 2  # the pair's two squared errors
    lines = []
    for n in np.argsort(-error, kind="stable")[:k]:
        a, b = i[n], j[n]
        true = "??" if graph is None else f"{graph[a, b]}{graph[b, a]}"
        lines.append(
            f"{a}-{b} true {true} exact {exact[a, b]:.2f}/{exact[b, a]:.2f} run {run[a, b]:.2f}/{run[b, a]:.2f}"
            f" share {error[n] / error.sum():.2f}"
        )
    return lines


def mean_field_target(x, obs_var=0.01, prior_var=1.0):
    """Edge marginals of the diagonal family's target P_mf (family_floor.py) on data x float [N, d] -> [d, d]."""
    from family_floor import mean_field_edges, mean_field_gaps
    from jspgfn.exact_dp import local_scores
    from jspgfn.models import get_model

    model = get_model("lingauss", obs_var=obs_var, prior_var=prior_var)
    return mean_field_edges(local_scores(model, x), mean_field_gaps(model, x))


def parse_exact(pairs):
    """['DATA=EXACT', ...] -> {DATA: EXACT}."""
    mapping = {}
    for pair in pairs:
        data, sep, exact = pair.partition("=")
        if not sep or not data or not exact:
            raise SystemExit(f"expected DATA=EXACT, got {pair!r}")
        mapping[data.rstrip("/")] = exact
    return mapping


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", help="accuracy_seeds.py --json file (rows with 'dataset' and 'marginal')")
    parser.add_argument(
        "exact", nargs="+", metavar="DATA=EXACT", help="each dataset folder of the rows = its exact .npz"
    )
    parser.add_argument("--iteration", type=int, default=None, help="rows at this iteration (default: the last)")
    parser.add_argument("--pairs", type=int, default=0, metavar="K", help="also list each run's K worst pairs")
    parser.add_argument(
        "--mean-field",
        action="store_true",
        help="also split the error of the diagonal family's target P_mf (family_floor.py; linear Gaussian, obs_var "
        "0.01, prior_var 1, d <= ~14) on each row's dataset",
    )
    args = parser.parse_args()
    rows = json.loads(Path(args.rows).read_text()).get("rows", [])
    if not rows or any("marginal" not in row for row in rows):
        raise SystemExit(f"{args.rows}: no rows with edge marginals (write it with accuracy_seeds.py --json)")
    iteration = args.iteration or max(row["iteration"] for row in rows)
    rows = [row for row in rows if row["iteration"] == iteration]
    if not rows:
        raise SystemExit(f"{args.rows}: no rows at iteration {iteration}")
    exact_of = parse_exact(args.exact)
    missing = sorted({row["dataset"].rstrip("/") for row in rows} - set(exact_of))
    if missing:
        raise SystemExit(f"{args.rows}: no DATA=EXACT given for {', '.join(missing)}")
    print("# squared error (sum over ordered pairs) = adjacency + orientation; by the exact P(i ~ j) of the pair:")
    print("# per class, pairs, shares of the run's squared error adjacency/orientation, mean signed adjacency error")
    print("dataset  seed  iter  rmse  adj_share  " + "  ".join(f"{name}(n adj/ori signed)" for name in CLASSES))
    for row in rows:
        exact = load_exact(exact_of[row["dataset"].rstrip("/")]).edge
        run = np.asarray(row["marginal"], np.float64)
        if run.shape != exact.shape:
            raise SystemExit(f"{args.rows}: {row['dataset']} marginals {run.shape}, exact {exact.shape}")
        p = error_parts(run, exact)
        total = p["total"]
        d = run.shape[0]
        print(
            f"{row['dataset']}  {row['seed']}  {iteration}  {np.sqrt(total / (d * (d - 1))):.3f}"
            f"  {p['all_adj'] / total:9.2f}  " + "  ".join(f"{share(p, name):>19}" for name in CLASSES),
            flush=True,
        )
        dataset = load_dataset(row["dataset"]) if args.mean_field or args.pairs else None
        if args.mean_field:
            mean_field = mean_field_target(dataset.train)
            q = error_parts(mean_field, exact)
            print(
                f"#   P_mf {np.sqrt(q['total'] / (d * (d - 1))):.3f}  {q['all_adj'] / q['total']:9.2f}  "
                + "  ".join(f"{share(q, name):>19}" for name in CLASSES)
            )
        if args.pairs:
            for line in worst_pairs(run, exact, dataset.graph, args.pairs):
                print("#   " + line)


if __name__ == "__main__":
    main()
