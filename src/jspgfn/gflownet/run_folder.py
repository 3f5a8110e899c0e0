"""The run folder of `jspgfn train`: checks of --out, config.json, starting afresh or resuming.

The run folder holds
  config.json       everything needed to rebuild the run (model, seed, preset, options, data)
  provenance.json   package versions, host, time
  checkpoint.npz    TrainState (params, optimiser state, environments, replay buffer,
                    RNG key, iteration) + info (iteration, wall seconds); written
                    atomically every `checkpoint_every_seconds` and at the end
  train_data.npz    the training data (x, interventions), only where the network reads it when the run
                    samples (stop_score_offset, last_step_closed_form: network_reads_data)
  metrics.jsonl     one line per dispatch (iteration, loss, mean |delta| and delta, penalty / neg_elbo terms,
                    iterations/s)
  train.lock        held by the `jspgfn train` working on the folder (runlock.py): a second trainer,
                    or a sampler, is refused with its PID while it runs
Running the same command again resumes from checkpoint.npz (a finished run is left
as it is); lines of metrics.jsonl past the checkpoint (logged before a kill) are dropped
then, so no iteration is logged twice. A folder without checkpoint.npz never trained:
any command (other options too) starts it afresh.
"""

import dataclasses
import json
import zipfile
from pathlib import Path

import jax
import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError, JspgfnError

CONFIG = "config.json"
CHECKPOINT = "checkpoint.npz"
TRAIN_DATA = "train_data.npz"
METRICS = "metrics.jsonl"

TRAIN_ADVICE = "delete the run folder or use a new --out"
SAMPLE_ADVICE = "delete the run folder and train it again"


def check_out(run):
    """DataError before anything is written when `run` (a Path) cannot become the run folder."""
    if run.exists() and not run.is_dir():
        raise DataError(run, "exists and is not a folder; --out names the run folder (give a new path)")
    blocking = next((p for p in run.parents if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise DataError(run, f"cannot create the run folder: {blocking} is a file")


def create(run):
    """Make the run folder `run` (a Path) and its parents; DataError when the system refuses."""
    try:
        run.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(run, f"cannot create the run folder ({exc.strerror or exc})") from None


def start_or_resume(run, trainer, config, seed, data=None, interventions=None):
    """(state, info) of the run in folder `run`: from checkpoint.npz when there is one (config must be
    the same run's), else trainer.init(seed) with info iteration 0. data float [N, d] (and interventions):
    the run's, where it is not the trainer's own (a run of a group). Writes config.json (and
    provenance.json for a new run; train_data.npz where the network reads it) and drops the lines of
    metrics.jsonl past the checkpoint. Call it holding the folder's training lock (runlock.training)."""
    from jspgfn import provenance
    from jspgfn.gflownet import checkpoint

    resume = (run / CHECKPOINT).is_file()
    if resume and (run / CONFIG).exists():
        check_same_run(read_config(run, TRAIN_ADVICE), config, run)
    # Without a checkpoint an earlier start never trained (it failed or was stopped before its
    # first checkpoint): its config.json binds nothing and is replaced by this call's.
    info = {"iteration": 0, "wall_seconds": 0.0}
    if resume:
        template = jax.eval_shape(lambda: trainer.init(seed))
        state, info = checkpoint.load(run / CHECKPOINT, template)
    else:
        state = trainer.init(seed, data, interventions)
    if network_reads_data(trainer.cfg.to_dict()):
        if data is None:
            data, interventions = trainer.data, trainer.interventions
        write_train_data(run / TRAIN_DATA, data, interventions)
    atomic.write_json(run / CONFIG, config)
    if not resume:
        atomic.write_json(run / "provenance.json", provenance.provenance())
    trim_metrics(run / METRICS, int(info["iteration"]))
    return state, info


def network_reads_data(train_config):
    """Whether the network of a run with train_config (TrainConfig.to_dict()) reads the training data, when it
    trains and when it samples: with stop_score_offset (its stop logit) or last_step_closed_form (its logits one
    edge short of the complete DAG)."""
    return train_config.get("stop_score_offset", 0) > 0 or bool(train_config.get("last_step_closed_form", False))


def write_train_data(path, x, interventions=None):
    """Write the training data float32 [N, d] (and its interventions uint8 [N, d]) atomically to `path`."""
    arrays = {"x": np.asarray(x, np.float32)}
    if interventions is not None:
        arrays["interventions"] = np.asarray(interventions, np.uint8)
    with atomic.atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def read_train_data(run, config):
    """(x float32 [N, d], interventions uint8 [N, d] or None) from the run folder's train_data.npz; DataError
    naming it when it is missing or unreadable or is not the data of config.json (its data_sha256)."""
    from jspgfn.dataset import data_fingerprint

    path = Path(run) / TRAIN_DATA
    why = "the run's network reads its training data (stop_score_offset or last_step_closed_form)"
    if not path.is_file():
        raise DataError(path, f"missing: {why}; {SAMPLE_ADVICE}")
    try:
        with np.load(path) as arrays:
            x = np.asarray(arrays["x"], np.float32)
            interventions = np.asarray(arrays["interventions"], np.uint8) if "interventions" in arrays else None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(path, f"not readable training data ({exc}); {SAMPLE_ADVICE}") from None
    if data_fingerprint(x, interventions) != config.get("data_sha256"):
        raise DataError(path, f"is not the data this run trained on (its data_sha256 differs); {SAMPLE_ADVICE}")
    return x, interventions


# Options that do not change the result: a resumed run may set them differently.
FREE_OPTIONS = ("checkpoint_every_seconds",)


def check_same_run(old, new, run_dir):
    """JspgfnError naming run_dir when config `new` is not the run of `old` (its config.json) that it resumes."""
    from jspgfn.gflownet.presets import TrainConfig
    from jspgfn.gflownet.train import with_family
    from jspgfn.models import get_model

    old = with_family(old)
    old = {**old, "model_kwargs": get_model(old["model"], **old.get("model_kwargs", {})).kwargs()}
    for key in (
        "model",
        "family",
        "model_kwargs",
        "seed",
        "preset",
        "train_config",
        "num_variables",
        "num_rows",
        "data_sha256",
    ):
        a, b = old.get(key), new.get(key)
        if key == "train_config":
            # an option the old run's version did not have yet ran as its default (options start off)
            a = {**TrainConfig().to_dict(), **(a or {})}
            a = {k: v for k, v in a.items() if k not in FREE_OPTIONS}
            b = {k: v for k, v in (b or {}).items() if k not in FREE_OPTIONS}
            diff = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
            if diff:
                changes = ", ".join(f"{k}: {a.get(k)!r} -> {b.get(k)!r}" for k in diff)
                raise JspgfnError(
                    f"{run_dir}: existing run has other training options ({changes}); use a new --out folder"
                )
            continue
        if a != b:
            if key == "num_variables":
                raise JspgfnError(
                    f"{run_dir}: run was trained on d={a} variables, the data has d={b}; use a new --out folder"
                )
            what = {"num_rows": "data", "data_sha256": "data", "model_kwargs": "model settings"}.get(key, key)
            raise JspgfnError(
                f"{run_dir}: existing run differs in {what} ({str(a)[:40]!r} vs "
                f"{str(b)[:40]!r}); use a new --out folder"
            )


_REQUIRED_CONFIG = {
    "model": str,
    "seed": int,
    "preset": str,
    "train_config": dict,
    "num_variables": int,
    "num_rows": int,
}


def read_config(run, advice=TRAIN_ADVICE):
    """The config dict of run folder `run`; DataError naming config.json when it is not one (the model's
    settings included: they must be those the named model takes)."""
    from jspgfn.gflownet.presets import TrainConfig
    from jspgfn.models import get_model

    path = Path(run) / CONFIG

    def invalid(problem):
        return DataError(path, f"not a valid run configuration ({problem}); {advice}")

    try:
        config = json.loads(path.read_text())
    except UnicodeDecodeError:
        raise invalid("not a text file") from None
    except json.JSONDecodeError as exc:
        raise invalid(f"invalid JSON: {exc}") from None
    except OSError as exc:
        raise DataError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not isinstance(config, dict):
        raise invalid(f"a JSON {type(config).__name__}, not an object")
    for key, kind in _REQUIRED_CONFIG.items():
        if key not in config:
            raise invalid(f"no {key!r}")
        if not isinstance(config[key], kind) or isinstance(config[key], bool):
            raise invalid(f"{key!r} is not a{'n' if kind is int else ''} {kind.__name__}")
    known = {field.name for field in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(config["train_config"]) - known)
    if unknown:
        raise invalid(f"unknown training option(s) {', '.join(unknown)}")
    if not isinstance(config.get("model_kwargs", {}), dict):
        raise invalid("'model_kwargs' is not an object")
    try:
        get_model(config["model"], **config.get("model_kwargs", {}))
    except JspgfnError as exc:
        raise invalid(str(exc)) from None
    return config


def trim_metrics(path, iteration):
    """Keep the lines of metrics.jsonl up to `iteration` (where training resumes), so that no
    iteration appears twice; a line cut short by a kill goes too. Rewritten atomically."""
    if not path.is_file():
        return
    text = path.read_text(errors="replace")
    kept = []
    for line in text.splitlines(keepends=True):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        step = row.get("iteration") if isinstance(row, dict) else None
        if line.endswith("\n") and isinstance(step, int) and step <= iteration:
            kept.append(line)
    if "".join(kept) != text:
        atomic.write_text(path, "".join(kept))
