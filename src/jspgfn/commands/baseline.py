"""`jspgfn baseline`: fit a competitor method (jspgfn-baselines) and write PosteriorSamples, or list them."""

from jspgfn.commands.checks import check_output_file
from jspgfn.errors import JspgfnError


def add_subcommands(sub):
    p = sub.add_parser("baseline", help="fit a baseline method and write PosteriorSamples")
    p.add_argument("name", nargs="?", help="baseline name (see `jspgfn baseline --list`)")
    p.add_argument("data", nargs="?", help="dataset folder or CSV file")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the baselines (the method registry's folders), their parameters and capabilities",
    )
    p.add_argument("--model", default="lingauss", help="likelihood model: lingauss or mlp-gauss")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="hyper-parameter override (repeatable), value parsed as YAML",
    )
    p.add_argument("--out", help="samples.npz to write")
    p.set_defaults(run=_run_baseline)


def _run_baseline(args):
    import yaml

    from jspgfn.api import baseline
    from jspgfn.competitors import baseline_specs, baselines_package
    from jspgfn.gflownet.cli import parse_value

    if args.list:
        for name, spec in baseline_specs().items():
            capabilities = " ".join(f"{key}={value}" for key, value in spec["capabilities"].items())
            parameters = ", ".join(f"{key}={schema['default']}" for key, schema in spec["parameters"].items())
            print(
                f"{name:14s}{spec['display_name']}: {', '.join(spec['likelihoods'])}; {capabilities}\n"
                f"{'':14s}parameters: {parameters}"
            )
        return
    if args.name is None or args.data is None or args.out is None:
        raise JspgfnError("baseline needs NAME, DATA and --out (or --list)")
    params = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise JspgfnError(f"--param expects KEY=VALUE, got {item!r}")
        try:
            params[key] = parse_value(value)
        except yaml.YAMLError:
            raise JspgfnError(f"--param {item!r}: the value is not valid YAML") from None
    baselines_package(args.name).get_spec(args.name)  # an unknown name fails before the output path is checked
    check_output_file(args.out)
    samples = baseline(args.name, args.data, args.model, args.seed, **params)
    samples.save(args.out)
    print(f"wrote {args.out}: {samples.num_samples} samples")
