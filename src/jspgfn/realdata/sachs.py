"""Sachs et al. (2005) flow cytometry data as a discretised, interventional dataset folder.

The paper (section 5.3, appendix "Learning biological structures from real data") uses N = 4,200
measurements of d = 11 phosphoproteins from 7 experimental conditions (600 per condition), discretised
into 3 levels as in Eaton & Murphy (2007), and evaluates the interventional NLL on held-out
interventions. Two sources are accepted:

1. cdt (the Causal Discovery Toolbox) ships the raw continuous table `cyto_full_data.csv`
   (7,466 rows x 11 proteins, no condition column). It is found through the installed package's files,
   without importing cdt (`pip install --no-deps cdt` is enough: it is only a data source). The table
   is the 9 conditions of Sachs et al. concatenated in the order of CONDITIONS, with the block sizes
   853, 902, 911, 723, 810, 799, 848, 913, 707 (the row counts of Sachs et al.'s 9 files). The
   condition labels are RECONSTRUCTED from these block sizes (the file has no condition column; a
   change-point fit found the same boundaries within 12 rows): `meta.json` says so.
2. bnlearn's `sachs.interventional.txt` (Scutari's discretised interventional data: space-separated
   levels 1..3 of the 11 proteins and an `INT` column, the 1-based column of the intervened protein,
   0 for none), when a user supplies it. Its levels come from Sachs et al.'s own discretisation; its
   conditions are identified by their intervention target (INT), since the file has no condition label.

Discretisation of the raw cdt table (3 levels: 0 low, 1 average, 2 high). Sachs et al. discretised
with an information-preserving method (Hartemink's, also used by bnlearn: `discretize(method =
"hartemink", breaks = 3, ibreaks = 60, idisc = "quantile")` on the observational data), which keeps
the pairwise mutual information; that procedure and its exact cut points are not reproduced here.
The rule used instead is simple and documented: per protein, the cut points are the 1/3 and 2/3
quantiles (tertiles) of the raw values in the observational conditions (cd3cd28 and icam2, all their
rows, before subsampling), and every row of every condition is coded as level = (x > c1) + (x > c2).
Observational rows are thus about evenly spread over the 3 levels, and an inhibition or activation
shows as a shift of the intervened protein (or its descendants) towards low or high. The cut points
are written to meta.json. For Sachs et al.'s own levels, pass bnlearn's file.

Sampling and split (both sources): a numpy Generator seeded by `seed` draws `rows_per_condition` rows
(default 600) without replacement from each cdt condition, in the order of CONDITIONS; 7 conditions
form the training data (observational and interventional, N = 4,200) and 2 interventional conditions
(default psitect -> PIP2 and u0126 -> Mek, whose targets are intervened on in no training condition)
form the test data, so the test NLL is on interventions unseen in training. `num_train` (e.g. 100)
then keeps a uniform subsample of the training rows, drawn by the same Generator. Rows stay grouped
by condition in the order of CONDITIONS; meta.json records the row range of each condition.

graph.csv holds the 17-arc Sachs network (bnlearn's model string for Sachs et al. 2005, Fig. 3A, the
network they validated from the literature), a REFERENCE for comparison, not a ground truth.
"""

import contextlib
import csv
import dataclasses
import gzip
import hashlib
import importlib.metadata
import importlib.util
from pathlib import Path

import numpy as np

from jspgfn.dataset import Dataset, read_csv_matrix, write_dataset_folder
from jspgfn.errors import DataError, JspgfnError, check_count

GENERATOR_VERSION = 1
NAMES = ("Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk")
# Accepted column names (lower case) for each variable: Sachs et al.'s / cdt's, bnlearn's, and NAMES.
ALIASES = (
    ("raf", "praf"),
    ("mek", "pmek"),
    ("plcg", "plc", "plcgamma"),
    ("pip2",),
    ("pip3",),
    ("erk", "p44/42", "p44.42", "p44_42"),
    ("akt", "pakts473"),
    ("pka",),
    ("pkc",),
    ("p38",),
    ("jnk", "pjnk"),
)
LEVELS = ("low", "average", "high")
NUM_LEVELS = len(LEVELS)
ROWS_PER_CONDITION = 600
DEFAULT_TEST_CONDITIONS = ("psitect", "u0126")
DEFAULT_TEST_TARGETS = ("PIP2", "Mek")  # the same two conditions, as bnlearn's file identifies them
CDT_RELATIVE_PATH = "data/resources/cyto_full_data.csv"
CONDITION_LABEL_NOTE = (
    "RECONSTRUCTED from block sizes: cdt's cyto_full_data.csv has no condition column; its rows are read "
    "as the 9 conditions of Sachs et al. (2005) concatenated in the order cd3cd28, icam2, aktinhib, g0076, "
    "psitect, u0126, ly, pma, b2camp with sizes 853, 902, 911, 723, 810, 799, 848, 913, 707 (the row counts "
    "of their 9 files; a change-point fit found the same boundaries within 12 rows). The order is an inference."
)
GRAPH_NOTE = (
    "REFERENCE, not a ground truth: the 17-arc Sachs network (Sachs et al. 2005, Fig. 3A, as bnlearn's "
    "model string [PKC][PKA|PKC][Raf|PKC:PKA][Mek|PKC:PKA:Raf][Erk|Mek:PKA][Akt|Erk:PKA][P38|PKC:PKA]"
    "[Jnk|PKC:PKA][Plcg][PIP3|Plcg][PIP2|Plcg:PIP3]); the true signalling network is not known"
)


@dataclasses.dataclass(frozen=True)
class Condition:
    """One experimental condition of Sachs et al. (2005).

    label: short name (as in their file names); reagents: what the cells received; size: rows in cdt's
    table; targets: the intervened variables (names in NAMES), () for none; effect: 'inhibition',
    'activation' or 'none'; source: where the target comes from.
    """

    label: str
    reagents: str
    size: int
    targets: tuple
    effect: str
    source: str


# Intervention targets. Sachs et al. (2005), Science 308:523, Fig. 2 / table of reagents: the general
# stimulation anti-CD3 + anti-CD28 (with or without ICAM-2) targets no measured protein; each specific
# reagent inhibits or activates one protein. Eaton & Murphy (2007, AISTATS, "Exact Bayesian structure
# learning from uncertain interventions", Table 1 / Fig. 5) model the same 9 conditions with these
# targets, and bnlearn's sachs.interventional.txt (Scutari) codes them in its INT column.
CONDITIONS = (
    # Sachs et al. 2005: general stimulation of the T-cell receptor, no specific target.
    Condition("cd3cd28", "anti-CD3 + anti-CD28", 853, (), "none", "Sachs et al. 2005 (general stimulus)"),
    # Sachs et al. 2005: ICAM-2 added to the general stimulation (LFA-1 co-stimulus), no specific target.
    Condition("icam2", "anti-CD3 + anti-CD28 + ICAM-2", 902, (), "none", "Sachs et al. 2005 (general stimulus)"),
    # Sachs et al. 2005: AKT inhibitor -> Akt; Eaton & Murphy 2007 and bnlearn INT: Akt.
    Condition("aktinhib", "anti-CD3/CD28 + AKT inhibitor", 911, ("Akt",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: G06976 inhibits PKC; Eaton & Murphy 2007 and bnlearn INT: PKC.
    Condition("g0076", "anti-CD3/CD28 + G06976", 723, ("PKC",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: psitectorigenin inhibits PIP2; Eaton & Murphy 2007 and bnlearn INT: PIP2.
    Condition("psitect", "anti-CD3/CD28 + psitectorigenin", 810, ("PIP2",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: U0126 inhibits MEK; Eaton & Murphy 2007 and bnlearn INT: Mek.
    Condition("u0126", "anti-CD3/CD28 + U0126", 799, ("Mek",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: LY294002 inhibits PI3K (not measured), blocking Akt phosphorylation; coded as an
    # intervention on Akt (as bnlearn's INT column and Eaton & Murphy 2007 do). Some works use PIP3 instead.
    Condition("ly", "anti-CD3/CD28 + LY294002", 848, ("Akt",), "inhibition", "Sachs et al. 2005 (PI3K -> Akt)"),
    # Sachs et al. 2005: PMA activates PKC; Eaton & Murphy 2007 and bnlearn INT: PKC.
    Condition("pma", "PMA", 913, ("PKC",), "activation", "Sachs et al. 2005"),
    # Sachs et al. 2005: beta2cAMP activates PKA; Eaton & Murphy 2007 and bnlearn INT: PKA.
    Condition("b2camp", "beta2cAMP", 707, ("PKA",), "activation", "Sachs et al. 2005"),
)
# The 17 arcs of the reference network (Sachs et al. 2005, Fig. 3A; bnlearn's Sachs model string).
REFERENCE_EDGES = (
    ("PKC", "PKA"),
    ("PKC", "Raf"),
    ("PKA", "Raf"),
    ("PKC", "Mek"),
    ("PKA", "Mek"),
    ("Raf", "Mek"),
    ("Mek", "Erk"),
    ("PKA", "Erk"),
    ("Erk", "Akt"),
    ("PKA", "Akt"),
    ("PKC", "P38"),
    ("PKA", "P38"),
    ("PKC", "Jnk"),
    ("PKA", "Jnk"),
    ("Plcg", "PIP3"),
    ("Plcg", "PIP2"),
    ("PIP3", "PIP2"),
)


# ----------------------------------------------------------------- small pure pieces


def reference_graph():
    """The 17-arc reference network as uint8 [11, 11] in the order of NAMES ([i, j] = 1: i -> j)."""
    graph = np.zeros((len(NAMES), len(NAMES)), dtype=np.uint8)
    for parent, child in REFERENCE_EDGES:
        graph[NAMES.index(parent), NAMES.index(child)] = 1
    return graph


def column_order(header, source):
    """Index into NAMES of each header name: tuple [11]. Raises DataError(source, ...) unless the header
    names each of the 11 proteins exactly once (any accepted alias, any case, any order)."""
    order = []
    for name in header:
        key = name.strip().strip('"').lower()
        matches = [v for v, aliases in enumerate(ALIASES) if key in aliases]
        if not matches:
            raise DataError(source, f"unknown column '{name}': expected the 11 Sachs proteins {', '.join(NAMES)}")
        order.append(matches[0])
    missing = [NAMES[v] for v in range(len(NAMES)) if v not in order]
    repeated = sorted({NAMES[v] for v in order if order.count(v) > 1})
    if missing or repeated:
        problem = f"missing {', '.join(missing)}" if missing else f"{', '.join(repeated)} named twice"
        raise DataError(source, f"header must name each of the 11 Sachs proteins once ({problem})")
    return tuple(order)


def reorder_columns(values, order):
    """values [N, 11] in file order -> [N, 11] in the order of NAMES (order from column_order)."""
    out = np.empty_like(values)
    out[:, list(order)] = values
    return out


def split_blocks(values, sizes):
    """Consecutive blocks of rows: values [sum(sizes), d] -> list of [sizes[c], d]."""
    bounds = np.cumsum((0,) + tuple(sizes))
    return [values[bounds[c] : bounds[c + 1]] for c in range(len(sizes))]


def tertile_cuts(values):
    """Per-column cut points at the 1/3 and 2/3 quantiles: values [N, d] -> float [2, d]."""
    return np.quantile(np.asarray(values, dtype=np.float64), [1.0 / 3.0, 2.0 / 3.0], axis=0)


def discretise(values, cuts):
    """Level codes 0 (low), 1 (average), 2 (high): values [N, d], cuts [2, d] -> int64 [N, d]."""
    values = np.asarray(values, dtype=np.float64)
    return (values > cuts[0]).astype(np.int64) + (values > cuts[1]).astype(np.int64)


def intervention_mask(targets, num_rows):
    """uint8 [num_rows, 11], 1 in the columns of the intervened variables (names in NAMES)."""
    mask = np.zeros((num_rows, len(NAMES)), dtype=np.uint8)
    for name in targets:
        mask[:, NAMES.index(name)] = 1
    return mask


def sample_rows(rng, num_available, num):
    """Sorted indices of `num` rows drawn without replacement among `num_available`: int [num]."""
    return np.sort(rng.choice(num_available, size=num, replace=False))


def _sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# ----------------------------------------------------------------- assembling a dataset


def assemble(blocks, conditions, test_labels, rng, num_train=None):
    """Training and test data from per-condition level codes.

    blocks: list of int [n_c, 11] codes (one per condition); conditions: the matching Condition-like
    objects (label, targets); test_labels: labels of the held-out conditions; rng: numpy Generator
    (used only when num_train is set). Returns (train float [N, 11], train_int uint8 [N, 11], test,
    test_int, row ranges {"train": [[label, start, stop], ...], "test": [...]}).
    """
    parts = {"train": [], "test": []}
    for codes, condition in zip(blocks, conditions):
        split = "test" if condition.label in test_labels else "train"
        parts[split].append((condition.label, codes, intervention_mask(condition.targets, len(codes))))
    train_labels = [label for label, _, _ in parts["train"]]
    train = np.concatenate([codes for _, codes, _ in parts["train"]]).astype(np.float64)
    train_int = np.concatenate([mask for _, _, mask in parts["train"]])
    label_of_row = np.concatenate([[i] * len(codes) for i, (_, codes, _) in enumerate(parts["train"])])
    if num_train is not None:
        check_count("num_train", num_train, 1, len(train))
        keep = sample_rows(rng, len(train), num_train)
        train, train_int, label_of_row = train[keep], train_int[keep], label_of_row[keep]
    ranges = {"train": [], "test": []}
    for i, label in enumerate(train_labels):
        rows = np.flatnonzero(label_of_row == i)
        if len(rows):
            ranges["train"].append([label, int(rows[0]), int(rows[-1]) + 1])
    start = 0
    for label, codes, _ in parts["test"]:
        ranges["test"].append([label, start, start + len(codes)])
        start += len(codes)
    test = np.concatenate([codes for _, codes, _ in parts["test"]]).astype(np.float64)
    test_int = np.concatenate([mask for _, _, mask in parts["test"]])
    return train, train_int, test, test_int, ranges


def _check_test_labels(test_labels, labels, what):
    test_labels = tuple(test_labels)
    unknown = [label for label in test_labels if label not in labels]
    if unknown:
        raise JspgfnError(f"unknown {what} {', '.join(map(str, unknown))}: choose among {', '.join(labels)}")
    if not test_labels or len(set(test_labels)) == len(labels):
        raise JspgfnError(f"hold out at least one {what} and keep at least one for training")
    return test_labels


def _meta(source, source_file, seed, conditions, blocks, ranges, discretisation, extra):
    """The metadata dict shared by both sources."""
    test_labels = [label for label, _, _ in ranges["test"]]
    return {
        "generator": "jspgfn.realdata.sachs",
        "generator_version": GENERATOR_VERSION,
        "dataset": "sachs",
        "source": source,
        "source_file": str(source_file),
        "source_sha256": _sha256(source_file),
        "seed": seed,
        "model": "mlp-categorical",
        "num_levels": NUM_LEVELS,
        "levels": {str(code): name for code, name in enumerate(LEVELS)},
        "num_variables": len(NAMES),
        "num_train": int(sum(stop - start for _, start, stop in ranges["train"])),
        "num_test": int(sum(stop - start for _, start, stop in ranges["test"])),
        "train_conditions": [label for label, _, _ in ranges["train"]],
        "test_conditions": test_labels,
        "rows": ranges,
        "conditions": [
            {
                "label": c.label,
                "reagents": c.reagents,
                "targets": list(c.targets),
                "effect": c.effect,
                "target_source": c.source,
                "rows_used": int(len(codes)),
                "split": "test" if c.label in test_labels else "train",
            }
            for c, codes in zip(conditions, blocks)
        ],
        "discretisation": discretisation,
        "graph": GRAPH_NOTE,
        "graph_is_ground_truth": False,
        "num_edges": len(REFERENCE_EDGES),
        **extra,
    }


# ----------------------------------------------------------------- source 1: cdt's raw table


def cdt_data_path():
    """Path of cdt's cyto_full_data.csv, found without importing cdt (raises JspgfnError if absent)."""
    candidates = []
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("cdt")  # a top-level spec: cdt/__init__.py is not executed
        if spec is not None and spec.submodule_search_locations:
            candidates += [Path(p) / CDT_RELATIVE_PATH for p in spec.submodule_search_locations]
    with contextlib.suppress(importlib.metadata.PackageNotFoundError):
        for file in importlib.metadata.files("cdt") or ():
            if str(file).replace("\\", "/").endswith(CDT_RELATIVE_PATH):
                candidates.append(Path(file.locate()))
    for path in candidates:
        if path.is_file():
            return path
    raise JspgfnError(
        "the Sachs flow cytometry table is taken from the package cdt (Causal Discovery Toolbox), which is "
        "not installed: run `pip install --no-deps cdt` (it is only a data source), or pass bnlearn's "
        "sachs.interventional.txt"
    )


def read_cdt_table(path):
    """cdt's raw table: float [7466, 11] in the order of NAMES (raises DataError naming the file)."""
    header, values = read_csv_matrix(path)
    order = column_order(header, path)
    expected = sum(c.size for c in CONDITIONS)
    if len(values) != expected:
        raise DataError(
            path,
            f"has {len(values)} data rows, expected {expected} (the 9 Sachs conditions of sizes "
            f"{', '.join(str(c.size) for c in CONDITIONS)}): not cdt's cyto_full_data.csv",
        )
    if np.any(values < 0):
        r, c = (int(i) for i in np.argwhere(values < 0)[0])
        raise DataError(path, f"line {r + 2}, column '{header[c]}': negative concentration {float(values[r, c])!r}")
    return reorder_columns(values, order)


def sachs_from_cdt(
    seed=0, rows_per_condition=ROWS_PER_CONDITION, test_conditions=DEFAULT_TEST_CONDITIONS, num_train=None, path=None
):
    """The Sachs Dataset from cdt's raw table (`path`, default: found with cdt_data_path).

    Returns a Dataset with train [N, 11] codes (N = 7 * rows_per_condition, or num_train), test
    [2 * rows_per_condition, 11], both intervention masks, the reference graph and metadata.
    """
    check_count("seed", seed, 0)
    check_count("rows_per_condition", rows_per_condition, 1, min(c.size for c in CONDITIONS))
    test_labels = _check_test_labels(test_conditions, [c.label for c in CONDITIONS], "condition")
    path = Path(path) if path is not None else cdt_data_path()
    raw = split_blocks(read_cdt_table(path), [c.size for c in CONDITIONS])
    observational = np.concatenate([block for block, c in zip(raw, CONDITIONS) if not c.targets])
    cuts = tertile_cuts(observational)
    rng = np.random.default_rng(seed)
    blocks = [discretise(block[sample_rows(rng, len(block), rows_per_condition)], cuts) for block in raw]
    train, train_int, test, test_int, ranges = assemble(blocks, CONDITIONS, test_labels, rng, num_train)
    discretisation = {
        "rule": (
            "per protein, tertiles (1/3 and 2/3 quantiles) of the raw values of the observational conditions "
            "(cd3cd28, icam2; all rows); level = (x > c1) + (x > c2): 0 low, 1 average, 2 high"
        ),
        "cut_points": {name: [float(cuts[0, v]), float(cuts[1, v])] for v, name in enumerate(NAMES)},
    }
    extra = {"condition_labels": CONDITION_LABEL_NOTE, "rows_per_condition": rows_per_condition}
    meta = _meta("cdt", path, seed, CONDITIONS, blocks, ranges, discretisation, extra)
    return Dataset(
        train=train,
        names=NAMES,
        test=test,
        graph=reference_graph(),
        train_interventions=train_int,
        test_interventions=test_int,
        meta=meta,
        source=str(path),
    )


# ----------------------------------------------------------------- source 2: bnlearn's discretised file


def _open_text(path):
    return gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else open(path, encoding="utf-8-sig")


def read_bnlearn_interventional(path):
    """bnlearn's sachs.interventional.txt (optionally .gz): (codes int64 [N, 11] in 0..2 in the order of
    NAMES, target int64 [N]: index into NAMES of the intervened protein, -1 for none).

    The file is whitespace-separated with a header of the 11 proteins and INT; levels are 1..3; INT is the
    1-based position of the intervened protein among the file's columns, 0 for none. Every malformed
    input raises DataError naming the file, the line and the problem.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        with _open_text(path) as handle:
            lines = [(n + 1, line.split()) for n, line in enumerate(handle)]
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise DataError(path, f"not a text file ({exc.__class__.__name__})") from None
    lines = [(n, tokens) for n, tokens in lines if tokens]
    if not lines:
        raise DataError(path, "empty file: expected a header of the 11 Sachs proteins and INT")
    header = [token.strip('"') for token in lines[0][1]]
    if [h.upper() for h in header].count("INT") != 1:
        raise DataError(path, "header has no INT column (bnlearn's sachs.interventional.txt has one)")
    int_col = [h.upper() for h in header].index("INT")
    protein_cols = [c for c in range(len(header)) if c != int_col]
    order = column_order([header[c] for c in protein_cols], path)
    if len(lines) == 1:
        raise DataError(path, "no observations below the header")
    codes = np.empty((len(lines) - 1, len(NAMES)), dtype=np.int64)
    target = np.empty(len(lines) - 1, dtype=np.int64)
    for r, (line, tokens) in enumerate(lines[1:]):
        tokens = [token.strip('"') for token in tokens]
        if len(tokens) != len(header):
            raise DataError(path, f"line {line} has {len(tokens)} values, the header has {len(header)} (ragged row)")
        for c, token in enumerate(tokens):
            name = header[c]
            if not token.isdigit():
                raise DataError(path, f"line {line}, column '{name}': expected a non-negative integer, got {token!r}")
            value = int(token)
            if c == int_col:
                if value > len(protein_cols):
                    raise DataError(path, f"line {line}, column 'INT': {value} is not 0 or a protein column 1..11")
                target[r] = -1 if value == 0 else order[value - 1]
            elif not 1 <= value <= NUM_LEVELS:
                raise DataError(path, f"line {line}, column '{name}': level {value} is not 1, 2 or 3")
            else:
                codes[r, order[protein_cols.index(c)]] = value - 1
    return codes, target


def sachs_from_bnlearn(path, seed=0, test_targets=DEFAULT_TEST_TARGETS, num_train=None):
    """The Sachs Dataset from bnlearn's discretised sachs.interventional.txt (all its rows).

    Conditions are the groups of rows with the same INT (the file has no condition label): 'observational'
    (INT 0) and one per intervened protein, labelled by that protein. The groups whose target is in
    `test_targets` (default PIP2 and Mek: psitect and u0126, as for cdt's table) are the test data.
    """
    check_count("seed", seed, 0)
    path = Path(path)
    codes, target = read_bnlearn_interventional(path)
    present = sorted(set(target.tolist()), key=lambda t: (t >= 0, t))
    conditions = [
        Condition(
            "observational" if t < 0 else NAMES[t],
            "as coded in bnlearn's INT column",
            int(np.sum(target == t)),
            () if t < 0 else (NAMES[t],),
            "none" if t < 0 else "intervention",
            "bnlearn sachs.interventional.txt INT column",
        )
        for t in present
    ]
    test_labels = _check_test_labels(test_targets, [c.label for c in conditions], "intervention target")
    if "observational" in test_labels:
        raise JspgfnError("the observational rows cannot be held out: hold out intervention targets")
    blocks = [codes[target == t] for t in present]
    rng = np.random.default_rng(seed)
    train, train_int, test, test_int, ranges = assemble(blocks, conditions, test_labels, rng, num_train)
    discretisation = {
        "rule": "as supplied: bnlearn's levels 1..3 (Sachs et al.'s discretisation) minus 1: 0 low, 1 average, 2 high"
    }
    extra = {
        "condition_labels": "groups of rows with the same INT value of bnlearn's file (labelled by the target)",
        "rows_per_condition": None,
    }
    meta = _meta("bnlearn", path, seed, conditions, blocks, ranges, discretisation, extra)
    return Dataset(
        train=train,
        names=NAMES,
        test=test,
        graph=reference_graph(),
        train_interventions=train_int,
        test_interventions=test_int,
        meta=meta,
        source=str(path),
    )


# ----------------------------------------------------------------- writing


def prepare_sachs(out, bnlearn_file=None, seed=0, num_train=None, **options):
    """Write the Sachs dataset folder `out` and return its path.

    From bnlearn's file when `bnlearn_file` is given (options: test_targets), else from cdt's raw table
    (options: rows_per_condition, test_conditions, path). `num_train` keeps a subsample of the training
    rows (the paper's N = 100 experiment). Nothing is written when the input is malformed.
    """
    if bnlearn_file is not None:
        dataset = sachs_from_bnlearn(bnlearn_file, seed=seed, num_train=num_train, **options)
    else:
        dataset = sachs_from_cdt(seed=seed, num_train=num_train, **options)
    write_dataset_folder(out, dataset)
    return Path(out)


def write_bnlearn_format(path, codes, target):
    """Write codes int [N, 11] (0..2, order of NAMES) and target int [N] (-1 or index into NAMES) in
    bnlearn's sachs.interventional.txt format (levels 1..3, INT 1-based, 0 for none); for tests and
    for users who want to hand the cdt-derived data to bnlearn."""
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle, delimiter=" ", lineterminator="\n")
        writer.writerow(list(NAMES) + ["INT"])
        for row, t in zip(np.asarray(codes), np.asarray(target)):
            writer.writerow([int(v) + 1 for v in row] + [int(t) + 1])
