"""The competitor methods, which live in the separately installed package jspgfn-baselines (baselines/).

The core never imports that package by name (jspgfn-baselines depends on jspgfn, not the other way
round): it reads the methods' method.yaml files through the method registry (jspgfn.registry: the
workflow's checks, `jspgfn baseline --list`) and runs them through the entry point that jspgfn-baselines
declares in the group ENTRY_POINT_GROUP (baselines/pyproject.toml).
"""

from importlib.metadata import entry_points

from jspgfn.errors import JspgfnError

ENTRY_POINT_GROUP = "jspgfn.baselines"


def baselines_package(name=None):
    """The installed provider of the baselines (specs(), get_spec(name), fit_baseline(name, ...)), or a
    one-line error saying how to install it."""
    for entry_point in entry_points(group=ENTRY_POINT_GROUP, name="baselines"):
        try:
            return entry_point.load()
        except ImportError:
            break
    what = f"baseline '{name}' needs" if name else "the baselines need"
    raise JspgfnError(
        f"{what} the jspgfn-baselines package, which is not installed: "
        "pip install -e baselines (from a jspgfn checkout; `make setup` installs it)"
    )


def baseline_specs():
    """{baseline id: spec} of the method folders: the method registry's (the checkout's baselines/, read
    as files) when there is one, else the installed package's."""
    from jspgfn.registry import find_root, load_registry

    return load_registry().specs if find_root() is not None else baselines_package().specs()
