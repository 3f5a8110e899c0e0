"""Where JSP-GFN's graph distribution goes wrong, at d=5 where every quantity is exact.

Trains JSP-GFN (linear Gaussian) on d=5 ER1 datasets and, at chosen iterations, evaluates the network on
all 29,281 DAGs (jspgfn.gflownet.exact_flows) to compare three distributions over graphs:
  exact  P(G | D), by enumeration (the target);
  q      P_q(G) proportional to exp(ELBO_q(G)), the graph distribution the SubTB loss aims at *given the
         current q(theta | G)* (the mean residual vanishes there); ELBO in closed form for the linear model;
  P_T    the sampler's own terminating distribution, exact (forward pass over edge counts), no sampling.
P_T far from q means the graph part (stop / edge logits) is at fault; q far from exact means q(theta | G).
rmse_mf: the same for the best diagonal q (mean field, KL gap in closed form): the floor of the diag family.
Columns: edge RMSE of P_T / P_q against exact, and of P_T against P_q; total variation TV(P_T, exact);
the mass of complete DAGs (10 edges) under P_T, P_q and exact; mean edges (P_T, exact, the floor); the
flow-weighted mean |log P(stop | G) - log P*(stop | G)| under the exact optimal policy for the exact target (stop err);
the share of replay transitions that start from a graph with >= 7 edges (replay dense) against the
share of the optimal flow through such graphs (F* dense). --classes: the expected edges per graph of P_T and
of exact on the true graph's edges, their reversals and elsewhere (which kind of edge a leak adds).

  .venv/bin/python benchmarks/flow_diagnosis.py --seeds 0 1 --eval-at 1000 3000 6000
  .venv/bin/python benchmarks/flow_diagnosis.py --seeds 0 --set exploration_end=0.5 --levels
  .venv/bin/python benchmarks/flow_diagnosis.py --seeds 0 1 2 3 4 --eval-at 6000 --classes
"""

import argparse
import os
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _training import train_to  # noqa: E402
from family_floor import mean_field_gaps  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.exact import compute_exact_posterior  # noqa: E402
from jspgfn.gflownet import exact_flows  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.log_pt import TrajectoryScorer  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.train import enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402
from stop_consistency import edge_classes  # noqa: E402

_LOG_2PI = float(np.log(2 * np.pi))


def network_outputs(trainer, params, graphs, chunk=4096):
    """loc, scale (and tril) [M, d, P] for every graph, numpy float64."""
    apply = jax.jit(trainer.network.apply)
    parts = []
    for s in range(0, len(graphs), chunk):
        out = apply(params, jnp.asarray(graphs[s : s + chunk]))
        parts.append({k: np.asarray(v, np.float64) for k, v in out.items() if k in ("loc", "scale", "tril")})
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def linear_elbo(model, x, graphs, out):
    """ELBO_q(G) = E_q[log P(D | G, theta) + log P(theta | G)] + H(q), closed form, float64 [M]."""
    x = np.asarray(x, np.float64)
    n = x.shape[0]
    xtx = x.T @ x
    mask = np.swapaxes(graphs, -1, -2).astype(np.float64)  # [M, d(j), d(i)] parents of j
    loc = out["loc"] * mask
    if "tril" in out:
        tril = out["tril"] * mask[..., :, None] * mask[..., None, :]
        cov = tril @ np.swapaxes(tril, -1, -2)
    else:
        cov = ((out["scale"] * mask) ** 2)[..., :, None] * np.eye(mask.shape[-1])
    resid = x[None, :, :] - np.einsum("ni,mji->mnj", x, loc)  # [M, N, d]
    sse = np.sum(resid**2, axis=(1, 2)) + np.einsum("ik,mjki->m", xtx, cov)
    loglik = -0.5 * sse / model.obs_var - 0.5 * n * x.shape[1] * np.log(2 * np.pi * model.obs_var)
    active = mask.sum(axis=(1, 2))
    second = np.sum((loc - model.prior_mean * mask) ** 2, axis=(1, 2)) + np.trace(cov, axis1=-2, axis2=-1).sum(-1)
    log_prior = -0.5 * second / model.prior_var - 0.5 * active * np.log(2 * np.pi * model.prior_var)
    eye = np.eye(mask.shape[-1])
    cov_active = cov * mask[..., :, None] * mask[..., None, :] + eye * (1 - mask)[..., None, :]
    entropy = 0.5 * np.linalg.slogdet(cov_active)[1].sum(-1) + 0.5 * active * (1 + _LOG_2PI)
    return loglik + log_prior + entropy


def mean_field_gap(model, x, graphs):
    """KL(best diagonal Gaussian || P(theta | G, D)) per graph, float64 [M] (family_floor.mean_field_gaps
    per parent set, summed over the nodes)."""
    d = graphs.shape[-1]
    parent_codes = np.einsum("mij,i->mj", graphs.astype(np.int64), 1 << np.arange(d))
    return mean_field_gaps(model, x)[parent_codes].sum(axis=1)


def normalise(log_w):
    return log_w - np.logaddexp.reduce(log_w)


def edge_marginals(lattice, log_p):
    """P(i -> j) under the distribution log_p float [M] over lattice.graphs: float [d, d]."""
    return np.einsum("m,mij->ij", np.exp(log_p), lattice.graphs)


def edge_rmse(lattice, log_p, log_q):
    off = ~np.eye(lattice.graphs.shape[-1], dtype=bool)
    return float(np.sqrt(np.mean((edge_marginals(lattice, log_p)[off] - edge_marginals(lattice, log_q)[off]) ** 2)))


def d5_problem(seed, model, prior, lattice, graph="er1"):
    """The d=5 dataset of this script's `seed` (linear Gaussian, N=100) and the exact log posterior of each of
    lattice.graphs under model and prior: (dataset, float64 [M])."""
    with tempfile.TemporaryDirectory() as tmp:
        from jspgfn.cli import main as cli_main

        cli_main(
            ["generate", "--graph", graph, "--model", "linear", "--d", "5", "--n", "100"]
            + ["--seed", str(seed), "--out", f"{tmp}/data"]
        )
        ds = load_dataset(f"{tmp}/data")
    exact = compute_exact_posterior(ds, model, prior)
    log_exact = np.empty(len(lattice.graphs))
    log_exact[exact_flows.index_of(lattice, exact.graphs)] = exact.log_probs
    return ds, log_exact


def diagnose(trainer, state, lattice, log_exact, x, levels=False, true_graph=None):
    """The row of the table (and, with levels, the lines by edge count); with true_graph (0/1 [d, d]) also the
    expected edges per graph of P_T and of the exact posterior on the true graph's edges, their reversals and
    elsewhere (stop_consistency.edge_classes)."""
    d = lattice.graphs.shape[-1]
    scorer = TrajectoryScorer(trainer.network.apply, state.params, d, trainer.cfg.max_parents)
    log_edges, log_stop = scorer.log_edges(lattice.graphs)
    log_pt, log_flow = exact_flows.terminating_log_probs(lattice, log_stop, log_edges.reshape(len(log_stop), -1))
    out = network_outputs(trainer, state.params, lattice.graphs)
    log_q = normalise(linear_elbo(trainer.model, x, lattice.graphs, out))
    log_mf = normalise(log_exact - mean_field_gap(trainer.model, x, lattice.graphs))
    log_f_opt, log_stop_opt = exact_flows.optimal_flows(lattice, log_exact)
    complete = lattice.num_edges == d * (d - 1) // 2
    dense = lattice.num_edges >= 7
    replay = state.replay
    stored = np.asarray(replay.graphs[: int(replay.size)]).sum(axis=(1, 2))
    flow_w = np.exp(log_f_opt)
    forced = complete
    stop_err = np.abs(log_stop - log_stop_opt)
    row = {
        "rmse_pt": edge_rmse(lattice, log_pt, log_exact),
        "rmse_q": edge_rmse(lattice, log_q, log_exact),
        "rmse_pt_q": edge_rmse(lattice, log_pt, log_q),
        "rmse_mf": edge_rmse(lattice, log_mf, log_exact),
        "tv": 0.5 * float(np.abs(np.exp(log_pt) - np.exp(log_exact)).sum()),
        "sum_pt": float(np.exp(log_pt).sum()),
        "complete_pt": float(np.exp(log_pt)[complete].sum()),
        "complete_q": float(np.exp(log_q)[complete].sum()),
        "complete_exact": float(np.exp(log_exact)[complete].sum()),
        "edges_pt": float(np.exp(log_pt) @ lattice.num_edges),
        "edges_exact": float(np.exp(log_exact) @ lattice.num_edges),
        "edges_mf": float(np.exp(log_mf) @ lattice.num_edges),
        "stop_err": float((flow_w * stop_err)[~forced].sum() / flow_w[~forced].sum()),
        "replay_dense": float(np.mean(stored >= 7)) if len(stored) else float("nan"),
        "fopt_dense": float(flow_w[dense].sum() / flow_w.sum()),
        "log_stop": log_stop,  # float64 [M]: the sampler's log P(stop | G) of every DAG
    }
    if true_graph is not None:
        row["classes_pt"] = edge_classes(edge_marginals(lattice, log_pt), true_graph)
        row["classes_exact"] = edge_classes(edge_marginals(lattice, log_exact), true_graph)
    if levels:
        kmax = d * (d - 1) // 2
        for name, log_p in (("P_T", log_pt), ("P_q", log_q), ("floor", log_mf), ("exact", log_exact)):
            mass = np.bincount(lattice.num_edges, np.exp(log_p), minlength=kmax + 1)
            print(f"    mass by edge count {name:5s}: " + " ".join(f"{v:.1e}" for v in mass), flush=True)
        reach = np.bincount(lattice.num_edges, np.exp(log_flow), minlength=kmax + 1)
        reach_opt = np.bincount(lattice.num_edges, flow_w, minlength=kmax + 1)
        print("    flow through level, sampler: " + " ".join(f"{v:.1e}" for v in reach), flush=True)
        print("    flow through level, optimal: " + " ".join(f"{v:.1e}" for v in reach_opt), flush=True)
        err = [
            float((flow_w * stop_err)[(lattice.num_edges == k) & ~forced].sum() / max(reach_opt[k], 1e-300))
            for k in range(kmax)
        ]
        print("    stop err by level (F*-weighted): " + " ".join(f"{v:.2f}" for v in err), flush=True)
        signed = log_stop - log_stop_opt
        sampler_w = np.exp(log_flow)
        err = [
            float((sampler_w * signed)[(lattice.num_edges == k) & ~forced].sum() / max(reach[k], 1e-300))
            for k in range(kmax)
        ]
        print("    log P(stop) - optimal by level (sampler-flow-weighted): " + " ".join(f"{v:.1f}" for v in err))
        # SubTB residual of each transition into a complete DAG with the exact marginal reward (log P(G | D)
        # up to a constant), weighted by the sampler's flow through it
        parent, action, child = exact_flows.edges_by_level(lattice, kmax - 1)
        log_edges_flat = log_edges.reshape(len(log_stop), -1)
        residual = (
            log_exact[child] - np.log(kmax) + log_stop[parent] - log_exact[parent] - log_edges_flat[parent, action]
        )
        weight = np.exp(log_flow[parent] + log_edges_flat[parent, action])
        mean_residual = np.sum(weight * residual) / weight.sum()
        print(f"    residual into complete DAGs (sampler-flow-weighted mean): {mean_residual:.1f}")
        print(
            "    replay share by level: "
            + " ".join(f"{v:.3f}" for v in np.bincount(stored, minlength=kmax + 1) / max(len(stored), 1)),
            flush=True,
        )
    return row


def main(trainer_class=Trainer, argv=None, note=""):
    """trainer_class: Trainer or a subclass (benchmarks/marginal_reward_oracle.py); note: added to the header."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss-diag")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--graph", default="er1")
    parser.add_argument("--train-seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--eval-at", type=int, nargs="+", default=None, help="iterations to diagnose at")
    parser.add_argument("--levels", action="store_true", help="also print mass and flow per edge count")
    parser.add_argument(
        "--classes",
        action="store_true",
        help="also print the expected edges of P_T and exact on the true graph's edges / reversals / elsewhere",
    )
    args = parser.parse_args(argv)
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    eval_at = sorted(set(args.eval_at or [get_preset(args.preset).num_iterations]))
    cfg = get_preset(args.preset, **{"num_iterations": eval_at[-1], **overrides})  # schedules span the last point
    if eval_at[-1] > cfg.num_iterations:
        parser.error(f"--eval-at {eval_at[-1]} is past num_iterations={cfg.num_iterations} (the schedules' end)")
    print(
        f"# cores={os.cpu_count()} load={os.getloadavg()[0]:.2f} jax={jax.__version__} preset={args.preset} "
        f"model={args.model} graph={args.graph} num_iterations={cfg.num_iterations} overrides={overrides}{note}",
        flush=True,
    )
    lattice = exact_flows.dag_lattice(5)
    header = (
        "seed   iter  train_s  rmse_PT  rmse_q  PT~q  rmse_mf    TV    sumPT  complete:PT     q      exact  "
        "edges:PT exact floor  stop_err  replay_dense F*_dense"
    )
    print(header, flush=True)
    final = []
    for seed in args.seeds:
        likelihood, family = resolve_model(args.model)
        model = get_model(likelihood)
        prior = get_graph_prior(cfg.graph_prior, 5)
        ds, log_exact = d5_problem(seed, model, prior, lattice, args.graph)
        trainer = trainer_class(cfg, model, prior, family, ds.train.astype(np.float32))
        state = trainer.init(args.train_seed)
        done, elapsed = 0, 0.0
        for target in eval_at:
            state, done, seconds = train_to(trainer, state, done, target)
            elapsed += seconds
            r = diagnose(trainer, state, lattice, log_exact, ds.train, args.levels, ds.graph if args.classes else None)
            print(
                f"{seed:4d} {done:6d} {elapsed:8.0f} {r['rmse_pt']:8.3f} {r['rmse_q']:7.3f} {r['rmse_pt_q']:6.3f} "
                f"{r['rmse_mf']:7.3f} "
                f"{r['tv']:6.3f} {r['sum_pt']:7.4f} {r['complete_pt']:10.2e} {r['complete_q']:8.1e} "
                f"{r['complete_exact']:8.1e} {r['edges_pt']:7.2f} {r['edges_exact']:5.2f} {r['edges_mf']:5.2f} "
                f"{r['stop_err']:9.2f} "
                f"{r['replay_dense']:12.3f} {r['fopt_dense']:8.3f}",
                flush=True,
            )
            if args.classes:
                pt, ex = r["classes_pt"], r["classes_exact"]
                print(
                    "    edges true / reversed / other: P_T "
                    + " / ".join(f"{v:.2f}" for v in pt)
                    + ", exact "
                    + " / ".join(f"{v:.2f}" for v in ex),
                    flush=True,
                )
        final.append(r)
    for key in ("rmse_pt", "rmse_q", "rmse_mf", "tv", "complete_pt", "complete_exact"):
        values = np.array([r[key] for r in final])
        print(f"mean {key}: {values.mean():.4g} (max {values.max():.4g})", flush=True)


if __name__ == "__main__":
    main()
