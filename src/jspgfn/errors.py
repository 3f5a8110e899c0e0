"""User-facing errors: the CLI prints their message on one line and exits non-zero."""


class JspgfnError(Exception):
    """An error caused by the user's input (file, config, option), not by a bug."""


class DataError(JspgfnError):
    """A data file is malformed. The message names the file and the problem."""

    def __init__(self, path, problem):
        self.path = str(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")
