"""benchmarks/accuracy_seeds.py's edge classes (--classes): on a hand-made case, each class sums the marginals of
exactly its edges, and the classes partition the off-diagonal pairs (true / reversed / other, and the bands)."""

import ast

import numpy as np
import pytest

from conftest import benchmark_module


def test_the_classes_sum_their_edges_and_partition_the_pairs():
    graph = np.zeros((3, 3), np.uint8)
    graph[0, 1] = graph[1, 2] = 1
    exact = np.array([[0.0, 0.95, 0.2], [0.05, 0.0, 0.6], [0.01, 0.3, 0.0]])
    approx = np.array([[0.5, 0.8, 0.1], [0.1, 0.5, 0.4], [0.0, 0.2, 0.5]])  # a diagonal that must be left out
    classes = benchmark_module("accuracy_seeds").edge_classes(approx, exact, graph)
    assert classes["true"] == pytest.approx((0.8 + 0.4, 0.95 + 0.6))
    assert classes["reversed"] == pytest.approx((0.1 + 0.2, 0.05 + 0.3))
    assert classes["other"] == pytest.approx((0.1 + 0.0, 0.2 + 0.01))
    assert classes["exact>=0.9"] == pytest.approx((0.8, 0.95))
    assert classes["exact>=0.5"] == pytest.approx((0.4, 0.6))
    assert classes["exact>=0.1"] == pytest.approx((0.1 + 0.2, 0.2 + 0.3))
    assert classes["exact>=0.0"] == pytest.approx((0.1 + 0.0, 0.05 + 0.01))
    off_total = approx.sum() - np.trace(approx)
    for names in (("true", "reversed", "other"), [k for k in classes if k.startswith("exact")]):
        assert np.isclose(sum(classes[k][0] for k in names), off_total)
    assert "true" not in benchmark_module("accuracy_seeds").edge_classes(approx, exact, None)


def test_a_recipe_trains_with_its_options_for_the_datasets_d(tmp_path, capsys):
    """--recipe lingauss: the run's options are recipe_options for the data's d, --set over them (the header says
    which), and every run gets its row against the exact posterior."""
    from jspgfn.cli import main as cli_main
    from jspgfn.gflownet.recipes import recipe_options
    from test_gflownet_train import TINY

    data = tmp_path / "d4"
    assert cli_main(["generate", "--graph", "er1", "--model", "linear", "--d", "4", "--n", "30", "--seed", "1",
                     "--out", str(data)]) == 0  # fmt: skip
    assert cli_main(["exact", str(data), "--out", str(tmp_path / "exact.npz")]) == 0
    sets = [f"--set={k}={v}" for k, v in {**TINY, "backward_every": 5}.items()]
    capsys.readouterr()
    benchmark_module("accuracy_seeds").main(
        [
            f"{data}={tmp_path / 'exact.npz'}",
            "--preset",
            "smoke",
            "--seeds",
            "0",
            "--eval-at",
            "10",
            "--recipe",
            "lingauss",
            *sets,
        ]  # fmt: skip
    )
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("# device="))
    assert "recipe=lingauss" in header
    shown = ast.literal_eval(header.split("overrides=", 1)[1])  # the dict as the script printed it
    assert shown == {**recipe_options("lingauss", 4, "lingauss"), **TINY, "backward_every": 5}
    assert shown["stop_score_closed_form"] is True and shown["backward_batch"] == 0.5
    rows = [line.split() for line in out.splitlines() if line.startswith(str(data))]
    assert len(rows) == 1 and rows[0][2] == "10" and 0 <= float(rows[0][4]) <= 1
