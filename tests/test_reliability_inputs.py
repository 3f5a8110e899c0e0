"""Bad inputs, as a new user would give them: each is refused where it enters, on one line.

Every expected failure of the CLI is `jspgfn: error: <file>: <problem>` on stderr with exit status 2,
and nothing is written at --out; a non-finite result is an error, never a file.
"""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from jspgfn import cli
from jspgfn.dataset import (
    MAX_ABS_VALUE,
    Dataset,
    DataWarning,
    data_fingerprint,
    load_dataset,
    read_csv_matrix,
    write_dataset,
)
from jspgfn.errors import DataError, JspgfnError
from jspgfn.exact import ExactPosterior, compute_exact_posterior, sample_exact, save_exact
from jspgfn.generate import generate
from jspgfn.gflownet.presets import PRESETS, TrainConfig, get_preset, option_problem
from jspgfn.models import LinearGaussian, get_graph_prior
from jspgfn.samples import PosteriorSamples, load_samples, save_samples

D = 3


def run(capsys, *argv):
    """(exit status, stdout, stderr lines) of `jspgfn argv...`."""
    status = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err.splitlines()


def refused(capsys, *argv, names=(), out=None):
    """Assert a one-line `jspgfn: error:` with status 2 mentioning every text in `names`; nothing at `out`."""
    status, _, lines = run(capsys, *argv)
    assert status == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith("jspgfn: error: "), lines
    for name in names:
        assert str(name) in lines[0], lines[0]
    if out is not None:
        assert not Path(out).exists() or (Path(out).is_dir() and not any(Path(out).iterdir()))
    return lines[0]


def write_csv(path, text, encoding="utf-8"):
    Path(path).write_text(text, encoding=encoding)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Two datasets of the same d (A and B), the exact posterior and exact samples of A."""
    root = tmp_path_factory.mktemp("reliability")
    model, prior = LinearGaussian(), get_graph_prior("uniform", D)
    paths = {}
    for name, seed in (("a", 0), ("b", 1)):
        dataset = generate("er1", "linear", D, 30, 10, seed=seed)
        write_dataset(root / name, dataset)
        paths[name] = root / name
    dataset = load_dataset(paths["a"])
    posterior = compute_exact_posterior(dataset, model, prior)
    save_exact(root / "exact_a.npz", posterior)
    samples = sample_exact(posterior, dataset, model, np.random.default_rng(0), 50)
    samples.metadata["seed"] = 0
    save_samples(root / "samples_a.npz", samples)
    paths.update(root=root, exact_a=root / "exact_a.npz", samples_a=root / "samples_a.npz")
    return paths


# ------------------------------------------------------------ data values


@pytest.mark.parametrize(
    "value, problem",
    [("1e300", "too large"), ("-2e15", "too large"), ("inf", "not finite"), ("-Infinity", "not finite")],
)
def test_exact_refuses_huge_or_infinite_data(tmp_path, capsys, value, problem):
    data = write_csv(tmp_path / "big.csv", f"A,B,C\n1,2,3\n{value},2,1\n3,4,5\n2,1,0\n")
    out = tmp_path / "exact.npz"
    line = refused(capsys, "exact", data, "--out", out, names=(data, "line 3", "column 'A'", problem), out=out)
    assert "nan" not in line.lower()


def test_largest_accepted_value_still_works(tmp_path):
    data = write_csv(tmp_path / "ok.csv", f"A,B\n{MAX_ABS_VALUE!r},1\n-1,2\n0,3\n")
    names, values = read_csv_matrix(data)
    assert values[0, 0] == MAX_ABS_VALUE


def test_train_refuses_huge_data(tmp_path, capsys):
    data = write_csv(tmp_path / "big.csv", "A,B,C\n1,2,3\n1e300,2,1\n3,4,5\n2,1,0\n")
    out = tmp_path / "run"
    refused(capsys, "train", data, "--preset", "smoke", "--no-progress", "--out", out, names=(data, "line 3"), out=out)


def test_test_csv_is_checked_too(tmp_path, files):
    folder = tmp_path / "ds"
    folder.mkdir()
    for name in ("train.csv", "meta.json"):
        (folder / name).write_bytes((files["a"] / name).read_bytes())
    write_csv(folder / "test.csv", "X0,X1,X2\n1,2,1e20\n")
    with pytest.raises(DataError, match="test.csv: line 2, column 'X2'.*too large"):
        load_dataset(folder)


def test_check_values_for_python_datasets():
    dataset = Dataset(train=np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 3.0]]), names=("a", "b"), source="mine")
    with pytest.raises(DataError, match=r"mine: training data row 2, column 'a'.*not finite"):
        compute_exact_posterior(dataset, LinearGaussian(), get_graph_prior("uniform", 2))


def test_utf8_bom_is_stripped(tmp_path):
    data = write_csv(tmp_path / "bom.csv", "A,B\n1,2\n2,5\n", encoding="utf-8-sig")
    assert data.read_bytes().startswith(b"\xef\xbb\xbf")
    names, _ = read_csv_matrix(data)
    assert names == ("A", "B")
    assert load_dataset(data).names == ("A", "B")


def test_constant_column_warns_on_one_line(tmp_path, capsys):
    data = write_csv(tmp_path / "const.csv", "A,B,C\n1,2,7\n2,5,7\n3,1,7\n0,4,7\n")
    with pytest.warns(DataWarning, match=r"const.csv: column 'C' is constant"):
        load_dataset(data)
    out = tmp_path / "exact.npz"
    status, stdout, lines = run(capsys, "exact", data, "--out", out)
    assert status == 0 and out.is_file() and "wrote" in stdout
    assert lines == [lines[0]] and lines[0].startswith(f"jspgfn: warning: {data}: column 'C' is constant")


@pytest.mark.parametrize(
    "text, warning",
    [
        ("A,B,C\n1,1,3\n2,2,1\n3,3,4\n4,4,2\n", "duplicated columns ('B' = 'A')"),
        ("A,B\n1e8,2\n-3e8,1\n2e8,3\n", "column(s) 'A' have standard deviations up to 2.16e+08"),
    ],
)
def test_duplicated_or_badly_scaled_columns_warn_on_one_line(tmp_path, capsys, text, warning):
    data = write_csv(tmp_path / "d.csv", text)
    out = tmp_path / "exact.npz"
    status, _, lines = run(capsys, "exact", data, "--out", out)
    assert status == 0 and out.is_file()
    assert lines == [f"jspgfn: warning: {data}: {warning}" + lines[0].split(warning, 1)[1]], lines


def test_gene_expression_split_with_controls_only_warns(tmp_path, capsys):
    table = write_csv(tmp_path / "cells.csv", "g1,g2,target\n1,2,control\n2,1,control\n3,3,g1\n")
    status, _, lines = run(capsys, "realdata", "gene-expression", "--input", table, "--out", tmp_path / "ko")
    assert status == 0
    assert len(lines) == 1 and lines[0].startswith(f"jspgfn: warning: {table}: every knockout is held out"), lines


def test_no_warning_without_constant_columns(files, recwarn):
    load_dataset(files["a"])
    assert not [w for w in recwarn if issubclass(w.category, DataWarning)]


# ------------------------------------------------------------ exact


@pytest.mark.parametrize(
    "option, value",
    [("--obs-var", "nan"), ("--obs-var", "-1"), ("--obs-var", "0"), ("--obs-var", "inf"), ("--prior-var", "0")],
)
def test_exact_refuses_bad_variances(tmp_path, capsys, files, option, value):
    out = tmp_path / "exact.npz"
    refused(capsys, "exact", files["a"], option, value, "--out", out, names=(option,), out=out)


def test_exact_library_refuses_bad_model_settings(files):
    dataset, prior = load_dataset(files["a"]), get_graph_prior("uniform", D)
    for model in (
        LinearGaussian(obs_var=float("nan")),
        LinearGaussian(prior_var=0.0),
        LinearGaussian(prior_mean=math.inf),
    ):
        with pytest.raises(JspgfnError, match="must be a finite number"):
            compute_exact_posterior(dataset, model, prior)


def test_exact_out_on_a_folder(tmp_path, capsys, files):
    folder = tmp_path / "existing"
    folder.mkdir()
    refused(capsys, "exact", files["a"], "--out", folder, names=(folder, "folder"))
    assert not any(folder.iterdir())


def test_exact_posterior_of_unusable_data_is_an_error_not_a_file(tmp_path):
    a = np.random.default_rng(0).standard_normal(30) * 1e14  # within the bound, but collinear at 1e28 scale
    dataset = Dataset(train=np.stack([a, 2 * a, a + 1], 1), names=("a", "b", "c"), source="collinear.csv")
    with pytest.raises(DataError, match="collinear.csv: the exact posterior"):
        compute_exact_posterior(dataset, LinearGaussian(), get_graph_prior("uniform", 3))


def test_save_exact_refuses_non_finite(tmp_path, files):
    dataset = load_dataset(files["a"])
    posterior = compute_exact_posterior(dataset, LinearGaussian(), get_graph_prior("uniform", D))
    bad = ExactPosterior(**{**posterior.__dict__, "log_probs": np.full_like(posterior.log_probs, np.nan)})
    out = tmp_path / "exact.npz"
    with pytest.raises(DataError, match=f"{out}: not written"):
        save_exact(out, bad)
    bad = ExactPosterior(**{**posterior.__dict__, "edge": np.full_like(posterior.edge, np.nan)})
    with pytest.raises(DataError, match="edge marginals"):
        save_exact(out, bad)
    assert not out.exists()


# ------------------------------------------------------------ generate


@pytest.mark.parametrize(
    "args, names",
    [
        (("--obs-var", "-1"), ("--obs-var",)),
        (("--obs-var", "nan"), ("--obs-var",)),
        (("--d", "1"), ("--d must be >= 2, got 1",)),
        (("--n", "0"), ("--n must be >= 1, got 0",)),
        (("--n-test", "-1"), ("--n-test must be >= 0, got -1",)),
        (("--interventional-fraction", "1.5"), ("--interventional-fraction",)),
        (("--interventional-fraction", "nan"), ("--interventional-fraction",)),
        (("--seed", "-1"), ("--seed",)),
        (("--graph", "er0"), ("er0",)),
    ],
)
def test_generate_refuses_bad_options(tmp_path, capsys, args, names):
    out = tmp_path / "ds"
    refused(capsys, "generate", "--d", "3", *args, "--out", out, names=names, out=out)


def test_generate_out_on_a_file(tmp_path, capsys):
    out = write_csv(tmp_path / "taken.csv", "x\n")
    refused(capsys, "generate", "--d", "3", "--out", out, names=(out, "is a file"))
    assert out.read_text() == "x\n"


def test_generate_overflow_is_an_error_not_a_dataset(monkeypatch):
    import jspgfn.generate as gen

    def overflowing(rng, model, theta, graph, num_rows, *args):
        return np.full((num_rows, graph.shape[0]), np.inf), np.zeros((num_rows, graph.shape[0]), np.uint8)

    monkeypatch.setattr(gen, "ancestral_sample", overflowing)
    with pytest.raises(JspgfnError, match="overflow"):
        gen.generate("er1", "linear", 3, 10, 0)


def test_write_dataset_refuses_non_finite(tmp_path):
    dataset = Dataset(train=np.array([[0.0, np.nan], [1.0, 2.0]]), names=("a", "b"))
    with pytest.raises(DataError, match="train.csv: training data row 1, column 'b'"):
        write_dataset(tmp_path / "ds", dataset)
    assert not (tmp_path / "ds").exists()


# ------------------------------------------------------------ training options


@pytest.mark.parametrize(
    "item, problem",
    [
        ("batch_size=abc", "not of type int"),
        ("batch_size=-1", "must be > 0"),
        ("learning_rate=.nan", "not a finite number"),
        ("learning_rate=0", "must be > 0"),
        ("num_iterations=1.5", "not of type int"),
        ("num_iterations=0", "must be > 0"),
        ("exploration_end=1.5", "in [0, 1]"),
        ("prefill=-1", "must be >= 0"),
        ("graph_prior=foo", "unknown graph prior"),
    ],
)
def test_train_refuses_bad_options(tmp_path, capsys, files, item, problem):
    out = tmp_path / "run"
    key = item.partition("=")[0]
    argv = ("train", files["a"], "--preset", "smoke", "--no-progress", "--set", item, "--out", out)
    refused(capsys, *argv, names=(f"training option {key}", problem), out=out)


POSITIVE_INT = [
    "num_iterations",
    "iterations_per_dispatch",
    "num_envs",
    "batch_size",
    "num_theta_samples",
    "replay_capacity",
    "embed_dim",
    "mlp_hidden",
    "num_heads",
    "key_size",
    "theta_hidden",
    "theta_layers",
]
POSITIVE_FLOAT = ["learning_rate", "huber_delta", "grad_clip", "init_scale", "residual_scale"]
NON_NEGATIVE = ["prefill", "warmup", "noise_pool"]
UNIT = ["exploration_start", "exploration_end", "exploration_fraction", "end_learning_rate_factor"]


@pytest.mark.parametrize("key", POSITIVE_INT)
def test_positive_integer_options(key):
    assert option_problem(key, 0) == "0 must be > 0"
    assert option_problem(key, -3) is not None
    assert "not of type int" in option_problem(key, 1.5)
    assert "not of type int" in option_problem(key, True)
    assert option_problem(key, 1) is None


@pytest.mark.parametrize("key", POSITIVE_FLOAT)
def test_positive_float_options(key):
    for bad in (0, -1.0, math.nan, math.inf):
        assert option_problem(key, bad) is not None, bad
    assert option_problem(key, 1) is None and option_problem(key, 1e-4) is None  # ints are accepted for floats


@pytest.mark.parametrize("key", NON_NEGATIVE)
def test_non_negative_options(key):
    assert option_problem(key, -1) == "-1 must be >= 0"
    assert option_problem(key, 0) is None


@pytest.mark.parametrize("key", UNIT)
def test_unit_interval_options(key):
    for bad in (-0.1, 1.01, math.nan):
        assert option_problem(key, bad) is not None, bad
    assert option_problem(key, 0) is None and option_problem(key, 1.0) is None


def test_other_options():
    assert option_problem("penalty", -0.5) is not None and option_problem("penalty", 0.0) is None
    assert option_problem("checkpoint_every_seconds", -1) is not None
    assert option_problem("checkpoint_every_seconds", 0) is None
    assert option_problem("checkpoint_every_seconds", math.inf) is not None
    for key in ("minibatch_rows", "max_parents"):
        assert option_problem(key, None) is None and option_problem(key, 2) is None
        assert option_problem(key, 0) is not None and option_problem(key, 1.0) is not None
    assert option_problem("graph_prior", "erdos_renyi") is None
    assert "unknown graph prior" in option_problem("graph_prior", "foo")
    assert option_problem("ffn", False) is None and option_problem("ffn", 1) is not None


def test_presets_satisfy_the_ranges():
    for config in (TrainConfig(), *PRESETS.values()):
        for key, value in config.to_dict().items():
            assert option_problem(key, value) is None, (key, value)
    with pytest.raises(JspgfnError, match="^training option warmup: -5 must be >= 0$"):
        get_preset("smoke", warmup=-5)


def test_baseline_param_of_wrong_type(tmp_path, capsys, files):
    pytest.importorskip("jspgfn_baselines")
    out = tmp_path / "samples.npz"
    refused(capsys, "baseline", "b-pc", files["a"], "--param", "num_bootstrap=ten", "--out", out,
            names=("num_bootstrap",), out=out)  # fmt: skip


# ------------------------------------------------------------ samples


def _samples(**changes):
    fields = dict(
        graphs=np.zeros((4, D, D), np.uint8),
        theta=np.zeros((4, D, D)),
        metadata={"method": "test", "model": "lingauss", "seed": 0},
        log_weights=np.zeros(4),
    )
    return PosteriorSamples(**{**fields, **changes})


@pytest.mark.parametrize(
    "changes, problem",
    [
        ({"log_weights": np.array([0.0, np.nan, 0.0, 0.0])}, "log_weights"),
        ({"log_weights": np.array([0.0, np.inf, 0.0, 0.0])}, "log_weights"),
        ({"log_weights": np.full(4, -np.inf)}, "log_weights"),
        ({"theta": np.full((4, D, D), np.nan)}, "non-finite"),
        ({"graphs": np.full((4, D, D), 2, np.uint8)}, "only 0 and 1"),
    ],
)
def test_save_samples_refuses_non_finite(tmp_path, changes, problem):
    out = tmp_path / "samples.npz"
    with pytest.raises(DataError, match=f"{out}: .*{problem}"):
        save_samples(out, _samples(**changes))
    assert not out.exists()


def test_weight_zero_samples_are_accepted(tmp_path):
    samples = _samples(log_weights=np.array([0.0, -np.inf, -1.0, 0.0]))
    save_samples(tmp_path / "s.npz", samples)
    assert load_samples(tmp_path / "s.npz").weights()[1] == 0


def test_fractional_graph_entries_in_a_file_are_refused(tmp_path):
    path = tmp_path / "s.npz"
    metadata = json.dumps({"method": "test", "model": "lingauss", "seed": 0})
    np.savez(path, graphs=np.full((2, D, D), 0.5), theta=np.zeros((2, D, D)), metadata=np.array(metadata))
    with pytest.raises(DataError, match="only 0 and 1"):
        load_samples(path)


def test_corrupt_npz_is_one_line_without_pickles(tmp_path, capsys, files):
    samples = tmp_path / "samples.npz"
    samples.write_bytes(b"this is not an npz archive at all\n" * 4)
    line = refused(capsys, "evaluate", samples, files["a"], "--out", tmp_path / "m.json", names=(samples,))
    assert "pickle" not in line
    assert not (tmp_path / "m.json").exists()


# ------------------------------------------------------------ evaluate: dataset identity


def test_fingerprint_is_the_data_not_the_path(tmp_path, files):
    a = load_dataset(files["a"])
    copy = write_csv(tmp_path / "train.csv", (files["a"] / "train.csv").read_text())
    assert load_dataset(copy).fingerprint() == a.fingerprint() == data_fingerprint(a.train)
    assert load_dataset(files["b"]).fingerprint() != a.fingerprint()
    interventions = np.zeros(a.train.shape, np.uint8)
    assert data_fingerprint(a.train, interventions) == a.fingerprint()  # no intervened row: same data
    interventions[0, 0] = 1
    assert data_fingerprint(a.train, interventions) != a.fingerprint()


def test_writers_record_the_fingerprint(files):
    a = load_dataset(files["a"])
    assert load_samples(files["samples_a"]).metadata["dataset_sha256"] == a.fingerprint()
    from jspgfn.exact import load_exact

    assert load_exact(files["exact_a"]).metadata["dataset_sha256"] == a.fingerprint()


def test_evaluate_refuses_samples_of_another_dataset(tmp_path, capsys, files):
    out = tmp_path / "metrics.json"
    refused(capsys, "evaluate", files["samples_a"], files["b"], "--out", out,
            names=(files["samples_a"], files["b"], "other data"), out=out)  # fmt: skip


def test_evaluate_refuses_an_exact_posterior_of_another_dataset(tmp_path, capsys, files):
    dataset_b = load_dataset(files["b"])
    model = LinearGaussian()
    posterior_b = compute_exact_posterior(dataset_b, model, get_graph_prior("uniform", D))
    samples_b = sample_exact(posterior_b, dataset_b, model, np.random.default_rng(0), 20)
    samples_b.metadata["seed"] = 0
    save_samples(tmp_path / "samples_b.npz", samples_b)
    out = tmp_path / "metrics.json"
    argv = ("evaluate", tmp_path / "samples_b.npz", files["b"], "--exact", files["exact_a"], "--out", out)
    refused(capsys, *argv, names=(files["exact_a"], files["b"], "exact posterior"), out=out)


def test_evaluate_accepts_older_files_with_a_note(tmp_path, capsys, files):
    samples = load_samples(files["samples_a"])
    del samples.metadata["dataset_sha256"]
    save_samples(tmp_path / "old.npz", samples)
    out = tmp_path / "metrics.json"
    status, _, lines = run(
        capsys, "evaluate", tmp_path / "old.npz", files["a"], "--exact", files["exact_a"], "--out", out
    )
    assert status == 0 and not lines
    notes = json.loads(out.read_text())["notes"]
    assert [note for note in notes if "dataset_sha256" in note] == [
        f"{tmp_path / 'old.npz'} records no dataset_sha256 (written by an older version): data not checked"
    ]


def test_evaluate_refuses_a_nan_metric(files, monkeypatch):
    import jspgfn.evaluate as ev

    monkeypatch.setattr(ev, "per_sample_log_likelihood", lambda *args: np.full(50, np.nan))
    with pytest.raises(JspgfnError, match="nll_expected came out NaN"):
        ev.evaluate(load_samples(files["samples_a"]), load_dataset(files["a"]), samples_source="s.npz")


# ------------------------------------------------------------ one error path


def test_os_errors_of_a_named_file_are_one_line(tmp_path, capsys, files, monkeypatch):
    import jspgfn.exact

    def denied(path, posterior):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(jspgfn.exact, "save_exact", denied)
    out = tmp_path / "exact.npz"
    line = refused(capsys, "exact", files["a"], "--out", out)
    assert line == f"jspgfn: error: {out}: Permission denied"


def test_other_exceptions_remain_tracebacks(tmp_path, files, monkeypatch):
    import jspgfn.exact

    def bug(path, posterior):
        raise OSError("not from the operating system")  # no errno: a bug, not an input error

    monkeypatch.setattr(jspgfn.exact, "save_exact", bug)
    with pytest.raises(OSError, match="not from the operating system"):
        cli.main(["exact", str(files["a"]), "--out", str(tmp_path / "exact.npz")])


def test_generate_removes_dataset_files_the_new_dataset_lacks(tmp_path, capsys):
    """An observational dataset written over an interventional one does not inherit its interventions;
    the user's own files in the folder stay."""
    out = tmp_path / "g"
    size = ["--d", "4", "--n", "20", "--n-test", "10", "--out", str(out)]
    assert cli.main(["generate", "--interventional-fraction", "0.5", *size]) == 0
    assert load_dataset(out).train_interventions is not None
    (out / "notes.txt").write_text("mine")
    assert cli.main(["generate", *size]) == 0
    assert load_dataset(out).train_interventions is None and load_dataset(out).test_interventions is None
    assert (out / "notes.txt").read_text() == "mine"
