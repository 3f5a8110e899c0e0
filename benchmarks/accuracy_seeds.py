"""JSP-GFN's edge marginals against the exact ones over several datasets and training seeds, all runs in
one compiled program (vmap over runs): the multi-seed form of accuracy_exact_edges.py.

Every (dataset, seed) pair is one run; all runs share the configuration and the data shape (same d and N),
so one jitted lax.scan advances all of them at once: on a GPU, whose per-iteration cost at these sizes is
set by kernel launches, 20 runs cost little more than one. At each --eval-at iteration each run samples
--num-samples graphs and the table gives its edge RMSE and Pearson r against the exact edge marginals
(`jspgfn exact`; read at the first evaluation where the file exists, edges only before), its mean edges
per sample, then per dataset the mean over seeds, and the overall mean. With --classes each run also gets a line of
expected edges, the run's against the exact posterior's, by class of edge: the true graph's edges, their reversals,
the others, and by the exact marginal (above 0.9, 0.5-0.9, 0.1-0.5, below 0.1), to see where a sampler that is too
sparse or too dense gains or loses its edges. --json also keeps each run's edge marginals.
The runs are the library's group of runs (RunGroup, as `jspgfn train DATA... --out RUN...` trains them).

  .venv/bin/python benchmarks/accuracy_seeds.py /tmp/w/d10er1/0=/tmp/w/d10er1/exact0.npz ... \
      --seeds 0 1 --eval-at 15000 30000 [--set stop_target_tau=0.1] [--json OUT.json] [--classes]

--recipe lingauss trains with the options of `jspgfn train --recipe lingauss` for the datasets' d (--set over them).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from accuracy_exact_edges import compare, exact_when_ready  # noqa: E402
from jspgfn.dataset import load_dataset  # noqa: E402
from jspgfn.gflownet.cli import parse_value  # noqa: E402
from jspgfn.gflownet.core import Trainer  # noqa: E402
from jspgfn.gflownet.presets import get_preset  # noqa: E402
from jspgfn.gflownet.recipes import RECIPES, recipe_options  # noqa: E402
from jspgfn.gflownet.sample import sample_graphs  # noqa: E402
from jspgfn.gflownet.train import RunGroup, enable_compilation_cache, resolve_model  # noqa: E402
from jspgfn.models import get_graph_prior, get_model  # noqa: E402

EXACT_BANDS = ((0.9, 1.01), (0.5, 0.9), (0.1, 0.5), (0.0, 0.1))  # [low, high) of the exact edge marginal


def edge_classes(approx, exact, graph):
    """Expected edges per sample by class: {class: (approx's, exact's)} for approx and exact float [d, d] edge
    marginals; classes "true", "reversed", "other" (need graph uint8 [d, d], the true DAG; skipped when None)
    and "exact>=low" for each band of EXACT_BANDS. The diagonal is left out."""
    off = ~np.eye(exact.shape[0], dtype=bool)
    masks = {}
    if graph is not None:
        true = graph.astype(bool)
        masks.update(true=true, reversed=true.T & ~true, other=off & ~true & ~true.T)
    for low, high in EXACT_BANDS:
        masks[f"exact>={low}"] = off & (exact >= low) & (exact < high)
    return {name: (float(approx[mask].sum()), float(exact[mask].sum())) for name, mask in masks.items()}


def main(argv=None, trainer_class=Trainer):
    """trainer_class: Trainer, or a subclass (score_stop_offset.py's), built as
    trainer_class(cfg, model, graph_prior, family, the first dataset's data)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pairs", nargs="+", metavar="DATA=EXACT", help="dataset folder = its exact .npz")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="training seeds per dataset")
    parser.add_argument("--preset", default="quick")
    parser.add_argument("--model", default="lingauss-diag")
    parser.add_argument("--num-samples", type=int, default=1000)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--eval-at", type=int, nargs="+", default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write every row here")
    parser.add_argument("--classes", action="store_true", help="expected edges by class of edge, run and exact")
    parser.add_argument("--recipe", choices=RECIPES, default=None, help="jspgfn train --recipe's options, for d")
    args = parser.parse_args(argv)
    enable_compilation_cache()
    overrides = {k: parse_value(v) for k, v in (s.split("=", 1) for s in args.set)}
    eval_at = sorted(set(args.eval_at or [get_preset(args.preset).num_iterations]))
    likelihood, family = resolve_model(args.model)
    model = get_model(likelihood)

    names, datas, exact_paths, true_graphs = [], [], [], []
    for pair in args.pairs:
        data_dir, exact_path = pair.split("=", 1)
        names.append(data_dir)
        dataset = load_dataset(data_dir)
        datas.append(dataset.train.astype(np.float32))
        true_graphs.append(dataset.graph)
        exact_paths.append(Path(exact_path))
    exacts = [None] * len(names)  # read at the first evaluation where they exist: `jspgfn exact` may still work
    shapes = {x.shape for x in datas}
    if len(shapes) != 1:
        sys.exit(f"accuracy_seeds.py: every dataset must have the same shape (N, d), got {sorted(shapes)}")
    d = datas[0].shape[1]
    if args.recipe is not None:
        overrides = {**recipe_options(args.recipe, d, likelihood), **overrides}
    cfg = get_preset(args.preset, **{"num_iterations": eval_at[-1], **overrides})  # schedules span the last point
    trainer = trainer_class(cfg, model, get_graph_prior(cfg.graph_prior, d), family, datas[0])
    runs = [(i, seed) for i in range(len(names)) for seed in args.seeds]
    states = [trainer.init(seed, datas[i]) for i, seed in runs]
    group = RunGroup(trainer, states, [datas[i] for i, _ in runs], [None] * len(runs))
    print(
        f"# device={jax.devices()[0].device_kind} jax={jax.__version__} cores={os.cpu_count()} "
        f"load={os.getloadavg()[0]:.2f} preset={args.preset} model={args.model} runs={len(runs)} "
        f"num_iterations={cfg.num_iterations} recipe={args.recipe} overrides={overrides}",
        flush=True,
    )
    print("dataset  seed  iter  train_s  edge_rmse  pearson  edges  exact_edges", flush=True)
    rows, done, elapsed = [], 0, 0.0
    for target in eval_at:
        while done < target:
            n = min(cfg.iterations_per_dispatch, target - done)
            start = time.time()
            group.advance(n, [True] * len(runs))  # blocks until the chunk is done
            elapsed += time.time() - start
            done += n
        exacts = [exact_when_ready(path) if e is None else e for e, path in zip(exacts, exact_paths)]
        for k, (i, seed) in enumerate(runs):
            graphs = sample_graphs(
                trainer.network_on(datas[i], None).apply,  # with stop_score_offset, the run's own data
                group.state(k).params,
                jax.random.PRNGKey(123),
                args.num_samples,
                d,
                cfg.max_parents,
            )
            edges = float(graphs.sum(axis=(1, 2)).mean())
            if exacts[i] is None:  # no exact file yet: edges per sample only
                print(
                    f"{names[i]}  {seed:4d} {done:6d} {elapsed:8.0f}  (no {exact_paths[i]} yet)  {edges:6.1f}",
                    flush=True,
                )
                continue
            marginal = graphs.mean(0)
            rmse, r = compare(marginal, exacts[i].edge)
            exact_edges = float(exacts[i].edge.sum())
            rows.append(dict(dataset=names[i], seed=seed, iteration=done, train_s=elapsed, rmse=rmse, r=r,
                             edges=edges, exact_edges=exact_edges, marginal=marginal.tolist()))  # fmt: skip
            print(
                f"{names[i]}  {seed:4d} {done:6d} {elapsed:8.0f} {rmse:9.3f} {r:8.3f} {edges:6.1f} {exact_edges:8.1f}",
                flush=True,
            )
            if args.classes:
                classes = edge_classes(marginal, exacts[i].edge, true_graphs[i])
                print("#   edges run/exact: " + "  ".join(f"{k} {a:.1f}/{e:.1f}" for k, (a, e) in classes.items()))
            if hasattr(trainer, "report"):  # a subclass's own diagnosis (score_stop_offset.py, descent_trace.py)
                trainer.report(group.state(k), graphs, exacts[i], datas[i])
        last = [row for row in rows if row["iteration"] == done]
        for name in names:
            mine = [row["rmse"] for row in last if row["dataset"] == name]
            if not mine:
                continue
            each = " ".join(f"{v:.3f}" for v in mine)
            print(f"# {name} iter {done}: mean edge RMSE over seeds {np.mean(mine):.3f} ({each})")
        if last:
            overall = np.mean([row["rmse"] for row in last])
            print(f"# iter {done}: mean edge RMSE over all runs {overall:.3f}", flush=True)
        if args.json:
            args.json.write_text(json.dumps({"overrides": overrides, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
