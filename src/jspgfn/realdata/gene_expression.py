"""Gene expression data (paper section 5.3 and its appendix): single-cell counts with gene knockouts.

Two sources write the same dataset folder (see `jspgfn.dataset`):

1. `load_gene_expression` (this module): the user's own table, e.g. the Perturb-CITE-seq subset of the paper
   (61 genes, 2,628 cells, prepared as in the NODAGS-Flow repository). The input is a cells x genes
   table of non-negative expression values plus one column naming each cell's perturbation target: the
   knocked-out gene, or a control label ("control", "non-targeting", empty, ...). CSV, or h5ad (an
   AnnData file; needs the `anndata` package) with the targets in a column of `obs`. The cells of some
   knockouts (`held_out`) become the test set: an interventional log-likelihood on unseen interventions.
2. `simulate_gene_expression` (gene_expression_simulated.py; the default when the data is not at
   hand): a SIMULATED stand-in of the same shape made with sergio-rs from a random gene regulatory
   network, with control cells, single-gene knockouts and technical noise (dropouts: many exact zeros).
   Its true network is written as graph.csv and meta.json says "simulated".

This module reads the user's table; the knockout split and the transform (split_by_knockouts,
transform_values) serve both sources.

Shapes: N cells, d genes. Interventions are uint8 [N, d], 1 on the knocked-out gene of a cell.
"""

import csv
import math
import numbers
import warnings
from pathlib import Path

import numpy as np

from jspgfn.dataset import Dataset, DataWarning, check_values, write_dataset_folder
from jspgfn.errors import DataError, JspgfnError, OptionError

GENERATOR_VERSION = 1
# Labels of unperturbed cells, compared after strip() and lower().
CONTROL_LABELS = ("", "control", "ctrl", "non-targeting", "nontargeting", "non_targeting", "nt", "negative_control")
TRANSFORMS = ("none", "log1p")

# ----------------------------------------------------------------- the user's table


def read_expression_table(path, target_column="target", cell_column=None):
    """Read a cells x genes table with a perturbation-target column (CSV, or h5ad via anndata).

    Returns (genes: tuple of d names, values: float64 [N, d], targets: list of N strings).
    Raises DataError naming the file and the problem: missing target column, non-numeric, missing,
    non-finite or negative values, duplicate gene names, no cells.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    if path.suffix.lower() == ".h5ad":
        genes, values, targets = _read_h5ad(path, target_column)
    else:
        genes, values, targets = _read_csv(path, target_column, cell_column)
    check_expression_values(values, genes, path)
    return genes, values, targets


def _read_csv(path, target_column, cell_column):
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = [row for row in csv.reader(handle) if row and any(cell.strip() for cell in row)]
    except UnicodeDecodeError:
        raise DataError(path, "not a text CSV file (cannot decode as UTF-8)") from None
    except csv.Error as exc:
        raise DataError(path, f"not a valid CSV file ({exc})") from None
    if not rows:
        raise DataError(path, "empty file: expected a header row of gene names and a perturbation-target column")
    header = [cell.strip() for cell in rows[0]]
    if target_column not in header:
        raise DataError(path, f"no perturbation-target column '{target_column}' in the header (columns: {header})")
    if cell_column is not None and cell_column not in header:
        raise DataError(path, f"no cell-identifier column '{cell_column}' in the header")
    skip = {header.index(target_column)} | ({header.index(cell_column)} if cell_column is not None else set())
    gene_columns = [c for c in range(len(header)) if c not in skip]
    genes = tuple(header[c] for c in gene_columns)
    _check_gene_names(genes, path)
    if len(rows) == 1:
        raise DataError(path, "no cells below the header")
    values = np.empty((len(rows) - 1, len(genes)))
    targets = []
    for r, row in enumerate(rows[1:]):
        line = r + 2
        if len(row) != len(header):
            raise DataError(path, f"line {line} has {len(row)} values, the header has {len(header)} (ragged row)")
        targets.append(row[header.index(target_column)].strip())
        for k, c in enumerate(gene_columns):
            text = row[c].strip()
            if text == "" or text.lower() in ("na", "nan", "null", "none"):
                raise DataError(path, f"line {line}, gene '{header[c]}': missing value")
            try:
                values[r, k] = float(text)
            except ValueError:
                raise DataError(path, f"line {line}, gene '{header[c]}': non-numeric value {text!r}") from None
    return genes, values, targets


def _read_h5ad(path, target_column):
    try:
        import anndata  # optional: only for .h5ad input
    except ImportError:
        raise JspgfnError(
            f"{path}: reading .h5ad files needs the package 'anndata' (pip install anndata), "
            "or export the table to CSV with a perturbation-target column"
        ) from None
    try:
        adata = anndata.read_h5ad(path)
    except Exception as exc:  # h5py/anndata raise many kinds of errors on a bad file
        raise DataError(path, f"not a readable h5ad file ({type(exc).__name__}: {exc})") from None
    if target_column not in adata.obs.columns:
        raise DataError(
            path, f"no perturbation-target column '{target_column}' in obs (columns: {list(adata.obs.columns)})"
        )
    matrix = adata.X.toarray() if hasattr(adata.X, "toarray") else np.asarray(adata.X)
    genes = tuple(str(name) for name in adata.var_names)
    _check_gene_names(genes, path)
    if matrix.shape[0] == 0:
        raise DataError(path, "no cells in the file")
    try:
        values = np.asarray(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(path, f"the expression matrix is not numeric (dtype {matrix.dtype})") from None
    targets = ["" if _is_missing(t) else str(t).strip() for t in adata.obs[target_column].tolist()]
    return genes, values, targets


def _is_missing(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_gene_names(genes, path):
    if not genes:
        raise DataError(path, "no gene columns besides the perturbation-target column")
    if any(not name for name in genes):
        raise DataError(path, "a gene column has an empty name")
    duplicates = sorted({name for name in genes if genes.count(name) > 1})
    if duplicates:
        raise DataError(path, f"duplicate gene names: {', '.join(duplicates)}")


def check_expression_values(values, genes, path):
    """DataError naming the first cell (1-based) and gene whose value is not finite or is negative."""
    bad = ~np.isfinite(values) | (values < 0)
    if np.any(bad):
        r, c = (int(i) for i in np.argwhere(bad)[0])
        problem = "is not finite" if not np.isfinite(values[r, c]) else "is negative (counts are >= 0)"
        raise DataError(path, f"cell {r + 1}, gene '{genes[c]}': value {float(values[r, c])!r} {problem}")


def target_indices(targets, genes, path, control_labels=CONTROL_LABELS):
    """Gene index of each cell's target: int [N], -1 for control cells.

    Raises DataError when a target is neither a control label nor one of the table's genes.
    """
    controls = {label.strip().lower() for label in control_labels}
    position = {name: i for i, name in enumerate(genes)}
    index = np.empty(len(targets), dtype=np.int64)
    for n, target in enumerate(targets):
        if target.strip().lower() in controls:
            index[n] = -1
        elif target in position:
            index[n] = position[target]
        else:
            raise DataError(
                path,
                f"cell {n + 1}: perturbation target {target!r} is not one of the table's genes "
                f"nor a control label ({', '.join(repr(c) for c in sorted(controls))})",
            )
    return index


def intervention_mask(index, num_genes):
    """uint8 [N, d]: 1 at (n, index[n]) for knocked-out cells; control cells (index -1) get none."""
    mask = np.zeros((len(index), num_genes), dtype=np.uint8)
    knocked = np.flatnonzero(index >= 0)
    mask[knocked, index[knocked]] = 1
    return mask


def choose_held_out(index, genes, held_out, seed, path):
    """Sorted gene indices whose knockout cells form the test set.

    held_out: None (a fifth of the knocked-out genes, at least one), a number of knocked-out genes
    drawn with `seed`, or a sequence of gene names.
    """
    knocked = np.unique(index[index >= 0])
    if knocked.size == 0:
        raise DataError(path, "no knocked-out cells: held-out knockouts need cells with a target gene")
    if held_out is None:
        held_out = max(1, round(0.2 * knocked.size))
    if isinstance(held_out, numbers.Integral) and not isinstance(held_out, bool):
        if not 1 <= held_out <= knocked.size:
            raise OptionError(
                "held_out", f"must lie in [1, {knocked.size}] (the number of knocked-out genes), got {held_out}"
            )
        chosen = np.random.default_rng(seed).choice(knocked, size=int(held_out), replace=False)
        return sorted(int(i) for i in chosen)
    if isinstance(held_out, str):
        held_out = [held_out]
    chosen = []
    for name in held_out:
        if name not in genes:
            raise DataError(path, f"held-out knockout {name!r} is not one of the table's genes")
        if genes.index(name) not in knocked:
            raise DataError(path, f"held-out knockout {name!r} is not the target of any cell")
        chosen.append(genes.index(name))
    if not chosen:
        raise OptionError("held_out", "names no gene: hold out at least one knockout")
    return sorted(set(chosen))


def transform_values(values, transform):
    """The values as written: 'none' (as read) or 'log1p' (log(1 + x), keeps exact zeros)."""
    if transform not in TRANSFORMS:
        raise JspgfnError(f"unknown transform '{transform}': choose one of {', '.join(TRANSFORMS)}")
    return np.log1p(values) if transform == "log1p" else values


def split_by_knockouts(values, index, held_out):
    """(train values, train mask, test values, test mask): test = cells whose target is in held_out."""
    mask = intervention_mask(index, values.shape[1])
    is_test = np.isin(index, held_out)
    return values[~is_test], mask[~is_test], values[is_test], mask[is_test]


def gene_expression_dataset(
    path,
    target_column="target",
    held_out=None,
    seed=0,
    control_labels=CONTROL_LABELS,
    transform="none",
    cell_column=None,
):
    """The user's gene-expression table as a Dataset (nothing written; raises DataError/JspgfnError)."""
    path = Path(path)
    genes, values, targets = read_expression_table(path, target_column, cell_column)
    index = target_indices(targets, genes, path, control_labels)
    held = choose_held_out(index, genes, held_out, seed, path)
    values = transform_values(values, transform)
    check_values(values, path, genes, what="cell", first_line=None if path.suffix.lower() == ".h5ad" else 2)
    train, train_mask, test, test_mask = split_by_knockouts(values, index, held)
    if train.shape[0] == 0:
        raise JspgfnError(f"{path}: every cell is in a held-out knockout; hold out fewer knockouts")
    train_genes = sorted({genes[i] for i in index[~np.isin(index, held)] if i >= 0})
    if not train_genes:
        warnings.warn(
            DataWarning(
                f"{path}: every knockout is held out ({len(held)}), so the training cells are controls only: "
                "without interventions in training the data cannot tell the direction of most edges; hold out "
                "fewer knockouts (--held-out)"
            ),
            stacklevel=2,
        )
    meta = {
        "generator": "jspgfn.realdata.gene_expression.load",
        "generator_version": GENERATOR_VERSION,
        "data": "real",
        "simulated": False,
        "source_file": path.name,
        "target_column": target_column,
        "transform": transform,
        "seed": seed,
        "num_variables": len(genes),
        "num_train": int(train.shape[0]),
        "num_test": int(test.shape[0]),
        "num_control": int(np.sum(index < 0)),
        "train_knockouts": train_genes,
        "test_knockouts": [genes[i] for i in held],
        "zero_fraction_train": float(np.mean(train == 0)),
    }
    return Dataset(
        train=train,
        names=genes,
        test=test,
        train_interventions=train_mask,
        test_interventions=test_mask,
        meta=meta,
        source=str(path),
    )


def load_gene_expression(path, out, **kwargs):
    """Read the user's table (see gene_expression_dataset for the options) and write the dataset folder
    `out`. A malformed file raises DataError and writes nothing. Returns the Dataset."""
    dataset = gene_expression_dataset(path, **kwargs)
    write_dataset_folder(out, dataset)
    return dataset
