"""`jspgfn probe` (probe runs of one method) and `jspgfn capabilities` (Table A.1's tidy table)."""

from jspgfn.errors import JspgfnError


def add_subcommands(sub):
    p = sub.add_parser("probe", help="probe runs of one method for Table A.1 (non-linear model, sampler)")
    p.add_argument("--label", required=True, help="the method's id")
    p.add_argument("--method", required=True, help="its config entry as JSON (kind, name, display_name, params)")
    p.add_argument("--out", required=True, help="probe JSON to write")
    p.set_defaults(run=_run_probe)

    p = sub.add_parser("capabilities", help="tidy capabilities table (Table A.1) from probes and runs")
    p.add_argument("probes", nargs="+", help="probe JSON files written by `jspgfn probe`")
    p.add_argument("--metrics", required=True, help="metrics.csv with the methods' runs (share_cyclic)")
    p.add_argument("--out", required=True, help="capabilities.csv to write")
    p.set_defaults(run=_run_capabilities)


def _run_probe(args):
    import json

    from jspgfn.atomic import write_json
    from jspgfn.capabilities import declared, probe

    try:
        method = json.loads(args.method)
    except json.JSONDecodeError as exc:
        raise JspgfnError(f"--method is not valid JSON ({exc})") from None
    record = {
        "label": args.label,
        "display_name": method.get("display_name") or args.label,
        "declared": declared(method),
        "probes": probe(method),
    }
    write_json(args.out, record)
    print(f"wrote {args.out}")


def _run_capabilities(args):
    import json
    from pathlib import Path

    import pandas as pd

    from jspgfn import atomic
    from jspgfn.capabilities import capability_table
    from jspgfn.errors import DataError

    probes = []
    for path in args.probes:
        try:
            probes.append(json.loads(Path(path).read_text()))
        except (OSError, json.JSONDecodeError) as exc:
            raise DataError(path, f"not a readable probe JSON file ({exc})") from None
    table = capability_table(probes, pd.read_csv(args.metrics))
    with atomic.atomic_path(args.out) as tmp:
        table.to_csv(tmp, index=False)
    print(f"wrote {args.out}: {len(probes)} methods")
