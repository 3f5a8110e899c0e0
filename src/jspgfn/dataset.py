"""Reading and writing dataset folders (DESIGN.md contract) and plain CSV files.

A dataset folder holds:
  train.csv, test.csv          header = variable names, one row per observation
  graph.csv                    optional true adjacency (header; [i, j] = 1 means i -> j)
  meta.json                    optional generator metadata
  train_interventions.csv,     optional, same shape as the data, 1 where the
  test_interventions.csv       variable was intervened on in that row
A plain CSV file is accepted anywhere a dataset is: it is the training data,
with no test set, no graph and no interventions.
"""

import contextlib
import csv
import dataclasses
import hashlib
import json
import math
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError

# Largest accepted |value| in a data file. The models compute squares and products of the data and
# sum them over rows: the JAX likelihoods and JSP-GFN's training run in float32 (largest value 3.4e38),
# the closed forms in float64. At 1e15 a squared value divided by the default noise variance 0.01 is
# 1e32, which leaves a margin of 1e6 for the sums over rows and variables; 1e300 squared is inf even
# in float64 and turns every result into NaN. Data this large is refused with a hint to rescale it.
MAX_ABS_VALUE = 1e15
MAX_ABS_TEXT = "1e15"  # for messages


class DataWarning(UserWarning):
    """A suspicious but usable data file; the message names the file (the CLI prints it on one line)."""


@dataclasses.dataclass(frozen=True)
class Dataset:
    """Observations and what is known about them.

    Attributes:
      train: float [N, d].
      test: float [N', d] or None.
      names: the d variable names.
      graph: uint8 [d, d] true adjacency or None.
      train_interventions / test_interventions: uint8 like train / test, or None.
      meta: dict (generator metadata; empty for user data).
      source: where it was read from (for messages).
    """

    train: np.ndarray
    names: tuple
    test: np.ndarray | None = None
    graph: np.ndarray | None = None
    train_interventions: np.ndarray | None = None
    test_interventions: np.ndarray | None = None
    meta: dict = dataclasses.field(default_factory=dict)
    source: str = ""

    @property
    def num_variables(self):
        return self.train.shape[1]

    def fingerprint(self):
        """The dataset's identity: data_fingerprint of the training data and its interventions."""
        return data_fingerprint(self.train, self.train_interventions)


def data_fingerprint(train, interventions=None):
    """sha256 (hex) of the training data as the models see it: float32 [N, d] bytes (C order), then the
    uint8 interventions when any row is intervened on. Recorded as `dataset_sha256` by every writer of
    PosteriorSamples and exact posteriors, and compared by `jspgfn evaluate`. It equals the
    `data_sha256` of a JSP-GFN run's config.json (JSP-GFN trains on float32 data), so the file name or
    folder of the data does not matter, only its values.
    """
    digest = hashlib.sha256(np.asarray(train, dtype=np.float32).tobytes())
    if interventions is not None and np.any(interventions):
        digest.update(np.asarray(interventions).astype(np.uint8).tobytes())
    return digest.hexdigest()


def value_problem(value):
    """None when a data value is usable, else the problem (for 'line L, column C: <problem>')."""
    if not math.isfinite(value):
        return "is not finite"
    if abs(value) > MAX_ABS_VALUE:
        return (
            f"is too large in magnitude (|x| > {MAX_ABS_TEXT}): squares and products of such values "
            "overflow the models' float32 arithmetic; rescale (e.g. standardise) the column"
        )
    return None


def check_values(values, source, names=None, what="data", first_line=None):
    """Raise DataError(source, ...) unless every entry of values [N, d] is finite and within MAX_ABS_VALUE;
    the message names the first bad row and column: `line L` of the file `source` when its rows start at
    line `first_line`, else `<what> row R` (1-based)."""
    values = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(values) | (np.abs(values) > MAX_ABS_VALUE)
    if np.any(bad):
        r, c = (int(i) for i in np.argwhere(bad)[0])
        column = names[c] if names is not None else str(c)
        value = float(values[r, c])
        where = f"line {r + first_line}" if first_line is not None else f"{what} row {r + 1}"
        raise DataError(source, f"{where}, column '{column}': value {value!r} {value_problem(value)}")


def warn_constant_columns(values, names, source):
    """DataWarning (one line, naming the file and the columns) when a column of the training data is constant.

    A constant variable has no variance: its regressions are degenerate and some methods (B-PC's
    independence tests) then make it a parent or child of everything. Returns the constant names.
    """
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[0] == 0:
        return []
    constant = [str(names[c]) for c in range(values.shape[1]) if np.all(values[:, c] == values[0, c])]
    if not constant:
        return constant
    if values.shape[0] == 1:
        problem = "has a single observation, so every column is constant"
    else:
        listed = _listed(constant)
        noun = "column" if len(constant) == 1 else "columns"
        verb = "is" if len(constant) == 1 else "are"
        problem = (
            f"{noun} {listed} {verb} constant: a variable without variance carries no information and makes "
            "some methods unreliable (drop it or check the file)"
        )
    warnings.warn(DataWarning(f"{source}: {problem}"), stacklevel=3)
    return constant


def _listed(names):
    return ", ".join(f"'{name}'" for name in names)


def warn_duplicate_columns(values, names, source):
    """DataWarning when columns of the training data are exact copies of one another (at least two rows):
    a copy is perfectly predicted by its original, so the graph between them is arbitrary and the
    regressions on both are singular. Returns the copies' names (each after its first column)."""
    values = np.asarray(values)
    if values.ndim != 2 or values.shape[0] < 2:
        return []
    _, first, inverse = np.unique(values.T, axis=0, return_index=True, return_inverse=True)
    inverse = np.ravel(inverse)
    copies = [(str(names[c]), str(names[first[inverse[c]]])) for c in range(values.shape[1]) if first[inverse[c]] != c]
    if copies:
        pairs = ", ".join(f"'{copy}' = '{original}'" for copy, original in copies)
        warnings.warn(
            DataWarning(
                f"{source}: duplicated columns ({pairs}): a copy of a variable makes the edge between them "
                "arbitrary and its regressions singular (drop the copies or check the file)"
            ),
            stacklevel=3,
        )
    return [copy for copy, _ in copies]


# A column whose standard deviation exceeds this is far from the scale the models assume (noise variance
# 0.01, weights and parameters N(0, 1)): every edge then buys a huge likelihood gain, and the posterior is
# the densest graph the prior allows. Standardised data has 1; the paper's synthetic data stays below 100.
MAX_USUAL_STD = 1e3


def warn_scale(values, names, source):
    """DataWarning naming the columns whose standard deviation exceeds MAX_USUAL_STD. Returns their names."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[0] < 2:
        return []
    std = values.std(axis=0)
    large = [str(names[c]) for c in np.flatnonzero(std > MAX_USUAL_STD)]
    if large:
        warnings.warn(
            DataWarning(
                f"{source}: column(s) {_listed(large)} have standard deviations up to {float(std.max()):.3g}, far "
                "from the scale the models assume (noise variance 0.01, N(0, 1) weights): standardise the "
                "columns, or set the models' obs_var and prior_var to the data's scale"
            ),
            stacklevel=3,
        )
    return large


def warn_about_columns(values, names, source):
    """The warnings about a training table: constant, duplicated and badly scaled columns."""
    warn_constant_columns(values, names, source)
    warn_duplicate_columns(values, names, source)
    warn_scale(values, names, source)


# ----------------------------------------------------------------- reading


def read_csv_matrix(path, expect_names=None, binary=False):
    """Parse a numeric CSV with a header row. Returns (names, float64 [rows, cols]).

    Every malformed input raises DataError naming the file, the line and the problem:
    empty file, duplicate or empty names, ragged rows, missing or non-numeric values,
    infinities, values beyond MAX_ABS_VALUE, a header that differs from `expect_names`,
    non-0/1 entries when `binary`. A UTF-8 byte-order mark (as Excel writes) is dropped.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.reader(handle))
    except UnicodeDecodeError:
        raise DataError(path, "not a text CSV file (cannot decode as UTF-8)") from None
    except csv.Error as exc:
        raise DataError(path, f"not a valid CSV file ({exc})") from None
    rows = [row for row in rows if row and any(cell.strip() for cell in row)]
    if not rows:
        raise DataError(path, "empty file: expected a header row of variable names")
    names = tuple(cell.strip() for cell in rows[0])
    if any(not name for name in names):
        raise DataError(path, "header has an empty variable name")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DataError(path, f"duplicate variable names in header: {', '.join(duplicates)}")
    if expect_names is not None and names != tuple(expect_names):
        raise DataError(path, f"header {list(names)} does not match the training data {list(expect_names)}")
    if len(rows) == 1:
        raise DataError(path, "no observations below the header")
    values = np.empty((len(rows) - 1, len(names)), dtype=np.float64)
    for r, row in enumerate(rows[1:]):
        line = r + 2
        if len(row) != len(names):
            raise DataError(path, f"line {line} has {len(row)} values, the header has {len(names)} (ragged row)")
        for c, cell in enumerate(row):
            text = cell.strip()
            if text == "" or text.lower() in ("na", "nan", "null", "none"):
                raise DataError(path, f"line {line}, column '{names[c]}': missing value")
            try:
                value = float(text)
            except ValueError:
                raise DataError(path, f"line {line}, column '{names[c]}': non-numeric value {text!r}") from None
            problem = value_problem(value)
            if problem is not None:
                raise DataError(path, f"line {line}, column '{names[c]}': value {text!r} {problem}")
            if binary and value not in (0.0, 1.0):
                raise DataError(path, f"line {line}, column '{names[c]}': expected 0 or 1, got {text!r}")
            values[r, c] = value
    return names, values


def load_dataset(path):
    """Load a dataset folder or a plain CSV file into a Dataset (raises DataError).

    A constant, duplicated or badly scaled column of the training data gives a DataWarning
    (warn_about_columns).
    """
    path = Path(path)
    if path.is_file():
        names, train = read_csv_matrix(path)
        warn_about_columns(train, names, path)
        return Dataset(train=train, names=names, source=str(path))
    if not path.is_dir():
        raise DataError(path, "no such file or dataset folder")
    train_path = path / "train.csv"
    if not train_path.is_file():
        raise DataError(path, "dataset folder has no train.csv")
    names, train = read_csv_matrix(train_path)
    warn_about_columns(train, names, train_path)

    def optional(name, binary=False, shape=None):
        file = path / name
        if not file.is_file():
            return None
        _, values = read_csv_matrix(file, expect_names=names, binary=binary)
        if shape is not None and values.shape != shape:
            raise DataError(file, f"expected shape {shape}, got {values.shape}")
        return values

    d = len(names)
    test = optional("test.csv")
    graph = optional("graph.csv", binary=True, shape=(d, d))
    if graph is not None:
        graph = graph.astype(np.uint8)
        from jspgfn.graphs import is_dag  # local import keeps dataset.py light

        if np.any(np.diag(graph)) or not is_dag(graph):
            raise DataError(path / "graph.csv", "the true graph is not a DAG")
    train_int = optional("train_interventions.csv", binary=True, shape=train.shape)
    test_int = optional("test_interventions.csv", binary=True, shape=None if test is None else test.shape)
    if test_int is not None and test is None:
        raise DataError(path / "test_interventions.csv", "present but there is no test.csv")
    meta = {}
    meta_path = path / "meta.json"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text())
        except json.JSONDecodeError as exc:
            raise DataError(meta_path, f"invalid JSON ({exc})") from None
    as_u8 = lambda a: None if a is None else a.astype(np.uint8)  # noqa: E731
    return Dataset(
        train=train,
        names=names,
        test=test,
        graph=graph,
        train_interventions=as_u8(train_int),
        test_interventions=as_u8(test_int),
        meta=meta,
        source=str(path),
    )


# ----------------------------------------------------------------- writing


# The files a dataset folder consists of (the module docstring); nothing else is ever written into one.
DATASET_FILES = frozenset(
    ("train.csv", "test.csv", "graph.csv", "meta.json", "train_interventions.csv", "test_interventions.csv")
)


def _csv_text(names, values, integer=False):
    fmt = (lambda v: str(int(v))) if integer else (lambda v: repr(float(v)))
    lines = [",".join(names)]
    lines += [",".join(fmt(v) for v in row) for row in np.asarray(values)]
    return "\n".join(lines) + "\n"


def _check_dataset_values(dataset, train_source, test_source):
    """check_values of the training and test data, the messages naming train_source and test_source."""
    check_values(dataset.train, train_source, dataset.names, what="training data")
    if dataset.test is not None:
        check_values(dataset.test, test_source, dataset.names, what="test data")


def write_dataset(folder, dataset):
    """Write a Dataset as a dataset folder; each file appears whole or not at all.

    Files of the folder's other contents are kept, except a dataset file (DATASET_FILES) that this dataset
    lacks: a train_interventions.csv left from an earlier dataset would otherwise be read with the new
    train.csv. A previous meta.json is removed first and the new one written last, so its presence marks a
    complete folder.
    """
    folder = Path(folder)
    _check_dataset_values(dataset, folder / "train.csv", folder / "test.csv")
    if folder.exists() and not folder.is_dir():
        raise DataError(folder, "exists and is not a folder: a dataset is written as a folder")
    folder.mkdir(parents=True, exist_ok=True)
    tables = {
        "train.csv": (dataset.train, False),
        "test.csv": (dataset.test, False),
        "graph.csv": (dataset.graph, True),
        "train_interventions.csv": (dataset.train_interventions, True),
        "test_interventions.csv": (dataset.test_interventions, True),
    }
    (folder / "meta.json").unlink(missing_ok=True)
    for name, (values, integer) in tables.items():
        if values is not None:
            atomic.write_text(folder / name, _csv_text(dataset.names, values, integer=integer))
        else:
            (folder / name).unlink(missing_ok=True)
    atomic.write_json(folder / "meta.json", dataset.meta)


def _foreign_entries(folder):
    """The names in `folder` that are not a dataset's own files (sub-folders marked with a trailing /)."""
    return sorted(
        entry.name + ("/" if entry.is_dir() else "")
        for entry in folder.iterdir()
        if entry.name not in DATASET_FILES or not entry.is_file()
    )


def _check_replaceable(out):
    """DataError unless `out` is absent, empty or holds only a dataset's own files (DATASET_FILES).

    Replacing the folder removes everything in it, so a folder that holds anything else (the user's
    files, sub-folders) is refused rather than emptied: no command deletes a file it did not write.
    """
    if out.exists() and not out.is_dir():
        raise DataError(out, "exists and is not a folder: a dataset is written as a folder")
    if not out.is_dir():
        return
    foreign = _foreign_entries(out)
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise DataError(
            out,
            f"holds {shown}, not part of a dataset folder: not replacing it (writing the dataset would delete "
            "them); give a new or empty folder as --out",
        )


def write_dataset_folder(out, dataset):
    """Write the dataset into a temporary folder next to `out`, then rename it onto `out`.

    A reader sees the old folder or the new one, never a half-written one. An existing `out` is replaced
    only when it is empty or holds nothing but a dataset's own files; anything else is refused.
    """
    out = Path(out)
    _check_replaceable(out)
    source = dataset.source or out  # what the user knows: never the temporary folder
    _check_dataset_values(dataset, source, source)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic.remove_stale_temporaries(out)  # the folders of a writer killed before its rename
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    except OSError as exc:
        raise DataError(out, f"cannot write in {out.parent} ({exc.strerror or exc})") from None
    old = None
    try:
        write_dataset(tmp, dataset)
        os.chmod(tmp, atomic.default_mode(folder=True))  # mkdtemp's 0700 would make the dataset private
        if out.exists():
            # ".tmp" as well: a kill before the rmtree below leaves it to remove_stale_temporaries
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
            os.replace(out, old)  # onto the empty folder mkdtemp made
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old is not None and not out.exists():
            with contextlib.suppress(OSError):
                os.replace(old, out)  # put the previous folder back
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
