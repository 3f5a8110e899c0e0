"""The competitor methods, which live in the separately installed package jspgfn-baselines (baselines/)."""

from jspgfn.errors import JspgfnError


def baselines_package(name=None):
    """The jspgfn_baselines package, or a one-line error saying how to install it."""
    try:
        import jspgfn_baselines
    except ImportError:
        what = f"baseline '{name}' needs" if name else "the baselines need"
        raise JspgfnError(
            f"{what} the jspgfn-baselines package, which is not installed: "
            "pip install -e baselines (from a jspgfn checkout; `make setup` installs it)"
        ) from None
    return jspgfn_baselines
