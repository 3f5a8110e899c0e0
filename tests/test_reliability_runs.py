"""Failures of `jspgfn train` / `jspgfn sample` and their files: one line `jspgfn: error: <file>: <problem>`
(exit 2) instead of a traceback, nothing left that blocks the corrected command, metrics.jsonl without
repeated iterations after a resume, and no leftover temporary files."""

import json
import os
import shutil
import time

import numpy as np
import pytest

from jspgfn import atomic
from jspgfn.cli import main as cli_main
from jspgfn.dataset import Dataset
from jspgfn.errors import DataError
from jspgfn.gflownet.train import train
from jspgfn.samples import load_samples
from test_gflownet_train import TINY  # the tiny training settings of the training tests

SETS = sum((["--set", f"{key}={value}"] for key, value in TINY.items()), [])


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "d3"
    assert cli_main(["generate", "--d", "3", "--n", "20", "--seed", "1", "--out", str(path)]) == 0
    return path


def train_args(data, out, *extra):
    return ["train", str(data), "--preset", "smoke", "--no-progress", *SETS, *extra, "--out", str(out)]


@pytest.fixture(scope="module")
def trained(data_dir, tmp_path_factory):
    """A finished run folder; tests work on copies of it."""
    run = tmp_path_factory.mktemp("trained") / "run"
    assert cli_main(train_args(data_dir, run)) == 0
    return run


@pytest.fixture
def run_copy(trained, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    return run


def one_line_error(capsys, status, *fragments):
    """The command failed with exit 2 and exactly one stderr line `jspgfn: error: ...` holding fragments."""
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, err
    assert len(lines) == 1 and lines[0].startswith("jspgfn: error: "), err
    assert "Traceback" not in err and "pickle" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def snapshot(folder):
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir())}


# ----------------------------------------------------------------- 1. data and options before any write


def test_data_beyond_float32_is_refused_before_anything_is_written(tmp_path, capsys):
    csv = tmp_path / "big.csv"
    csv.write_text("a,b\n1e300,1\n2,3\n")
    out = tmp_path / "run"
    one_line_error(capsys, cli_main(train_args(csv, out)), str(csv))
    assert not out.exists()
    # Arrays and Datasets that bypass the CSV reader: the float32 cast must not make inf of them.
    with pytest.raises(DataError, match=r"training data: .*beyond float32"):
        train(np.array([[1e300, 1.0], [2.0, 3.0]]), "lingauss", "smoke", 0, out, overrides=TINY, progress=False)
    dataset = Dataset(train=np.array([[1e39, 1.0], [2.0, 3.0]]), names=("a", "b"), source=str(csv))
    with pytest.raises(DataError, match=r"big\.csv: .*beyond float32"):
        train(dataset, "lingauss", "smoke", 0, out, overrides=TINY, progress=False)
    assert not out.exists()


@pytest.mark.parametrize(
    "option",
    ["batch_size=abc", "batch_size=-1", "learning_rate=nan", "learning_rate=.nan", "bogus=1", "num_envs=["],
)
def test_bad_training_options_are_refused_before_anything_is_written(data_dir, tmp_path, capsys, option):
    out = tmp_path / "run"
    line = one_line_error(capsys, cli_main(train_args(data_dir, out, "--set", option)))
    assert option.split("=")[0] in line
    assert not out.exists()


def test_failed_start_does_not_block_the_corrected_command(data_dir, tmp_path, capsys):
    out = tmp_path / "run"
    # A start that fails in training, before its first checkpoint: the loss diverges.
    one_line_error(capsys, cli_main(train_args(data_dir, out, "--set", "learning_rate=1.0e+30")), str(out), "diverged")
    assert (out / "config.json").is_file() and not (out / "checkpoint.npz").exists()
    # The corrected command (other options) is accepted, not "existing run has other training options".
    assert cli_main(train_args(data_dir, out, "--set", "learning_rate=1.0e-3")) == 0
    assert json.loads((out / "config.json").read_text())["train_config"]["learning_rate"] == 1e-3
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [row["iteration"] for row in rows] == [10, 20]
    # A config.json of another start without a checkpoint binds nothing either, even an unreadable one.
    for text in ('{"seed": 7, "train_config": {}}', "{"):
        other = tmp_path / f"other{len(text)}"
        other.mkdir()
        (other / "config.json").write_text(text)
        assert cli_main(train_args(data_dir, other, "--max-iterations", "10")) == 3
        assert json.loads((other / "config.json").read_text())["seed"] == 0
    capsys.readouterr()
    # With a checkpoint, changed options are still refused.
    one_line_error(capsys, cli_main(train_args(data_dir, out, "--set", "learning_rate=0.01")), "other training options")


# ----------------------------------------------------------------- 2. corrupt checkpoint, config, .npz


def _corrupt(path, how):
    data = path.read_bytes()
    path.write_bytes({"empty": b"", "truncated": data[: len(data) // 2], "text": b"not a checkpoint\n" * 20}[how])


@pytest.mark.parametrize("how", ["empty", "truncated", "text"])
def test_corrupt_checkpoint_one_line_for_sample_and_resume(data_dir, run_copy, tmp_path, capsys, how):
    checkpoint = run_copy / "checkpoint.npz"
    _corrupt(checkpoint, how)
    before = snapshot(run_copy)
    samples = tmp_path / "s.npz"
    line = one_line_error(
        capsys,
        cli_main(["sample", str(run_copy), "--num", "4", "--out", str(samples)]),
        f"{checkpoint}: corrupt checkpoint (",
        "delete it to restart training from the beginning",
    )
    assert "allow_pickle" not in line and "No data left" not in line
    assert not samples.exists()
    one_line_error(capsys, cli_main(train_args(data_dir, run_copy)), f"{checkpoint}: corrupt checkpoint (")
    assert snapshot(run_copy) == before
    if how == "truncated":  # doing what the message says works
        checkpoint.unlink()
        assert cli_main(train_args(data_dir, run_copy)) == 0
        assert cli_main(["sample", str(run_copy), "--num", "4", "--out", str(samples)]) == 0


@pytest.mark.parametrize("text", ['{"model": ', "[1, 2]", '{"model": "lingauss"}', "\udcff"])
def test_corrupt_config_one_line_for_sample_and_resume(data_dir, run_copy, tmp_path, capsys, text):
    config = run_copy / "config.json"
    config.write_text(text, errors="surrogateescape")
    before = snapshot(run_copy)
    for argv in (["sample", str(run_copy), "--out", str(tmp_path / "s.npz")], train_args(data_dir, run_copy)):
        one_line_error(capsys, cli_main(argv), f"{config}: not a valid run configuration (", "delete the run folder")
    assert snapshot(run_copy) == before and not (tmp_path / "s.npz").exists()


@pytest.mark.parametrize("model", ["mlp-categorical", "mlp-zinormal"])
def test_config_naming_a_model_without_its_settings_is_one_line(run_copy, tmp_path, capsys, model):
    """config.json edited to name another model, whose constructor takes none of the Gaussian settings."""
    config = json.loads((run_copy / "config.json").read_text())
    (run_copy / "config.json").write_text(json.dumps({**config, "model": model}))
    status = cli_main(["sample", str(run_copy), "--num", "2", "--out", str(tmp_path / "s.npz")])
    one_line_error(capsys, status, str(run_copy / "config.json"), model, "obs_var")
    assert not (tmp_path / "s.npz").exists()


@pytest.mark.parametrize("how", ["empty", "truncated", "text"])
def test_corrupt_samples_file_named_without_numpy_internals(data_dir, run_copy, tmp_path, capsys, how):
    samples = tmp_path / "s.npz"
    assert cli_main(["sample", str(run_copy), "--num", "4", "--out", str(samples)]) == 0
    _corrupt(samples, how)
    with pytest.raises(DataError) as info:
        load_samples(samples)
    assert info.value.path == str(samples)
    assert "corrupt" in info.value.problem and "pickle" not in info.value.problem
    metrics = tmp_path / "metrics.json"
    one_line_error(capsys, cli_main(["evaluate", str(samples), str(data_dir), "--out", str(metrics)]), str(samples))
    assert not metrics.exists()


# ----------------------------------------------------------------- 3. metrics.jsonl after a resume


def test_metrics_iterations_do_not_repeat_after_a_resume(data_dir, tmp_path, capsys):
    run = tmp_path / "run"
    assert cli_main(train_args(data_dir, run, "--max-iterations", "10")) == 3
    # A kill after the chunk to iteration 20 was logged but before its checkpoint, in the middle of a line.
    with open(run / "metrics.jsonl", "a") as file:
        file.write(json.dumps({"iteration": 20, "loss": 1.0, "abs_delta": 1.0, "iterations_per_second": 1.0}) + "\n")
        file.write('{"iteration": 3')
    assert cli_main(train_args(data_dir, run)) == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    iterations = [row["iteration"] for row in rows]
    assert iterations == [10, 20] and rows[1]["loss"] != 1.0
    assert cli_main(train_args(data_dir, run)) == 0  # a finished run: nothing is added or dropped
    assert [json.loads(line)["iteration"] for line in (run / "metrics.jsonl").read_text().splitlines()] == [10, 20]


# ----------------------------------------------------------------- 4. leftover temporary files


def test_stale_temporary_files_are_removed_by_the_next_write(tmp_path):
    target = tmp_path / "m.json"
    stale, fresh = tmp_path / ".m.json.abcd1234.tmp.json", tmp_path / ".m.json.efgh5678.tmp.json"
    others = [tmp_path / ".m.json.x.abcd1234.tmp.json", tmp_path / ".mm.json.abcd1234.tmp.json", tmp_path / "keep"]
    for path in [stale, fresh, *others]:
        path.write_text("{")
    old = time.time() - 2 * atomic.STALE_SECONDS
    for path in [stale, *others]:
        os.utime(path, (old, old))
    atomic.write_json(target, {"a": 1})
    assert json.loads(target.read_text()) == {"a": 1}
    assert not stale.exists()
    assert fresh.exists()  # may be a concurrent writer's file
    assert all(path.exists() for path in others)  # other targets' files
    # Not a bare folder as output.
    with pytest.raises(DataError, match="is a folder"):
        atomic.write_text(tmp_path, "x")


@pytest.mark.parametrize("mask, file_mode, folder_mode", [(0o022, 0o644, 0o755), (0o077, 0o600, 0o700)])
def test_finished_files_and_folders_follow_the_umask(tmp_path, mask, file_mode, folder_mode):
    """mkstemp / mkdtemp make private temporaries (0600 / 0700); what is renamed into place gets the mode a
    plain open() or mkdir() would give under the umask, so results on a shared machine stay readable."""
    previous = os.umask(mask)
    try:
        atomic.write_text(tmp_path / "a.txt", "x")
        with atomic.atomic_path(tmp_path / "b.npz") as tmp:
            np.savez(tmp, x=np.zeros(2))
        assert cli_main(["generate", "--d", "3", "--n", "5", "--seed", "0", "--out", str(tmp_path / "data")]) == 0
    finally:
        os.umask(previous)
    assert atomic.umask() == previous
    for path in [tmp_path / "a.txt", tmp_path / "b.npz", *sorted((tmp_path / "data").iterdir())]:
        assert path.stat().st_mode & 0o777 == file_mode, path
    assert (tmp_path / "data").stat().st_mode & 0o777 == folder_mode


def test_stale_checkpoint_temporary_is_removed_on_resume(data_dir, tmp_path):
    run = tmp_path / "run"
    assert cli_main(train_args(data_dir, run, "--max-iterations", "10")) == 3
    leftover = run / ".checkpoint.npz.k1ll3d_0.tmp.npz"  # a kill in the middle of np.savez
    leftover.write_bytes(b"PK\x03\x04")
    old = time.time() - 3600
    os.utime(leftover, (old, old))
    assert cli_main(train_args(data_dir, run)) == 0
    assert not leftover.exists()
    assert sorted(path.name for path in run.iterdir()) == [
        "checkpoint.npz",
        "config.json",
        "metrics.jsonl",
        "provenance.json",
        "train.lock",
    ]


# ----------------------------------------------------------------- 4b. one trainer per run folder


def hold_lock_in_a_subprocess(run):
    """A process that holds the run folder's lock, as a `jspgfn train` does, until it is killed."""
    import subprocess
    import sys

    code = (
        "import sys, time; from jspgfn import runlock\n"
        "with runlock.training(sys.argv[1]):\n    print('held', flush=True); time.sleep(600)"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    holder = subprocess.Popen([sys.executable, "-c", code, str(run)], stdout=subprocess.PIPE, text=True, env=env)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_trainer_or_a_sampler_is_refused_while_one_trains(data_dir, run_copy, tmp_path, capsys):
    before = snapshot(run_copy)
    holder = hold_lock_in_a_subprocess(run_copy)
    try:
        one_line_error(capsys, cli_main(train_args(data_dir, run_copy)), str(run_copy), f"PID {holder.pid}", "train")
        samples = tmp_path / "s.npz"
        line = one_line_error(capsys, cli_main(["sample", str(run_copy), "--num", "2", "--out", str(samples)]))
        assert f"PID {holder.pid}" in line and "still training" in line
        assert not samples.exists()
        assert {k: v for k, v in snapshot(run_copy).items() if k != "train.lock"} == {
            k: v for k, v in before.items() if k != "train.lock"
        }
    finally:
        holder.kill()  # kill -9: the operating system releases the lock
        holder.wait()
    assert cli_main(train_args(data_dir, run_copy)) == 0
    assert cli_main(["sample", str(run_copy), "--num", "2", "--out", str(tmp_path / "s.npz")]) == 0


# ----------------------------------------------------------------- 5. --out of the wrong kind


def test_out_of_the_wrong_kind(data_dir, run_copy, tmp_path, capsys):
    file = tmp_path / "a-file"
    file.write_text("precious\n")
    one_line_error(capsys, cli_main(train_args(data_dir, file)), f"{file}: ", "not a folder")
    assert file.read_text() == "precious\n"
    inside = file / "run"  # a run folder below a file
    one_line_error(capsys, cli_main(train_args(data_dir, inside)), str(inside))
    folder = tmp_path / "folder"
    folder.mkdir()
    one_line_error(capsys, cli_main(["sample", str(run_copy), "--out", str(folder)]), f"{folder}: ", "is a folder")
    assert list(folder.iterdir()) == []
