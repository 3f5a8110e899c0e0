"""A SIMULATED stand-in for the paper's gene-expression data (sergio-rs), written as a dataset folder.

The same shape as the user's table of gene_expression.py (control cells, single-gene knockouts, some
knockouts held out as the test set), made with sergio-rs from a random gene regulatory network, with
technical noise (dropouts: many exact zeros). Its true network is written as graph.csv and meta.json
says "simulated". Shapes: N cells, d genes; interventions uint8 [N, d], 1 on the knocked-out gene of a cell.
"""

import numbers
from importlib import metadata

import numpy as np

from jspgfn.dataset import Dataset, write_dataset_folder
from jspgfn.errors import JspgfnError, check_count
from jspgfn.realdata.gene_expression import GENERATOR_VERSION, split_by_knockouts, transform_values

SERGIO_RS_VERSION = "0.2.3"  # the version this module was checked with (FACTS.md)
SIMULATED_DEFAULT_NAME = "gene-expression-simulated"  # folder name used by the examples and tests


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
