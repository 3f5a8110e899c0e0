"""`jspgfn realdata sachs|gene-expression`: dataset folders from the command line, one clear line on bad input."""

import numpy as np
import pytest

from jspgfn.cli import main
from jspgfn.dataset import load_dataset
from jspgfn.errors import JspgfnError
from jspgfn.realdata import gene_expression as ge
from jspgfn.realdata import sachs

GENES = ("GATA1", "TP53", "MYC", "CD4")
CELLS = [
    ("control", [3, 0, 5, 1]),
    ("", [1, 1, 0, 2]),
    ("TP53", [2, 0, 3, 0]),
    ("TP53", [4, 0, 0, 1]),
    ("MYC", [1, 3, 0, 0]),
    ("MYC", [0, 5, 0, 2]),
    ("CD4", [2, 2, 2, 0]),
]


def write_table(path, cells=CELLS, genes=GENES, target="perturbation"):
    lines = [",".join(tuple(genes) + (target,))]
    lines += [",".join([str(v) for v in counts] + [t]) for t, counts in cells]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_cli(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def assert_one_error_line(status, err, *words):
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jspgfn: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def no_output(folder):
    """Nothing at `folder` and no temporary sibling left behind."""
    return not folder.exists() and not [p for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]


# ----------------------------------------------------------------- gene expression: the user's table


def test_gene_expression_table(tmp_path, capsys):
    table = write_table(tmp_path / "cells.csv")
    out = tmp_path / "ge"
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, stdout, _ = run_cli([*argv, "--held-out", "CD4", "--out", str(out)], capsys)
    assert status == 0 and "wrote" in stdout
    ds = load_dataset(out)
    assert ds.names == GENES and ds.train.shape == (6, 4) and ds.test.shape == (1, 4)
    assert ds.test_interventions.tolist() == [[0, 0, 0, 1]] and ds.meta["test_knockouts"] == ["CD4"]
    # A number of held-out knockouts, drawn with the seed.
    status, _, _ = run_cli([*argv, "--held-out", "2", "--seed", "3", "--out", str(tmp_path / "ge2")], capsys)
    assert status == 0 and len(load_dataset(tmp_path / "ge2").meta["test_knockouts"]) == 2


@pytest.mark.parametrize(
    "case, words",
    [
        ("missing_column", ["cells.csv", "perturbation"]),
        ("unknown_gene", ["cells.csv", "FOXP3"]),
        ("negative", ["cells.csv", "negative"]),
    ],
)
def test_gene_expression_malformed_table_one_line_no_output(tmp_path, capsys, case, words):
    table = tmp_path / "cells.csv"
    if case == "missing_column":
        write_table(table, target="condition")
    elif case == "unknown_gene":
        write_table(table, cells=CELLS + [("FOXP3", [1, 1, 1, 1])])
    else:
        write_table(table, cells=CELLS + [("MYC", [1, -2, 0, 0])])
    out = tmp_path / "ge"
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, err = run_cli([*argv, "--out", str(out)], capsys)
    assert_one_error_line(status, err, *words)
    assert no_output(out)


def test_gene_expression_value_error_names_the_users_file_and_line(tmp_path, capsys):
    """Not the temporary folder, not a numpy repr; a --transform log1p makes the same value usable."""
    table = write_table(tmp_path / "cells.csv", cells=CELLS[:2] + [("TP53", [2e20, 0, 3, 0])] + CELLS[3:])
    out = tmp_path / "o_x"
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, err = run_cli([*argv, "--out", str(out)], capsys)
    line = assert_one_error_line(status, err, f"{table}: line 4, column 'GATA1': value 2e+20 is too large")
    assert ".tmp" not in line and "np." not in line
    assert no_output(out)
    status, _, _ = run_cli([*argv, "--transform", "log1p", "--out", str(out)], capsys)
    assert status == 0


def test_range_errors_name_the_flags(tmp_path, capsys):
    table = write_table(tmp_path / "cells.csv")
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, err = run_cli([*argv, "--held-out", "7", "--out", str(tmp_path / "o")], capsys)
    assert_one_error_line(status, err, "--held-out must lie in [1, 3]", "got 7")
    status, _, err = run_cli(["realdata", "gene-expression", "--num-genes", "0", "--out", str(tmp_path / "o")], capsys)
    assert_one_error_line(status, err, "--num-genes must be >= 2, got 0")
    with pytest.raises(JspgfnError, match="^held_out must lie"):  # from Python: the parameter's name
        ge.gene_expression_dataset(table, target_column="perturbation", held_out=7)


def test_gene_expression_bad_options(tmp_path, capsys):
    table = write_table(tmp_path / "cells.csv")
    out = tmp_path / "ge"
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, err = run_cli([*argv, "--held-out", "NOPE", "--out", str(out)], capsys)
    assert_one_error_line(status, err, "NOPE")
    status, _, err = run_cli([*argv, "--transform", "sqrt", "--out", str(out)], capsys)
    assert_one_error_line(status, err, "sqrt")
    status, _, err = run_cli(
        ["realdata", "gene-expression", "--input", str(tmp_path / "none.csv"), "--out", str(out)], capsys
    )
    assert_one_error_line(status, err, "none.csv", "not found")
    # --out naming a file is refused before any work.
    (tmp_path / "file").write_text("x")
    status, _, err = run_cli([*argv, "--out", str(tmp_path / "file")], capsys)
    assert_one_error_line(status, err, "is a file")
    assert no_output(out)


@pytest.mark.parametrize("marker", ["meta.json", "train.csv"])
def test_realdata_never_deletes_files_it_did_not_write(tmp_path, capsys, marker):
    """A folder that looks like a dataset (meta.json or train.csv) but also holds the user's files is
    refused, with every file kept; a folder of a dataset's own files alone is replaced."""
    table = write_table(tmp_path / "cells.csv")
    out = tmp_path / "p"
    (out / "code").mkdir(parents=True)
    (out / marker).write_text("{}")
    (out / "thesis.tex").write_text("thesis")
    (out / "code" / "a.py").write_text("x")
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, err = run_cli([*argv, "--out", str(out)], capsys)
    assert_one_error_line(status, err, str(out), "thesis.tex", "code/", "not replacing")
    assert (out / "thesis.tex").read_text() == "thesis" and (out / "code" / "a.py").read_text() == "x"
    assert (out / marker).read_text() == "{}"
    (out / "thesis.tex").unlink()
    (out / "code" / "a.py").unlink()
    (out / "code").rmdir()
    status, _, _ = run_cli([*argv, "--held-out", "CD4", "--out", str(out)], capsys)
    assert status == 0 and load_dataset(out).meta["test_knockouts"] == ["CD4"]


def test_stale_temporary_folders_of_a_killed_run_are_removed(tmp_path, capsys):
    """kill -9 mid-write leaves `.p.<8 characters>.tmp/` beside --out; the next run removes it (when older
    than atomic.STALE_SECONDS, so that a live writer's folder is spared), not another target's."""
    import os
    import time

    from jspgfn import atomic

    table = write_table(tmp_path / "cells.csv")
    stale, fresh, other = tmp_path / ".p.k1ll3d_0.tmp", tmp_path / ".p.l1v3abcd.tmp", tmp_path / ".pp.k1ll3d_0.tmp"
    for folder in (stale, fresh, other):
        folder.mkdir()
        (folder / "train.csv").write_text("a\n1\n")
    old = time.time() - 2 * atomic.STALE_SECONDS
    for folder in (stale, other):
        os.utime(folder, (old, old))
    argv = ["realdata", "gene-expression", "--input", str(table), "--target-column", "perturbation"]
    status, _, _ = run_cli([*argv, "--out", str(tmp_path / "p")], capsys)
    assert status == 0
    assert not stale.exists() and fresh.is_dir() and other.is_dir()
    status, _, _ = run_cli([*argv, "--out", str(tmp_path / "p")], capsys)  # replacing leaves nothing either
    assert status == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".p.")) == [fresh.name]


# ----------------------------------------------------------------- gene expression: the simulated stand-in


def test_gene_expression_simulated_tiny(tmp_path, capsys):
    pytest.importorskip("sergio_rs")
    out = tmp_path / "sim"
    size = ["--num-genes", "6", "--num-train", "30", "--num-test", "8"]
    size += ["--num-train-knockouts", "2", "--num-test-knockouts", "2"]
    status, stdout, _ = run_cli(["realdata", "gene-expression", *size, "--seed", "1", "--out", str(out)], capsys)
    assert status == 0 and "SIMULATED" in stdout
    ds = load_dataset(out)
    assert ds.train.shape == (30, 6) and ds.test.shape == (8, 6) and ds.meta["simulated"] is True
    assert ds.graph is not None
    # Bad sizes: one line, nothing written.
    bad = ["--num-genes", "3", "--num-train-knockouts", "2", "--num-test-knockouts", "2"]
    status, _, err = run_cli(["realdata", "gene-expression", *bad, "--out", str(tmp_path / "bad")], capsys)
    assert_one_error_line(status, err, "knockouts")
    assert no_output(tmp_path / "bad")


# ----------------------------------------------------------------- Sachs


def synthetic_bnlearn(path, rows_per_group=20, seed=0):
    rng = np.random.default_rng(seed)
    targets = [-1] + [sachs.NAMES.index(n) for n in ("Mek", "PIP2", "Akt", "PKC", "PKA")]
    target = np.repeat(targets, rows_per_group)
    sachs.write_bnlearn_format(path, rng.integers(0, 3, size=(len(target), 11)), target)
    return path


def test_sachs_from_bnlearn_file(tmp_path, capsys):
    source = synthetic_bnlearn(tmp_path / "sachs.interventional.txt")
    out = tmp_path / "sachs"
    status, stdout, _ = run_cli(
        ["realdata", "sachs", "--bnlearn-file", str(source), "--num-train", "30", "--out", str(out)], capsys
    )
    assert status == 0 and "17 edges" in stdout
    ds = load_dataset(out)
    assert ds.num_variables == 11 and ds.train.shape[0] == 30 and ds.test.shape[0] == 40
    assert ds.meta["graph_is_ground_truth"] is False


def test_sachs_malformed_file_one_line_no_output(tmp_path, capsys):
    source = synthetic_bnlearn(tmp_path / "sachs.interventional.txt")
    lines = source.read_text().splitlines()
    source.write_text("\n".join(lines[:3] + ["1 2 3"] + lines[4:]) + "\n")  # a short row
    out = tmp_path / "sachs"
    status, _, err = run_cli(["realdata", "sachs", "--bnlearn-file", str(source), "--out", str(out)], capsys)
    assert_one_error_line(status, err, "sachs.interventional.txt")
    assert no_output(out)
    status, _, err = run_cli(
        ["realdata", "sachs", "--bnlearn-file", str(source), "--cdt-file", "x.csv", "--out", str(out)], capsys
    )
    assert_one_error_line(status, err, "--cdt-file")


def test_sachs_from_cdt(tmp_path, capsys):
    try:
        sachs.cdt_data_path()
    except JspgfnError:
        pytest.skip("cdt's cyto_full_data.csv is not installed (pip install --no-deps cdt)")
    out = tmp_path / "sachs_small"
    status, _, _ = run_cli(["realdata", "sachs", "--num-train", "100", "--seed", "2", "--out", str(out)], capsys)
    assert status == 0
    ds = load_dataset(out)
    assert ds.train.shape == (100, 11) and ds.test.shape == (1200, 11)
    assert set(np.unique(ds.train)) <= {0.0, 1.0, 2.0} and ds.meta["seed"] == 2
    # Too many training rows: one line, nothing written.
    status, _, err = run_cli(["realdata", "sachs", "--num-train", "999999", "--out", str(tmp_path / "x")], capsys)
    assert_one_error_line(status, err, "--num-train must be between 1 and 4200")
    assert no_output(tmp_path / "x")
