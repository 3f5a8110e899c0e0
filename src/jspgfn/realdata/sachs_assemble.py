"""A Sachs dataset from per-condition level codes, whichever file they were read from (sachs_cdt.py,
sachs_bnlearn.py): cut points and level codes, intervention masks, the train / test split by condition,
the optional subsample of the training rows, and the metadata written to meta.json.
"""

import hashlib
from pathlib import Path

import numpy as np

from jspgfn.dataset import Dataset
from jspgfn.errors import JspgfnError, check_count
from jspgfn.realdata.sachs_study import GRAPH_NOTE, LEVELS, NAMES, NUM_LEVELS, REFERENCE_EDGES, reference_graph

GENERATOR_VERSION = 1


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


def sha256(path):
    """The SHA-256 of a file's bytes, hexadecimal (meta.json's source_sha256)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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


def check_test_labels(test_labels, labels, what):
    test_labels = tuple(test_labels)
    unknown = [label for label in test_labels if label not in labels]
    if unknown:
        raise JspgfnError(f"unknown {what} {', '.join(map(str, unknown))}: choose among {', '.join(labels)}")
    if not test_labels or len(set(test_labels)) == len(labels):
        raise JspgfnError(f"hold out at least one {what} and keep at least one for training")
    return test_labels


def dataset_meta(source, source_file, seed, conditions, blocks, ranges, discretisation, extra):
    """The metadata dict shared by both sources."""
    test_labels = [label for label, _, _ in ranges["test"]]
    return {
        "generator": "jspgfn.realdata.sachs",
        "generator_version": GENERATOR_VERSION,
        "dataset": "sachs",
        "source": source,
        "source_file": str(source_file),
        "source_sha256": sha256(source_file),
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


def sachs_dataset(train, train_int, test, test_int, meta, path):
    """The Dataset of the 11 proteins with the reference network, from assemble()'s parts and its meta."""
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
