"""Checks of command-line options shared by the subcommands (argparse accepts what these reject)."""

import math

from jspgfn.errors import DataError, JspgfnError


def check_positive(option, value):
    """JspgfnError unless a numeric option is finite and > 0 (argparse's float() accepts nan and inf)."""
    if not (math.isfinite(value) and value > 0):
        raise JspgfnError(f"{option} must be a finite number > 0, got {value}")


def check_output_file(path):
    """DataError before any work when --out names an existing folder (the output is one file)."""
    from pathlib import Path

    if path is not None and Path(path).is_dir():
        raise DataError(path, "is a folder; --out names the file to write")
