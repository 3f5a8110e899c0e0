import json

import numpy as np
import pytest

from jspgfn.dataset import load_dataset
from jspgfn.errors import DataError, JspgfnError
from jspgfn.graphs import is_dag
from jspgfn.realdata import gene_expression as ge
from jspgfn.realdata import gene_expression_simulated as ges

GENES = ("GATA1", "TP53", "MYC", "CD4")
# (target, counts): 3 controls (three spellings), 2 knockouts of TP53, 2 of MYC, 2 of CD4.
CELLS = [
    ("control", [3, 0, 5, 1]),
    ("non-targeting", [0, 2, 4, 0]),
    ("", [1, 1, 0, 2]),
    ("TP53", [2, 0, 3, 0]),
    ("TP53", [4, 0, 0, 1]),
    ("MYC", [1, 3, 0, 0]),
    ("MYC", [0, 5, 0, 2]),
    ("CD4", [2, 2, 2, 0]),
    ("CD4", [6, 0, 1, 0]),
]


def write_table(path, cells=CELLS, genes=GENES, target="perturbation"):
    lines = [",".join(("cell",) + tuple(genes) + (target,))]
    lines += [",".join([f"c{n}"] + [str(v) for v in counts] + [t]) for n, (t, counts) in enumerate(cells)]
    path.write_text("\n".join(lines) + "\n")
    return path


def load(tmp_path, table, out_name="expression", **kwargs):
    kwargs = {"target_column": "perturbation", "cell_column": "cell", **kwargs}
    out = tmp_path / out_name
    return out, ge.load_gene_expression(table, out, **kwargs)


def test_loader_writes_dataset_folder(tmp_path):
    table = write_table(tmp_path / "cells.csv")
    out, _ = load(tmp_path, table, held_out=["MYC"])
    ds = load_dataset(out)
    assert ds.names == GENES
    assert ds.train.shape == (7, 4) and ds.test.shape == (2, 4)
    counts = np.array([c for _, c in CELLS], float)
    targets = [t for t, _ in CELLS]
    is_test = np.array([t == "MYC" for t in targets])
    np.testing.assert_array_equal(ds.train, counts[~is_test])
    np.testing.assert_array_equal(ds.test, counts[is_test])
    # Interventions: one 1 per knocked-out cell, on its target's column; none for control cells.
    for values, mask, rows in ((ds.train, ds.train_interventions, ~is_test), (ds.test, ds.test_interventions, is_test)):
        assert mask.shape == values.shape
        for row, target in zip(mask, np.array(targets)[rows]):
            if target in GENES:
                assert row.sum() == 1 and row[GENES.index(target)] == 1
            else:
                assert row.sum() == 0
    assert ds.train_interventions[:3].sum() == 0  # the three control cells
    # Held-out knockouts appear only in the test set.
    assert ds.test_interventions[:, GENES.index("MYC")].all()
    assert ds.train_interventions[:, GENES.index("MYC")].sum() == 0
    assert ds.meta["data"] == "real" and ds.meta["test_knockouts"] == ["MYC"]
    assert ds.meta["train_knockouts"] == ["CD4", "TP53"] and ds.meta["num_control"] == 3


def test_loader_holds_out_a_seeded_number_and_transforms(tmp_path):
    table = write_table(tmp_path / "cells.csv")
    _, first = load(tmp_path, table, "a", held_out=2, seed=3, transform="log1p")
    _, second = load(tmp_path, table, "b", held_out=2, seed=3, transform="log1p")
    assert first.meta["test_knockouts"] == second.meta["test_knockouts"]
    assert len(first.meta["test_knockouts"]) == 2 and first.test.shape[0] == 4
    held = [GENES.index(g) for g in first.meta["test_knockouts"]]
    assert first.train_interventions[:, held].sum() == 0
    assert np.all(first.train >= 0) and np.any(first.train == 0)
    assert np.isclose(first.train.max(), np.log1p(6)) or np.isclose(first.test.max(), np.log1p(6))


MALFORMED = {
    "missing perturbation column": (
        lambda p: write_table(p, target="condition"),
        "no perturbation-target column 'perturbation'",
    ),
    "unknown target gene": (
        lambda p: write_table(p, cells=CELLS + [("BRCA1", [1, 1, 1, 1])]),
        "'BRCA1' is not one of the table's genes",
    ),
    "negative count": (
        lambda p: write_table(p, cells=CELLS + [("TP53", [1, -2, 1, 1])]),
        "is negative",
    ),
    "non-numeric value": (
        lambda p: write_table(p, cells=CELLS + [("TP53", [1, "abc", 1, 1])]),
        "non-numeric value 'abc'",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_table_gives_one_clear_line_and_writes_nothing(tmp_path, case):
    make, expected = MALFORMED[case]
    table = make(tmp_path / "bad.csv")
    with pytest.raises(DataError) as info:
        load(tmp_path, table, "out")
    message = str(info.value)
    assert "\n" not in message and str(table) in message and expected in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]  # no folder, no temporary left


def test_held_out_gene_must_be_knocked_out(tmp_path):
    table = write_table(tmp_path / "cells.csv")
    with pytest.raises(DataError, match="'GATA1' is not the target of any cell"):
        load(tmp_path, table, held_out=["GATA1"])
    assert not (tmp_path / "expression").exists()


def test_h5ad_without_anndata_names_the_package(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_anndata(name, *args, **kwargs):
        if name == "anndata":
            raise ImportError("No module named 'anndata'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_anndata)
    path = tmp_path / "cells.h5ad"
    path.write_bytes(b"not really")
    with pytest.raises(JspgfnError, match="anndata"):
        ge.read_expression_table(path)


def test_rewrite_replaces_a_dataset_folder_but_not_another_folder(tmp_path):
    table = write_table(tmp_path / "cells.csv")
    out, _ = load(tmp_path, table, held_out=["MYC"])
    load(tmp_path, table, held_out=["CD4"])
    assert load_dataset(out).meta["test_knockouts"] == ["CD4"]
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(DataError, match="keep.txt, not part of a dataset folder"):
        load(tmp_path, table, "notes")
    assert (other / "keep.txt").read_text() == "mine"


def test_random_grn_covers_every_gene():
    graph = ges.random_grn(np.random.default_rng(0), 61, 6)
    assert is_dag(graph) and np.all(graph.sum(0) + graph.sum(1) > 0)
    assert np.sum(graph.sum(0) == 0) == 6  # the master regulators


TINY = {"num_genes": 8, "num_train": 60, "num_test": 12, "num_train_knockouts": 3, "num_test_knockouts": 2}


def test_simulated_tiny_dataset(tmp_path):
    pytest.importorskip("sergio_rs")
    out = tmp_path / ges.SIMULATED_DEFAULT_NAME
    ges.write_simulated_gene_expression(out, seed=1, **TINY)
    ds = load_dataset(out)
    assert "simulated" in out.name and ds.meta["data"] == "simulated" and ds.meta["simulated"] is True
    assert ds.train.shape == (60, 8) and ds.test.shape == (12, 8)
    assert ds.graph is not None and is_dag(ds.graph)
    assert np.any(ds.train == 0) and np.any(ds.train > 0)  # exact zeros from the technical noise
    assert 0.05 < ds.meta["zero_fraction_train"] < 0.95
    # Knockout masks: one gene per knocked-out cell, control cells have none, held-out genes only in test.
    train_ko = [ds.names.index(g) for g in ds.meta["train_knockouts"]]
    test_ko = [ds.names.index(g) for g in ds.meta["test_knockouts"]]
    assert ds.train_interventions.sum(axis=1).max() == 1 and np.all(ds.test_interventions.sum(axis=1) == 1)
    assert np.sum(ds.train_interventions.sum(axis=1) == 0) == ds.meta["num_control"] == 15
    assert set(np.flatnonzero(ds.train_interventions.sum(0))) == set(train_ko)
    assert set(np.flatnonzero(ds.test_interventions.sum(0))) == set(test_ko)
    assert not set(train_ko) & set(test_ko)
    # A knocked-out gene is not expressed in its own cells.
    assert np.all(ds.train[ds.train_interventions == 1] == 0) and np.all(ds.test[ds.test_interventions == 1] == 0)


def test_simulation_is_seeded(tmp_path):
    pytest.importorskip("sergio_rs")
    folders = [tmp_path / f"sim-{k}-simulated" for k in range(3)]
    for folder, seed in zip(folders, (4, 4, 5)):
        ges.write_simulated_gene_expression(folder, seed=seed, **TINY)
    names = sorted(p.name for p in folders[0].iterdir())
    assert names == sorted(
        ["graph.csv", "meta.json", "test.csv", "test_interventions.csv", "train.csv", "train_interventions.csv"]
    )
    for name in names:
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes(), name
    assert (folders[0] / "train.csv").read_bytes() != (folders[2] / "train.csv").read_bytes()
    assert json.loads((folders[0] / "meta.json").read_text())["seed"] == 4


def test_simulation_rejects_bad_sizes():
    with pytest.raises(JspgfnError, match="knockouts need as many genes"):
        ges.simulate_gene_expression(num_genes=4, num_train_knockouts=3, num_test_knockouts=2)
    with pytest.raises(JspgfnError, match="num_train must be an integer"):
        ges.simulate_gene_expression(num_train=10.0)


def test_h5ad_reader(tmp_path):
    anndata = pytest.importorskip("anndata")
    import pandas as pd

    counts = np.array([c for _, c in CELLS], np.float32)
    obs = pd.DataFrame({"perturbation": [t for t, _ in CELLS]}, index=[f"c{n}" for n in range(len(CELLS))])
    path = tmp_path / "cells.h5ad"
    anndata.AnnData(X=counts, obs=obs, var=pd.DataFrame(index=list(GENES))).write_h5ad(path)
    genes, values, targets = ge.read_expression_table(path, target_column="perturbation")
    assert genes == GENES and targets == [t for t, _ in CELLS]
    np.testing.assert_array_equal(values, counts)
