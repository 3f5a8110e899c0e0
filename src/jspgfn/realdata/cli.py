"""`jspgfn realdata sachs|gene-expression`: the paper's real data sets as dataset folders (section 5.3).

  jspgfn realdata sachs --out DIR [--num-train 100] [--seed S] [--bnlearn-file FILE] [--cdt-file FILE]
  jspgfn realdata gene-expression --out DIR [--seed S]                      (SIMULATED sergio-rs stand-in)
  jspgfn realdata gene-expression --out DIR --input TABLE --target-column COL [--held-out ...]

Each writes the dataset folder whole or not at all (the realdata modules write into a temporary sibling
folder and rename it): a malformed input prints one line `jspgfn: error: <file>: <problem>`, exits with
status 2 and leaves no folder behind.
"""

from jspgfn.errors import DataError, JspgfnError


def add_subcommands(sub):
    p = sub.add_parser("realdata", help="prepare a real-data set of the paper (Sachs, gene expression)")
    kinds = p.add_subparsers(dest="source", required=True)

    s = kinds.add_parser(
        "sachs",
        help="Sachs et al. (2005) flow cytometry, 11 proteins, 3 levels, held-out interventions",
        description=(
            "Sachs flow cytometry data (d=11), discretised into 3 levels: 7 conditions of 600 rows for training "
            "(N=4,200), the psitect (PIP2) and u0126 (Mek) conditions held out as test rows. From cdt's raw "
            "table (condition labels RECONSTRUCTED from block sizes, per-protein tertiles of the observational "
            "conditions) or from bnlearn's sachs.interventional.txt. graph.csv is the 17-arc consensus "
            "network: a reference, not a ground truth."
        ),
    )
    s.add_argument("--out", required=True, help="dataset folder to write")
    s.add_argument("--seed", type=int, default=0, help="seed of the row sampling")
    s.add_argument("--num-train", type=int, default=None, help="keep a subsample of N training rows (e.g. 100)")
    s.add_argument("--bnlearn-file", default=None, help="bnlearn's sachs.interventional.txt (default: cdt's table)")
    s.add_argument("--cdt-file", default=None, help="cdt's cyto_full_data.csv (default: found in the cdt package)")
    s.add_argument("--rows-per-condition", type=int, default=None, help="rows drawn per cdt condition (default 600)")
    s.set_defaults(run=_run_sachs)

    g = kinds.add_parser(
        "gene-expression",
        help="single-cell expression with knockouts: your table (--input) or a SIMULATED sergio-rs stand-in",
        description=(
            "Without --input: a SIMULATED stand-in (sergio-rs, random gene regulatory network, control cells and "
            "single-gene knockouts, technical noise; its true network is graph.csv), NOT the Perturb-CITE-seq "
            "data of the paper. With --input: a cells x genes table (CSV, or h5ad with anndata) of non-negative "
            "values and a perturbation-target column; the cells of some knockouts become the test set."
        ),
    )
    g.add_argument("--out", required=True, help="dataset folder to write")
    g.add_argument("--seed", type=int, default=0, help="seed of the simulation, or of the held-out draw")
    g.add_argument("--input", default=None, help="cells x genes table (CSV or .h5ad); none: the simulated stand-in")
    g.add_argument("--target-column", default="target", help="column naming each cell's knocked-out gene")
    g.add_argument("--cell-column", default=None, help="CSV: a cell-id column to ignore")
    g.add_argument(
        "--held-out",
        default=None,
        help="--input: knockouts held out as test cells, a number (drawn with --seed) or comma-separated gene "
        "names (default: a fifth of the knocked-out genes)",
    )
    g.add_argument("--transform", default=None, help="none or log1p (default: none for --input, log1p simulated)")
    size = g.add_argument_group("size of the simulated stand-in (defaults: the paper's shape)")
    size.add_argument("--num-genes", type=int, default=61)
    size.add_argument("--num-train", type=int, default=2628, help="training cells")
    size.add_argument("--num-test", type=int, default=500, help="held-out cells")
    size.add_argument("--num-train-knockouts", type=int, default=40)
    size.add_argument("--num-test-knockouts", type=int, default=10)
    g.set_defaults(run=_run_gene_expression)


def _check_out(out):
    from pathlib import Path

    if Path(out).exists() and not Path(out).is_dir():
        raise DataError(out, "is a file; --out names the dataset folder to write")


def _run_sachs(args):
    from jspgfn.realdata.sachs import prepare_sachs

    _check_out(args.out)
    options = {}
    if args.bnlearn_file is not None:
        if args.cdt_file is not None or args.rows_per_condition is not None:
            raise JspgfnError("--cdt-file and --rows-per-condition apply to cdt's table, not to --bnlearn-file")
    else:
        if args.cdt_file is not None:
            options["path"] = args.cdt_file
        if args.rows_per_condition is not None:
            options["rows_per_condition"] = args.rows_per_condition
    folder = prepare_sachs(
        args.out, bnlearn_file=args.bnlearn_file, seed=args.seed, num_train=args.num_train, **options
    )
    from jspgfn.dataset import load_dataset

    dataset = load_dataset(folder)
    print(
        f"wrote {folder}: Sachs, d={dataset.num_variables}, {dataset.train.shape[0]} train / "
        f"{dataset.test.shape[0]} test rows (reference graph: {int(dataset.graph.sum())} edges)"
    )


def _held_out(value):
    if value is None:
        return None
    if value.strip().isdigit():
        return int(value)
    names = [name.strip() for name in value.split(",") if name.strip()]
    if not names:
        raise JspgfnError(f"--held-out names no gene: {value!r}")
    return names


def _run_gene_expression(args):
    from jspgfn.realdata.gene_expression import load_gene_expression
    from jspgfn.realdata.gene_expression_simulated import write_simulated_gene_expression

    _check_out(args.out)
    if args.input is None:
        if args.held_out is not None or args.cell_column is not None:
            raise JspgfnError("--held-out and --cell-column apply to --input, not to the simulated stand-in")
        dataset = write_simulated_gene_expression(
            args.out,
            num_genes=args.num_genes,
            num_train=args.num_train,
            num_test=args.num_test,
            num_train_knockouts=args.num_train_knockouts,
            num_test_knockouts=args.num_test_knockouts,
            transform=args.transform or "log1p",
            seed=args.seed,
        )
        what = "SIMULATED stand-in (sergio-rs)"
    else:
        dataset = load_gene_expression(
            args.input,
            args.out,
            target_column=args.target_column,
            held_out=_held_out(args.held_out),
            seed=args.seed,
            transform=args.transform or "none",
            cell_column=args.cell_column,
        )
        what = f"from {args.input}"
    print(
        f"wrote {args.out}: gene expression {what}, d={dataset.num_variables}, {dataset.train.shape[0]} train / "
        f"{dataset.test.shape[0]} test cells"
    )
