"""User-facing errors: the CLI prints their message on one line and exits non-zero."""

import numbers


class JspgfnError(Exception):
    """An error caused by the user's input (file, config, option), not by a bug."""


class DataError(JspgfnError):
    """A data file is malformed. The message names the file and the problem."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class OptionError(JspgfnError):
    """A setting out of its range: `<name> <problem>`. The library names the setting as Python does
    (`held_out`); the CLI shows the option's flag instead (`--held-out`) when the command has one."""

    def __init__(self, name, problem):
        self.name = name
        self.problem = problem
        super().__init__(f"{name} {problem}")


class OptionWarning(UserWarning):
    """A setting that runs but was not measured to work well as given (the CLI shows it on one line)."""


def check_count(name, value, low, high=None):
    """OptionError unless `value` is an integer (not a bool) in [low, high] (high None: no upper bound)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise OptionError(name, f"must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        limit = f">= {low}" if high is None else f"between {low} and {high}"
        raise OptionError(name, f"must be {limit}, got {value}")
