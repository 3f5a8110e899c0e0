import json

import numpy as np
import pytest

from jspgfn.dataset import load_dataset
from jspgfn.errors import DataError, JspgfnError
from jspgfn.graphs import is_dag
from jspgfn.realdata import sachs, sachs_cdt


def cdt_path_or_skip():
    try:
        return sachs.cdt_data_path()
    except JspgfnError:
        pytest.skip("cdt's cyto_full_data.csv is not installed (pip install --no-deps cdt)")


def folder_files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def synthetic_bnlearn(path, rows_per_group=20, seed=0, header=None):
    """A small file in bnlearn's format: observational rows (INT 0) and one group per target in
    (Mek, PIP2, Akt, PKC, PKA), levels 1..3. Returns (codes [N, 11] in 0..2, target [N])."""
    rng = np.random.default_rng(seed)
    targets = [-1] + [sachs.NAMES.index(n) for n in ("Mek", "PIP2", "Akt", "PKC", "PKA")]
    target = np.repeat(targets, rows_per_group)
    codes = rng.integers(0, 3, size=(len(target), 11))
    sachs.write_bnlearn_format(path, codes, target)
    if header is not None:
        lines = path.read_text().splitlines()
        path.write_text("\n".join([header] + lines[1:]) + "\n")
    return codes, target


# ----------------------------------------------------------------- pieces without cdt


def test_reference_graph_is_the_17_arc_dag():
    graph = sachs.reference_graph()
    assert graph.shape == (11, 11) and graph.sum() == 17 and is_dag(graph)
    assert graph[sachs.NAMES.index("PKC"), sachs.NAMES.index("PKA")] == 1
    assert graph[sachs.NAMES.index("PKA"), sachs.NAMES.index("PKC")] == 0


def test_block_sizes_and_targets():
    sizes = [c.size for c in sachs.CONDITIONS]
    assert sizes == [853, 902, 911, 723, 810, 799, 848, 913, 707] and sum(sizes) == 7466
    assert [c.label for c in sachs.CONDITIONS][:2] == ["cd3cd28", "icam2"]
    assert all(t in sachs.NAMES for c in sachs.CONDITIONS for t in c.targets)
    blocks = sachs.split_blocks(np.arange(7466 * 2).reshape(7466, 2), sizes)
    assert [len(b) for b in blocks] == sizes
    assert blocks[1][0, 0] == 853 * 2 and blocks[-1][-1, 0] == (7466 - 1) * 2
    # The default held-out targets are intervened on in no training condition.
    train_targets = {t for c in sachs.CONDITIONS if c.label not in sachs.DEFAULT_TEST_CONDITIONS for t in c.targets}
    held_out = {t for c in sachs.CONDITIONS if c.label in sachs.DEFAULT_TEST_CONDITIONS for t in c.targets}
    assert held_out == set(sachs.DEFAULT_TEST_TARGETS) and not held_out & train_targets


def test_discretise_tertiles():
    values = np.arange(30, dtype=float).reshape(15, 2)
    cuts = sachs.tertile_cuts(values)
    codes = sachs.discretise(values, cuts)
    assert set(np.unique(codes)) == {0, 1, 2}
    np.testing.assert_array_equal(np.bincount(codes[:, 0]), [5, 5, 5])
    assert np.all(np.diff(codes[:, 1]) >= 0)  # monotone in the value


def test_column_order_accepts_aliases_and_rejects_bad_headers():
    cdt = ["praf", "pmek", "plcg", "PIP2", "PIP3", "p44/42", "pakts473", "PKA", "PKC", "P38", "pjnk"]
    assert sachs.column_order(cdt, "f") == tuple(range(11))
    assert sachs.column_order(list(reversed(sachs.NAMES)), "f") == tuple(reversed(range(11)))
    with pytest.raises(DataError, match="f: unknown column 'Foo'"):
        sachs.column_order(cdt[:-1] + ["Foo"], "f")
    with pytest.raises(DataError, match="missing Jnk"):
        sachs.column_order(cdt[:-1] + ["praf"], "f")


# ----------------------------------------------------------------- cdt's table


def test_cdt_dataset_sizes_levels_and_masks():
    path = cdt_path_or_skip()
    ds = sachs.sachs_from_cdt(seed=0, path=path)
    assert ds.train.shape == (4200, 11) and ds.test.shape == (1200, 11)
    assert set(np.unique(ds.train)) <= {0.0, 1.0, 2.0} and set(np.unique(ds.test)) <= {0.0, 1.0, 2.0}
    meta = ds.meta
    assert "RECONSTRUCTED" in meta["condition_labels"] and meta["graph_is_ground_truth"] is False
    assert meta["num_train"] == 4200 and meta["test_conditions"] == list(sachs.DEFAULT_TEST_CONDITIONS)
    assert all(c["rows_used"] == 600 for c in meta["conditions"])
    by_label = {c.label: c for c in sachs.CONDITIONS}
    for split, data, mask in (("train", ds.train, ds.train_interventions), ("test", ds.test, ds.test_interventions)):
        ranges = meta["rows"][split]
        assert all(stop - start == 600 for _, start, stop in ranges)
        assert ranges[-1][2] == len(data)
        for label, start, stop in ranges:
            expected = sachs.intervention_mask(by_label[label].targets, stop - start)
            np.testing.assert_array_equal(mask[start:stop], expected)
    assert len(meta["rows"]["train"]) == 7 and len(meta["rows"]["test"]) == 2
    # Tertiles of the observational conditions: about a third of their rows at each level.
    observational = ds.train[:1200]
    for v in range(11):
        assert np.all(np.abs(np.bincount(observational[:, v].astype(int), minlength=3) / 1200 - 1 / 3) < 0.08)


def test_cdt_same_seed_identical_files_and_subsample(tmp_path):
    path = cdt_path_or_skip()
    a = sachs.prepare_sachs(tmp_path / "a", seed=3, path=path)
    b = sachs.prepare_sachs(tmp_path / "b", seed=3, path=path)
    assert folder_files(a) == folder_files(b)
    c = sachs.prepare_sachs(tmp_path / "c", seed=4, path=path)
    assert folder_files(c)["train.csv"] != folder_files(a)["train.csv"]
    assert sorted(folder_files(a)) == [
        "graph.csv",
        "meta.json",
        "test.csv",
        "test_interventions.csv",
        "train.csv",
        "train_interventions.csv",
    ]
    loaded = load_dataset(a)
    assert loaded.train.shape == (4200, 11) and loaded.graph.sum() == 17
    small = load_dataset(sachs.prepare_sachs(tmp_path / "small", seed=3, num_train=100, path=path))
    assert small.train.shape == (100, 11) and small.train_interventions.shape == (100, 11)
    np.testing.assert_array_equal(small.test, loaded.test)  # the subsample keeps the same test rows
    assert small.meta["num_train"] == 100 and small.meta["rows"]["train"][-1][2] == 100
    # Rewriting a folder replaces it whole.
    sachs.prepare_sachs(tmp_path / "a", seed=4, path=path)
    assert folder_files(tmp_path / "a") == folder_files(c)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "c", "small"]


def test_cdt_bad_parameters():
    path = cdt_path_or_skip()
    with pytest.raises(JspgfnError, match="unknown condition nope"):
        sachs.sachs_from_cdt(test_conditions=("nope",), path=path)
    with pytest.raises(JspgfnError, match="rows_per_condition must be between 1 and 707"):
        sachs.sachs_from_cdt(rows_per_condition=800, path=path)
    with pytest.raises(JspgfnError, match="num_train must be between 1 and 4200"):
        sachs.sachs_from_cdt(num_train=5000, path=path)


def test_malformed_cdt_table_gives_clear_error_and_no_folder(tmp_path):
    header = "praf,pmek,plcg,PIP2,PIP3,p44/42,pakts473,PKA,PKC,P38,pjnk\n"
    bad = tmp_path / "cyto.csv"
    bad.write_text(header + "1,2,3,4,5,6,7,8,9,10,11\n" * 10)
    with pytest.raises(DataError, match=r"cyto.csv: has 10 data rows, expected 7466"):
        sachs.prepare_sachs(tmp_path / "out", path=bad)
    bad.write_text(header + "1,2,3,4,5,6,7,8,9,x,11\n")
    with pytest.raises(DataError, match=r"cyto.csv: line 2, column 'P38': non-numeric value 'x'"):
        sachs.prepare_sachs(tmp_path / "out", path=bad)
    bad.write_text(header + "1,2,3,4,5,6,7,8,9,10,11\n" * 7465 + "1,2,-5,4,5,6,7,8,9,10,11\n")
    with pytest.raises(DataError, match=r"cyto.csv: line 7467, column 'plcg': negative concentration -5.0$"):
        sachs.prepare_sachs(tmp_path / "out", path=bad)  # -5.0, not numpy's repr np.float64(-5.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cyto.csv"]


def test_missing_cdt_names_what_to_install(monkeypatch):
    monkeypatch.setattr(sachs_cdt.importlib.util, "find_spec", lambda name: None)

    def no_package(name):
        raise sachs_cdt.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(sachs_cdt.importlib.metadata, "files", no_package)
    with pytest.raises(JspgfnError, match="pip install --no-deps cdt"):
        sachs.cdt_data_path()


# ----------------------------------------------------------------- bnlearn's discretised file


def test_bnlearn_reader_round_trip(tmp_path):
    path = tmp_path / "sachs.interventional.txt"
    codes, target = synthetic_bnlearn(path, rows_per_group=20)
    got_codes, got_target = sachs.read_bnlearn_interventional(path)
    np.testing.assert_array_equal(got_codes, codes)
    np.testing.assert_array_equal(got_target, target)
    # bnlearn's own header names (praf ... pjnk, p44.42) in another column order read the same.
    text = path.read_text().splitlines()
    names = ["praf", "pmek", "plcg", "PIP2", "PIP3", "p44.42", "pakts473", "PKA", "PKC", "P38", "pjnk", "INT"]
    assert text[0].split() == list(sachs.NAMES) + ["INT"]
    (tmp_path / "renamed.txt").write_text("\n".join([" ".join(names)] + text[1:]) + "\n")
    renamed_codes, renamed_target = sachs.read_bnlearn_interventional(tmp_path / "renamed.txt")
    np.testing.assert_array_equal(renamed_codes, codes)
    np.testing.assert_array_equal(renamed_target, target)


def test_bnlearn_dataset_folder(tmp_path):
    path = tmp_path / "sachs.interventional.txt"
    codes, target = synthetic_bnlearn(path, rows_per_group=20)
    out = sachs.prepare_sachs(tmp_path / "ds", bnlearn_file=path, seed=1)
    ds = load_dataset(out)
    assert ds.train.shape == (80, 11) and ds.test.shape == (40, 11)  # PIP2 and Mek held out
    assert ds.meta["source"] == "bnlearn" and ds.meta["test_conditions"] == ["Mek", "PIP2"]
    mek, pip2 = sachs.NAMES.index("Mek"), sachs.NAMES.index("PIP2")
    np.testing.assert_array_equal(ds.test, np.concatenate([codes[target == mek], codes[target == pip2]]))
    assert ds.test_interventions[:20, mek].all() and ds.test_interventions[:20].sum() == 20
    assert ds.test_interventions[20:, pip2].all() and ds.test_interventions[20:].sum() == 20
    np.testing.assert_array_equal(ds.train[:20], codes[target == -1])
    assert ds.train_interventions[:20].sum() == 0
    for t in np.unique(target[target >= 0]):
        rows = ds.train_interventions[:, t] == 1
        assert rows.sum() in (0, 20)
    assert np.all(ds.train_interventions.sum(axis=1) <= 1)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["graph_is_ground_truth"] is False and "REFERENCE" in meta["graph"]
    small = sachs.sachs_from_bnlearn(path, seed=1, num_train=10)
    assert small.train.shape == (10, 11)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("", "empty file"),
        ("Raf Mek Plcg PIP2 PIP3 Erk Akt PKA PKC P38 Jnk\n1 1 1 1 1 1 1 1 1 1 1\n", "no INT column"),
        ("Raf Mek Plcg PIP2 PIP3 Erk Akt PKA PKC P38 Foo INT\n", "unknown column 'Foo'"),
        ("HEADER\n1 1 1 1 1 1 1 1 1 1 1\n", "line 2 has 11 values, the header has 12"),
        ("HEADER\n1 1 1 1 4 1 1 1 1 1 1 0\n", "line 2, column 'PIP3': level 4 is not 1, 2 or 3"),
        ("HEADER\n1 1 1 1 1 1 1 1 1 1 1 12\n", "line 2, column 'INT': 12 is not 0 or a protein column"),
        ("HEADER\n1 1 1 1 1 1 1 1 1 1 1 0\n1 1 1 1 1 1 high 1 1 1 1 0\n", "line 3, column 'Akt': expected"),
        ("HEADER\n", "no observations below the header"),
    ],
)
def test_malformed_bnlearn_file_gives_clear_error_and_no_folder(tmp_path, body, message):
    header = " ".join(list(sachs.NAMES) + ["INT"])
    path = tmp_path / "bad.txt"
    path.write_text(body.replace("HEADER", header))
    with pytest.raises(DataError, match=message) as info:
        sachs.prepare_sachs(tmp_path / "out", bnlearn_file=path)
    assert str(info.value).startswith(str(path)) and "\n" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt"]


def test_bnlearn_missing_file_and_bad_targets(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        sachs.read_bnlearn_interventional(tmp_path / "absent.txt")
    path = tmp_path / "s.txt"
    synthetic_bnlearn(path, rows_per_group=5)
    with pytest.raises(JspgfnError, match="unknown intervention target Jnk"):
        sachs.sachs_from_bnlearn(path, test_targets=("Jnk",))
    with pytest.raises(JspgfnError, match="observational rows cannot be held out"):
        sachs.sachs_from_bnlearn(path, test_targets=("observational",))


def test_folder_write_failure_leaves_previous_folder(tmp_path, monkeypatch):
    path = tmp_path / "s.txt"
    synthetic_bnlearn(path, rows_per_group=5)
    out = sachs.prepare_sachs(tmp_path / "ds", bnlearn_file=path, seed=0)
    before = folder_files(out)

    def broken(folder, dataset):
        (folder / "train.csv").write_text("partial")
        raise OSError("disk full")

    import jspgfn.dataset

    monkeypatch.setattr(jspgfn.dataset, "write_dataset", broken)  # what write_dataset_folder calls
    with pytest.raises(OSError, match="disk full"):
        sachs.prepare_sachs(tmp_path / "ds", bnlearn_file=path, seed=1)
    assert folder_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "s.txt"]
