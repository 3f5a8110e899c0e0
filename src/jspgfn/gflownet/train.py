"""Training runs: checks of the call, the jitted loop with its checkpoints, and loading a run to sample.

`train(data, model_name, preset, seed, out, family=...)` is what `jspgfn train` calls. The run folder
(config.json, provenance.json, checkpoint.npz, metrics.jsonl, train.lock) and resuming it are in
run_folder.py, the metrics log and the progress bar in train_log.py. Data, options and --out are
checked before anything is written. Checkpoints fall on scan boundaries, so a resumed run is
bitwise the same as an uninterrupted one on the same machine.
"""

import os
import time
from pathlib import Path

import jax
import numpy as np

from jspgfn import runlock
from jspgfn.errors import DataError, JspgfnError
from jspgfn.gflownet import run_folder
from jspgfn.gflownet.run_folder import CHECKPOINT, CONFIG, METRICS, SAMPLE_ADVICE, read_config
from jspgfn.gflownet.train_log import TrainingLog


class TrainingDiverged(JspgfnError, FloatingPointError):
    """The loss became NaN or infinite (a one-line CLI error; still a FloatingPointError)."""


def enable_compilation_cache():
    """Use JAX's persistent compilation cache when JAX_COMPILATION_CACHE_DIR is set."""
    path = os.environ.get("JAX_COMPILATION_CACHE_DIR")
    if path:
        jax.config.update("jax_compilation_cache_dir", path)
        jax.config.update(
            "jax_persistent_cache_min_compile_time_secs",
            float(os.environ.get("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")),
        )


def _data_array(data):
    """(float32 [N, d], interventions uint8 [N, d] or None, the d variable names or None) from a dataset
    path, a Dataset or an array; JspgfnError on bad input. Rows without any intervention give interventions
    None; an array has no names."""
    from jspgfn.dataset import Dataset, load_dataset

    if isinstance(data, (str, os.PathLike)):
        data = load_dataset(data)
    interventions = None
    if isinstance(data, Dataset) and data.train_interventions is not None and data.train_interventions.any():
        interventions = data.train_interventions.astype(np.uint8)
    x = data.train if isinstance(data, Dataset) else np.asarray(data, dtype=np.float64)
    source = _data_source(data)
    if x.ndim != 2 or x.shape[0] < 1 or x.shape[1] < 2:
        raise DataError(source, f"training data must be a table with >= 1 row and >= 2 variables, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise DataError(source, "training data contains NaN or infinite values")
    # Training runs in float32: a larger value would become inf there (and the loss NaN).
    limit = float(np.finfo(np.float32).max)
    largest = float(np.max(np.abs(x)))
    if largest > limit:
        raise DataError(
            source, f"training data has a value of magnitude {largest:.3g}, beyond float32 (at most {limit:.3g})"
        )
    names = list(data.names) if isinstance(data, Dataset) else None
    return x.astype(np.float32), interventions, names


def _data_source(data):
    """How messages name the training data: its train.csv or CSV file, else 'training data'."""
    source = getattr(data, "source", "")
    if not source:
        return "training data"
    path = Path(source)
    return str(path / "train.csv") if path.is_dir() else str(path)


def build_trainer(config, x, interventions=None):
    """Trainer for a config dict (as stored in config.json), data x [N, d] and its interventions."""
    from jspgfn.gflownet.core import Trainer
    from jspgfn.gflownet.presets import TrainConfig
    from jspgfn.models import get_graph_prior, get_model

    config = with_family(config)
    cfg = TrainConfig(**config["train_config"])
    model = get_model(config["model"], **config.get("model_kwargs", {}))
    prior = get_graph_prior(cfg.graph_prior, x.shape[1])
    return Trainer(cfg, model, prior, config["family"], x, interventions)


def resolve_model(model_name, family=None):
    """(likelihood, family) from a model name ('lingauss', or a combined one such as 'lingauss-full')
    and an optional family; the family defaults to 'diag'."""
    from jspgfn.models import FAMILIES, parse_model_name

    likelihood, named = parse_model_name(model_name)
    if family is not None and named is not None and family != named:
        raise JspgfnError(f"model '{model_name}' names the family '{named}', but the family '{family}' was asked for")
    family = family or named or "diag"
    if family not in FAMILIES:
        raise JspgfnError(f"unknown posterior family '{family}': choose one of {', '.join(FAMILIES)}")
    return likelihood, family


def with_family(config):
    """A run config with separate `model` (likelihood) and `family`, also for runs written before
    the two were split (whose `model` was a combined name such as 'lingauss-diag')."""
    if "family" in config:
        return config
    likelihood, family = resolve_model(config["model"])
    return {**config, "model": likelihood, "family": family}


def make_config(
    x,
    model_name,
    preset,
    seed,
    overrides,
    data_source="",
    interventions=None,
    family=None,
    model_kwargs=None,
    names=None,
):
    """The run's config.json dict; model_kwargs: settings of the likelihood (models.model_settings), every
    one recorded (the defaults filled in); names: the d variable names (None for an array), passed on to
    the samples' metadata as variable_names."""
    from jspgfn.gflownet.presets import get_preset
    from jspgfn.models import get_model

    cfg = get_preset(preset, **(overrides or {}))
    likelihood, family = resolve_model(model_name, family)
    if cfg.theta_elbo > 0 and family != "diag":
        raise JspgfnError(f"theta_elbo is for the diagonal family only (asked: family '{family}')")
    model = get_model(likelihood, **(model_kwargs or {}))
    return {
        "model": likelihood,
        "family": family,
        "model_kwargs": model.kwargs(),
        "preset": preset,
        "seed": int(seed),
        "overrides": dict(overrides or {}),
        "train_config": cfg.to_dict(),
        "num_variables": int(x.shape[1]),
        "num_rows": int(x.shape[0]),
        "data": str(data_source),
        "variable_names": names,
        "data_sha256": _data_hash(x, interventions),
        "interventional": interventions is not None,
    }


def _data_hash(x, interventions):
    """The dataset identity (jspgfn.dataset.data_fingerprint) of float32 x and its interventions."""
    from jspgfn.dataset import data_fingerprint

    return data_fingerprint(x, interventions)


def train(
    data,
    model_name="lingauss",
    preset="quick",
    seed=0,
    out="run",
    overrides=None,
    progress=True,
    max_iterations=None,
    time_limit=None,
    family=None,
    model_kwargs=None,
):
    """Train (or resume) a JSP-GFN run in folder `out`. Returns (trainer, state, info).

    model_name: the likelihood (lingauss, mlp-gauss, or a combined name such as lingauss-full);
    family: the posterior family of P(theta | G), diag (default) or full;
    model_kwargs: the likelihood's settings, e.g. {"obs_var": 0.1} (models.model_settings; default: the
      model's own, noise variance 0.01 and N(0, 1) weights), recorded in config.json;
    overrides: training options (presets.TrainConfig) over the preset's.

    Two options bound this invocation only (for time-limited cluster jobs); they do not change
    the result and are not part of the run's identity, so a resumed run may set them differently:
      max_iterations: train at most up to iteration N (an int >= 1) now, with a checkpoint there.
      time_limit: stop at the first chunk boundary (`iterations_per_dispatch`) after this many
        seconds (> 0) of wall time in this call, with a checkpoint there.
    Running the same call again without them continues to num_iterations.
    info: iteration, wall_seconds (over all invocations), finished (iteration == num_iterations)
    and stop_reason (None, "max iterations" or "time limit": why an unfinished run stopped).
    """
    call_start = time.time()
    _check_limits(max_iterations, time_limit)
    enable_compilation_cache()
    run = Path(out)
    run_folder.check_out(run)
    # Everything that can be refused is checked before the run folder is touched.
    x, interventions, names = _data_array(data)
    source = getattr(data, "source", "") or (data if isinstance(data, (str, os.PathLike)) else "")
    source = os.path.abspath(source) if source else ""
    config = make_config(x, model_name, preset, seed, overrides, source, interventions, family, model_kwargs, names)
    trainer = build_trainer(config, x, interventions)
    run_folder.create(run)
    with runlock.training(run):  # a second trainer of this folder is refused from here on
        state, info = run_folder.start_or_resume(run, trainer, config, seed)
        cfg = trainer.cfg
        target = cfg.num_iterations if max_iterations is None else min(int(max_iterations), cfg.num_iterations)
        deadline = None if time_limit is None else call_start + time_limit
        state, info, out_of_time = _train_until(trainer, state, info, run, target, deadline, progress)
    info = dict(info, finished=info["iteration"] >= cfg.num_iterations, stop_reason=None)
    if not info["finished"]:
        info["stop_reason"] = "time limit" if out_of_time else "max iterations"
    return trainer, state, info


def _check_limits(max_iterations, time_limit):
    """JspgfnError unless max_iterations is None or an int >= 1 and time_limit None or a number > 0."""
    if max_iterations is not None and (
        isinstance(max_iterations, bool) or not isinstance(max_iterations, (int, np.integer)) or max_iterations < 1
    ):
        raise JspgfnError(f"max_iterations must be a positive integer, got {max_iterations!r}")
    if time_limit is not None and not (
        isinstance(time_limit, (int, float, np.number)) and not isinstance(time_limit, bool) and time_limit > 0
    ):
        raise JspgfnError(f"time_limit must be a number of seconds > 0, got {time_limit!r}")


def _train_until(trainer, state, info, run, target, deadline, progress):
    """Train from info["iteration"] up to `target` (or the first chunk boundary after `deadline`, a
    time.time() value or None), logging metrics.jsonl and checkpointing. Returns (state, info, out_of_time)."""
    from jspgfn.gflownet import checkpoint

    cfg = trainer.cfg
    done = int(info["iteration"])
    chunk = cfg.iterations_per_dispatch
    out_of_time = False
    last_save = time.time()
    start_wall = time.time() - float(info["wall_seconds"])
    with TrainingLog(run / METRICS, cfg.num_iterations, done, progress) as log:
        while done < target:
            n = min(chunk - done % chunk, target - done)  # stay on multiples of `chunk`
            tick = time.time()
            state, metrics = trainer.run_chunk(state, n)
            loss = float(metrics["loss"])  # blocks until the chunk is done
            done += n
            rate = n / max(time.time() - tick, 1e-9)
            if not np.isfinite(loss):
                where = "in a new --out folder" if (run / CHECKPOINT).is_file() else "(the same --out is fine)"
                raise TrainingDiverged(
                    f"{run}: training diverged (non-finite loss at iteration {done}); look for extreme "
                    f"values in the data, or train with a smaller learning_rate {where}"
                )
            log.record(done, n, loss, metrics, rate)
            info = {"iteration": done, "wall_seconds": time.time() - start_wall}
            out_of_time = deadline is not None and done < target and time.time() >= deadline
            if done >= target or out_of_time or time.time() - last_save >= cfg.checkpoint_every_seconds:
                checkpoint.save(run / CHECKPOINT, state, info)
                last_save = time.time()
            if out_of_time:
                break
    if done >= target and not (run / CHECKPOINT).is_file():
        checkpoint.save(run / CHECKPOINT, state, info)
    return state, dict(info, iteration=done), out_of_time


def load_run(run_dir):
    """(trainer, state, info, config) of a run folder, for sampling (no data needed)."""
    from jspgfn.gflownet import checkpoint

    run = Path(run_dir)
    runlock.check_not_training(run)
    if not (run / CONFIG).is_file() or not (run / CHECKPOINT).is_file():
        raise JspgfnError(f"{run}: not a JSP-GFN run folder (needs {CONFIG} and {CHECKPOINT}; run `jspgfn train`)")
    config = with_family(read_config(run, SAMPLE_ADVICE))
    x = np.zeros((config["num_rows"], config["num_variables"]), np.float32)  # shapes only
    trainer = build_trainer(config, x, np.zeros_like(x, np.uint8) if config.get("interventional") else None)
    template = jax.eval_shape(lambda: trainer.init(config["seed"]))
    state, info = checkpoint.load(run / CHECKPOINT, template)
    if info["iteration"] < trainer.cfg.num_iterations:
        import warnings

        warnings.warn(
            f"{run}: training is unfinished ({info['iteration']} of {trainer.cfg.num_iterations} iterations)",
            stacklevel=2,
        )
    return trainer, state, info, config
