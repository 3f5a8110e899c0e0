"""The `jspgfn` command. Each subcommand parses its options and calls one library function.

Errors caused by the input (bad file, bad option) print one line
`jspgfn: error: <file>: <problem>` on stderr and exit with status 2; nothing is
left where a finished output file is expected. Warnings about the input (a constant
column) print one line `jspgfn: warning: <file>: <problem>` and the command goes on.

This module builds the parser and runs one subcommand. The subcommands live by family, each module
registering its own with add_subcommands(sub): commands/ (generate, exact, evaluate and aggregate, baseline,
probe and capabilities), realdata/cli.py, report/cli.py and gflownet/cli.py (train, sample).
"""

import argparse
import sys
import warnings

from jspgfn.errors import JspgfnError, OptionError, OptionWarning


def build_parser():
    parser = argparse.ArgumentParser(prog="jspgfn", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    from jspgfn.commands import baseline, capabilities, evaluate, exact, generate
    from jspgfn.gflownet import cli as train_sample
    from jspgfn.realdata import cli as realdata
    from jspgfn.report import cli as report

    for family in (generate, realdata, exact, evaluate, baseline, capabilities, report):
        family.add_subcommands(sub)
    train_sample.add_subcommands(sub)  # JSP-GFN: `jspgfn train` and `jspgfn sample`
    return parser


def _os_error_message(exc):
    """`<file>: <problem>` of an OSError from the operating system (file missing, a folder, no permission)."""
    problem = exc.strerror or str(exc)
    if exc.filename is None:
        return problem
    if exc.filename2 is not None:
        return f"{exc.filename} -> {exc.filename2}: {problem}"
    return f"{exc.filename}: {problem}"


def _error_message(exc, args):
    """The error's message; a setting the command has an option for is named by that option's flag."""
    if isinstance(exc, OptionError) and exc.name in vars(args):
        return f"--{exc.name.replace('_', '-')} {exc.problem}"
    return str(exc)


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning):
    """The input's warnings (DataWarning, OptionWarning) on one line like the errors; others as Python shows them."""
    from jspgfn.dataset import DataWarning

    if issubclass(category, (DataWarning, OptionWarning)):
        print(f"jspgfn: warning: {message}", file=sys.stderr if file is None else file)
    else:
        _default(message, category, filename, lineno, file, line)


def main(argv=None):
    """Run the command. Exit status 2 and one line `jspgfn: error: ...` for an error of the input
    (JspgfnError, or an OSError of a named file); any other exception is a bug and shows its traceback."""
    args = build_parser().parse_args(argv)
    from jspgfn.dataset import DataWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", DataWarning)
        warnings.showwarning = _show_warning
        try:
            status = args.run(args)  # None, or a status of the command's own (e.g. 3: training unfinished)
        except JspgfnError as exc:
            print(f"jspgfn: error: {_error_message(exc, args)}", file=sys.stderr)
            return 2
        except OSError as exc:
            if exc.errno is None:  # not from the operating system: a bug
                raise
            print(f"jspgfn: error: {_os_error_message(exc)}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("jspgfn: interrupted", file=sys.stderr)
            return 130
    return status or 0


if __name__ == "__main__":
    sys.exit(main())
