"""Gene expression data (paper section 5.3 and its appendix): single-cell counts with gene knockouts.

Two sources write the same dataset folder (see `jspgfn.dataset`):

1. `load_gene_expression`: the user's own table, e.g. the Perturb-CITE-seq subset of the paper
   (61 genes, 2,628 cells, prepared as in the NODAGS-Flow repository). The input is a cells x genes
   table of non-negative expression values plus one column naming each cell's perturbation target: the
   knocked-out gene, or a control label ("control", "non-targeting", empty, ...). CSV, or h5ad (an
   AnnData file; needs the `anndata` package) with the targets in a column of `obs`. The cells of some
   knockouts (`held_out`) become the test set: an interventional log-likelihood on unseen interventions.
2. `simulate_gene_expression` (the default when the data is not at hand): a SIMULATED stand-in of the
   same shape made with sergio-rs from a random gene regulatory network, with control cells, single-gene
   knockouts and technical noise (dropouts: many exact zeros). Its true network is written as graph.csv
   and meta.json says "simulated".

Shapes: N cells, d genes. Interventions are uint8 [N, d], 1 on the knocked-out gene of a cell.
"""

import csv
import math
import numbers
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

from jspgfn.dataset import Dataset, DataWarning, check_values, write_dataset_folder
from jspgfn.errors import DataError, JspgfnError, OptionError, check_count

GENERATOR_VERSION = 1
# Labels of unperturbed cells, compared after strip() and lower().
CONTROL_LABELS = ("", "control", "ctrl", "non-targeting", "nontargeting", "non_targeting", "nt", "negative_control")
TRANSFORMS = ("none", "log1p")
SERGIO_RS_VERSION = "0.2.3"  # the version this module was checked with (FACTS.md)
SIMULATED_DEFAULT_NAME = "gene-expression-simulated"  # folder name used by the examples and tests

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


# ----------------------------------------------------------------- writing a whole folder


# ----------------------------------------------------------------- the simulated stand-in


def random_grn(rng, num_genes, num_master_regulators, mean_extra_parents=0.5):
    """A random regulatory DAG in which every gene takes part: uint8 [d, d], [i, j] = 1 means i -> j.

    In a random order, the first `num_master_regulators` genes have no regulator; every other gene has
    1 + Poisson(mean_extra_parents) regulators (at most the genes before it) drawn among the genes
    before it. A master regulator left without a target gets one (sergio-rs only simulates genes
    that appear in an interaction).
    """
    order = rng.permutation(num_genes)
    graph = np.zeros((num_genes, num_genes), dtype=np.uint8)
    for k in range(num_master_regulators, num_genes):
        count = min(k, 1 + int(rng.poisson(mean_extra_parents)))
        parents = rng.choice(k, size=count, replace=False)
        graph[order[parents], order[k]] = 1
    for k in range(num_master_regulators):
        if not graph[order[k]].any():
            graph[order[k], order[rng.integers(num_master_regulators, num_genes)]] = 1
    return graph


def interaction_strengths(rng, graph, low=1.0, high=5.0, activation_prob=0.7):
    """float [d, d]: Hill strength k of each edge (|k| ~ U(low, high), positive = activation), 0 off-graph."""
    magnitude = rng.uniform(low, high, size=graph.shape)
    sign = np.where(rng.random(graph.shape) < activation_prob, 1.0, -1.0)
    return graph * magnitude * sign


def _sergio():
    try:
        import sergio_rs
    except ImportError:
        raise JspgfnError(
            f"simulating gene expression needs the package sergio-rs (pip install sergio-rs=={SERGIO_RS_VERSION})"
        ) from None
    return sergio_rs


def _build_grn(sergio_rs, names, strengths, decay, hill):
    """A fresh sergio-rs GRN (ko_perturbation mutates the network it is called on, so build one per condition)."""
    grn = sergio_rs.GRN()
    for i, j in zip(*np.nonzero(strengths)):
        grn.add_interaction(
            reg=sergio_rs.Gene(names[i], decay),
            tar=sergio_rs.Gene(names[j], decay),
            k=float(strengths[i, j]),
            h=None,
            n=int(hill),  # sergio-rs takes an integer Hill coefficient
        )
    grn.set_mrs()
    return grn


def _simulate_condition(sergio_rs, names, strengths, settings, mr_profile, knockout, num_cells, seed):
    """Clean expression float [num_cells, d] of one condition (knockout: a gene name or None).

    sergio-rs leaves the knocked-out gene out of its output: that gene's expression is 0.
    """
    grn = _build_grn(sergio_rs, names, strengths, settings["decay"], settings["hill"])
    if knockout is not None:
        grn, mr_profile = grn.ko_perturbation(gene_name=knockout, mr_profile=mr_profile)
    sim = sergio_rs.Sim(
        grn,
        num_cells=int(num_cells),  # must be an int
        safety_iter=int(settings["safety_iter"]),
        scale_iter=int(settings["scale_iter"]),
        dt=float(settings["dt"]),
        noise_s=float(settings["noise_s"]),
        seed=int(seed),
    )
    frame = sim.simulate(mr_profile)
    position = {name: i for i, name in enumerate(names)}
    rows = [position[name] for name in frame["Genes"].to_list()]
    out = np.zeros((int(num_cells), len(names)))
    out[:, rows] = frame.drop("Genes").to_numpy().T
    return out


def add_technical_noise(sergio_rs, clean, noise, seed):
    """Integer counts float [N, d] from clean expression [N, d] with a sergio-rs noise preset (e.g. DS6).

    sergio-rs panics on a cell whose expression is all 0: such cells are left at 0.
    """
    setting = getattr(sergio_rs.NoiseSetting, noise, None)
    if setting is None:
        raise JspgfnError(f"unknown technical noise preset '{noise}': use one of DS1-DS8, DS13, DS14")
    counts = np.zeros_like(clean)
    alive = clean.sum(axis=1) > 0
    if np.any(alive):
        noisy = sergio_rs.add_technical_noise(np.ascontiguousarray(clean[alive].T), setting, seed=int(seed))
        counts[alive] = np.asarray(noisy).T
    return counts


def split_counts(total, parts):
    """total split into `parts` near-equal integers (the first ones larger): list of ints."""
    if parts == 0:
        return []
    base, extra = divmod(int(total), int(parts))
    return [base + (1 if k < extra else 0) for k in range(int(parts))]


def simulate_gene_expression(
    num_genes=61,
    num_train=2628,
    num_test=500,
    num_train_knockouts=40,
    num_test_knockouts=10,
    control_fraction=0.25,
    num_master_regulators=None,
    mean_extra_parents=0.5,
    noise="DS6",
    noise_s=1.0,
    transform="log1p",
    seed=0,
    safety_iter=150,
    scale_iter=10,
):
    """A simulated stand-in for the paper's gene-expression data, as a Dataset with its true graph.

    Training cells: round(control_fraction * num_train) control cells, the rest split evenly over
    `num_train_knockouts` single-gene knockouts. Test cells: `num_test` cells split evenly over
    `num_test_knockouts` other knockouts (held out: unseen interventions). Knocked-out genes are drawn
    at random. The network: see random_grn; num_master_regulators defaults to a tenth of the genes
    (6 of 61). Clean expression from sergio-rs (one cell type, Hill coefficient 2, decay 0.8), technical
    noise from a sergio-rs preset (DS6: outliers, library size, dropouts), then `transform` of the counts
    ('log1p' by default; exact zeros stay zeros). Everything follows from `seed`.
    """
    if num_master_regulators is None and isinstance(num_genes, numbers.Integral):
        num_master_regulators = max(1, round(0.1 * num_genes))
    for name, value, minimum in (
        ("num_genes", num_genes, 2),
        ("num_train", num_train, 1),
        ("num_test", num_test, 1),
        ("num_train_knockouts", num_train_knockouts, 0),
        ("num_test_knockouts", num_test_knockouts, 1),
        ("num_master_regulators", num_master_regulators, 1),
        ("seed", seed, 0),
    ):
        check_count(name, value, minimum)
    if num_train_knockouts + num_test_knockouts > num_genes:
        raise JspgfnError(f"{num_train_knockouts} + {num_test_knockouts} knockouts need as many genes, got {num_genes}")
    if num_master_regulators >= num_genes:
        raise JspgfnError(f"num_master_regulators must be < num_genes ({num_genes}), got {num_master_regulators}")
    if not 0.0 <= control_fraction <= 1.0 or (num_train_knockouts == 0 and control_fraction != 1.0):
        raise JspgfnError(f"control_fraction must lie in [0, 1] (1 without training knockouts), got {control_fraction}")
    num_control = round(control_fraction * num_train)
    if num_train - num_control < num_train_knockouts or num_test < num_test_knockouts:
        raise JspgfnError("too few cells: every knockout needs at least one cell")
    transform_values(np.zeros(1), transform)  # an unknown transform fails before the simulation
    sergio_rs = _sergio()
    rng = np.random.default_rng(seed)
    names = tuple(f"G{i:02d}" for i in range(num_genes))
    graph = random_grn(rng, num_genes, num_master_regulators, mean_extra_parents)
    strengths = interaction_strengths(rng, graph)
    settings = {"decay": 0.8, "hill": 2, "dt": 0.01, "noise_s": noise_s}
    settings.update(safety_iter=safety_iter, scale_iter=scale_iter)
    knocked = rng.permutation(num_genes)[: num_train_knockouts + num_test_knockouts]
    train_ko, test_ko = knocked[:num_train_knockouts], knocked[num_train_knockouts:]
    conditions = [(None, num_control)] if num_control > 0 else []
    conditions += list(zip(train_ko, split_counts(num_train - num_control, num_train_knockouts)))
    conditions += list(zip(test_ko, split_counts(num_test, num_test_knockouts)))
    seeds = rng.integers(0, 2**31 - 1, size=len(conditions) + 2)
    mr_profile = sergio_rs.MrProfile.from_random(
        _build_grn(sergio_rs, names, strengths, settings["decay"], settings["hill"]),
        num_cell_types=1,
        low_range=(1.0, 2.5),
        high_range=(2.5, 5.0),
        seed=int(seeds[-1]),
    )
    clean, index = [], []
    for (gene, cells), sim_seed in zip(conditions, seeds):
        knockout = None if gene is None else names[gene]
        clean.append(_simulate_condition(sergio_rs, names, strengths, settings, mr_profile, knockout, cells, sim_seed))
        index.append(np.full(cells, -1 if gene is None else gene))
    clean, index = np.concatenate(clean), np.concatenate(index)
    values = transform_values(add_technical_noise(sergio_rs, clean, noise, seeds[-2]), transform)
    train, train_mask, test, test_mask = split_by_knockouts(values, index, test_ko)
    meta = {
        "generator": "jspgfn.realdata.gene_expression.simulate",
        "generator_version": GENERATOR_VERSION,
        "data": "simulated",
        "simulated": True,
        "simulator": "sergio-rs",
        "simulator_version": _version("sergio-rs"),
        "seed": seed,
        "model": "sergio",
        "num_variables": num_genes,
        "num_train": int(train.shape[0]),
        "num_test": int(test.shape[0]),
        "num_control": int(num_control),
        "train_knockouts": [names[i] for i in train_ko],
        "test_knockouts": [names[i] for i in test_ko],
        "num_master_regulators": num_master_regulators,
        "mean_extra_parents": mean_extra_parents,
        "num_edges": int(graph.sum()),
        "interaction_strengths": strengths.tolist(),
        "technical_noise": noise,
        "transform": transform,
        "sergio": {**settings, "mr_low_range": [1.0, 2.5], "mr_high_range": [2.5, 5.0], "num_cell_types": 1},
        "zero_fraction_train": float(np.mean(train == 0)),
        "zero_fraction_test": float(np.mean(test == 0)),
    }
    return Dataset(
        train=train,
        names=names,
        test=test,
        graph=graph,
        train_interventions=train_mask,
        test_interventions=test_mask,
        meta=meta,
    )


def write_simulated_gene_expression(out, **kwargs):
    """simulate_gene_expression(**kwargs) written as the dataset folder `out` (atomically). Returns it."""
    dataset = simulate_gene_expression(**kwargs)
    write_dataset_folder(out, dataset)
    return dataset


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None
