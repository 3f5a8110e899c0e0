"""`jspgfn generate`: simulate a synthetic dataset folder (generate.py)."""

from jspgfn.commands.checks import check_positive
from jspgfn.errors import DataError


def add_subcommands(sub):
    p = sub.add_parser("generate", help="simulate a synthetic dataset folder")
    p.add_argument("--graph", default="er1", help="er1, er2, ... (k*d expected edges)")
    p.add_argument("--model", default="linear", choices=["linear", "mlp"])
    p.add_argument("--d", type=int, default=5, help="number of variables")
    p.add_argument("--n", type=int, default=100, help="training rows")
    p.add_argument("--n-test", type=int, default=100, help="held-out rows")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--obs-var", type=float, default=0.01, help="noise variance")
    p.add_argument(
        "--interventional-fraction",
        type=float,
        default=0.0,
        help="share of rows with one variable set by a hard intervention",
    )
    p.add_argument("--out", required=True, help="dataset folder to write")
    p.set_defaults(run=_run_generate)


def _run_generate(args):
    from pathlib import Path

    from jspgfn.dataset import write_dataset
    from jspgfn.generate import generate

    check_positive("--obs-var", args.obs_var)
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise DataError(args.out, "is a file; --out names the dataset folder to write")
    dataset = generate(
        args.graph,
        args.model,
        args.d,
        args.n,
        args.n_test,
        args.seed,
        obs_var=args.obs_var,
        interventional_fraction=args.interventional_fraction,
    )
    write_dataset(args.out, dataset)
    print(f"wrote {args.out}: d={args.d}, {dataset.graph.sum()} edges, {args.n} train / {args.n_test} test rows")
