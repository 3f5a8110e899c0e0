"""Training runs: checks of the call, the jitted loop with its checkpoints, and loading a run to sample.

`train(data, model_name, preset, seed, out, family=...)` trains one run; `train_group` trains several of
the same shape in one process with one compiled step (`jspgfn train DATA... --out RUN...`). The run folder
(config.json, provenance.json, checkpoint.npz, metrics.jsonl, train.lock) and resuming it are in
run_folder.py, the metrics log and the progress bar in train_log.py. Data, options and --out are
checked before anything is written. Checkpoints fall on scan boundaries, so a resumed run is
bitwise the same as an uninterrupted one on the same machine.
"""

import contextlib
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


def _source_of(data):
    """Where the training data came from (a path, or a Dataset's source): the path as given, or ''."""
    return data if isinstance(data, (str, os.PathLike)) else getattr(data, "source", "")


def _data_source(data):
    """How messages name the training data (a path or a Dataset): its train.csv or CSV file, else 'training data'."""
    source = _source_of(data)
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
    recipe=None,
):
    """The run's config.json dict; model_kwargs: settings of the likelihood (models.model_settings), every
    one recorded (the defaults filled in); names: the d variable names (None for an array), passed on to
    the samples' metadata as variable_names; recipe: a name of recipes.RECIPES or None, its options for
    d = x.shape[1] under `overrides` (recorded as "recipe" with the options it set, "recipe_options").
    preset: a training preset's name, or None: "quick", with the recipe's budget (recipes.recipe_budget) as
    its num_iterations where the recipe has one and `overrides` do not set it."""
    from jspgfn.gflownet.presets import DEFAULT_PRESET, get_preset
    from jspgfn.gflownet.recipes import recipe_budget, recipe_options
    from jspgfn.models import get_model

    likelihood, family = resolve_model(model_name, family)
    from_recipe = {} if recipe is None else recipe_options(recipe, int(x.shape[1]), likelihood)
    if preset is None:
        preset = DEFAULT_PRESET
        if (budget := recipe_budget(recipe)) is not None:
            from_recipe = {**from_recipe, "num_iterations": budget}
    cfg = get_preset(preset, **{**from_recipe, **(overrides or {})})
    model = get_model(likelihood, **(model_kwargs or {}))
    recorded = {} if recipe is None else {"recipe": recipe, "recipe_options": from_recipe}
    return {
        "model": likelihood,
        "family": family,
        "model_kwargs": model.kwargs(),
        "preset": preset,
        "seed": int(seed),
        **recorded,
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
    preset=None,
    seed=0,
    out="run",
    overrides=None,
    progress=True,
    max_iterations=None,
    time_limit=None,
    family=None,
    model_kwargs=None,
    recipe=None,
):
    """Train (or resume) a JSP-GFN run in folder `out`. Returns (trainer, state, info).

    model_name: the likelihood (lingauss, mlp-gauss, or a combined name such as lingauss-full);
    family: the posterior family of P(theta | G), diag (default) or full;
    model_kwargs: the likelihood's settings, e.g. {"obs_var": 0.1} (models.model_settings; default: the
      model's own, noise variance 0.01 and N(0, 1) weights), recorded in config.json;
    preset: a training preset (presets.PRESETS: smoke, quick, paper), or None: quick, with the recipe's budget
      where it has one (recipes.recipe_budget: "lingauss" 15,000 iterations);
    overrides: training options (presets.TrainConfig) over the preset's;
    recipe: None (the paper's method), or a recipe's name (recipes.RECIPES, e.g. "lingauss", beyond the
      paper): its options for the data's d over the preset's, `overrides` over both.

    Two options bound this invocation only (for time-limited cluster jobs); they do not change
    the result and are not part of the run's identity, so a resumed run may set them differently:
      max_iterations: train at most up to iteration N (an int >= 1) now, with a checkpoint there.
      time_limit: stop at the first chunk boundary (`iterations_per_dispatch`) after this many
        seconds (> 0) of wall time in this call, with a checkpoint there.
    Running the same call again without them continues to num_iterations.
    info: iteration, wall_seconds (over all invocations), finished (iteration == num_iterations)
    and stop_reason (None, "max iterations" or "time limit": why an unfinished run stopped).
    This is train_group with one run.
    """
    trainer, states, infos = train_group(
        [data],
        model_name,
        preset,
        [seed],
        [out],
        overrides=overrides,
        progress=progress,
        max_iterations=max_iterations,
        time_limit=time_limit,
        family=family,
        model_kwargs=model_kwargs,
        recipe=recipe,
    )
    return trainer, states[0], infos[0]


def train_group(
    datasets,
    model_name="lingauss",
    preset=None,
    seeds=(0,),
    outs=("run",),
    overrides=None,
    progress=True,
    max_iterations=None,
    time_limit=None,
    family=None,
    model_kwargs=None,
    recipe=None,
):
    """Train (or resume) K runs of the same shape in one process: run i on datasets[i] with seeds[i]
    (or one seed for all) in folder outs[i]. Returns (trainer, [state] * K, [info] * K).

    The options are train's, the same for every run. The datasets must have the same number of
    variables d and of rows N (and all or none be interventional); K > 1 runs share one compiled
    step (Trainer.run_group_chunk, vmapped over runs), K = 1 is the single run (Trainer.run_chunk).
    Each run folder is written as by a run on its own (config.json, checkpoint.npz, metrics.jsonl)
    and can be resumed on its own, or in a group again. Runs at different iterations (one resumed on
    its own, say) are trained together, each up to the target. trainer: the trainer of run 0 (every
    run's network and options; sampling needs only those).
    """
    call_start = time.time()
    _check_limits(max_iterations, time_limit)
    enable_compilation_cache()
    runs, seeds = _check_group(datasets, seeds, outs)
    # Everything that can be refused is checked before a run folder is touched.
    arrays = [_data_array(data) for data in datasets]
    _check_same_shape(datasets, arrays)
    configs = []
    for data, (x, interventions, names), seed in zip(datasets, arrays, seeds):
        source = _source_of(data)
        source = os.path.abspath(source) if source else ""
        configs.append(
            make_config(
                x, model_name, preset, seed, overrides, source, interventions, family, model_kwargs, names, recipe
            )
        )
    _warn_budget(recipe, configs[0])
    trainer = build_trainer(configs[0], *arrays[0][:2])
    for run in runs:
        run_folder.create(run)
    with contextlib.ExitStack() as locks:
        for run in runs:  # a second trainer of any of these folders is refused from here on
            locks.enter_context(runlock.training(run))
        started = [
            run_folder.start_or_resume(run, trainer, c, s, *a[:2]) for run, c, s, a in zip(runs, configs, seeds, arrays)
        ]
        group = RunGroup(trainer, [state for state, _ in started], [a[0] for a in arrays], [a[1] for a in arrays])
        cfg = trainer.cfg
        target = cfg.num_iterations if max_iterations is None else min(int(max_iterations), cfg.num_iterations)
        deadline = None if time_limit is None else call_start + time_limit
        infos, out_of_time = _train_until(group, [info for _, info in started], runs, target, deadline, progress)
    states = [group.state(i) for i in range(len(runs))]
    for i, info in enumerate(infos):
        infos[i] = dict(info, finished=info["iteration"] >= cfg.num_iterations, stop_reason=None)
        if not infos[i]["finished"]:
            infos[i]["stop_reason"] = "time limit" if out_of_time else "max iterations"
    return trainer, states, infos


def _warn_budget(recipe, config):
    """OptionWarning when a recipe's options run with fewer iterations than they were measured with."""
    from jspgfn.gflownet.recipes import budget_note

    note = budget_note(recipe, config["num_variables"], config["train_config"]["num_iterations"])
    if note is not None:
        import warnings

        from jspgfn.errors import OptionWarning

        warnings.warn(OptionWarning(note), stacklevel=3)


def _check_group(datasets, seeds, outs):
    """(run folders as Paths, one seed per run) of a group call; JspgfnError when the counts of datasets,
    seeds and run folders do not match or a folder is named twice; DataError when one cannot be a run folder."""
    datasets, outs = list(datasets), list(outs)
    seeds = [seeds] if isinstance(seeds, (int, np.integer)) else list(seeds)
    if not datasets:
        raise JspgfnError("no training data given")
    if len(outs) != len(datasets):
        raise JspgfnError(
            f"{len(datasets)} datasets but {len(outs)} run folders (--out): give one run folder per dataset"
        )
    if len(seeds) == 1:
        seeds = seeds * len(datasets)
    if len(seeds) != len(datasets):
        raise JspgfnError(f"{len(datasets)} datasets but {len(seeds)} seeds: give one seed, or one per dataset")
    for seed in seeds:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise JspgfnError(f"a seed must be an integer, got {seed!r}")
    runs = [Path(out) for out in outs]
    seen = {}
    for run in runs:
        key = os.path.abspath(run)
        if key in seen:
            raise JspgfnError(f"{run}: run folder named twice in --out (also as {seen[key]}); one folder per dataset")
        seen[key] = run
        run_folder.check_out(run)
    return runs, [int(seed) for seed in seeds]


def _check_same_shape(datasets, arrays):
    """JspgfnError naming the datasets when the runs of a group cannot share one compiled step: another
    number of variables d or of rows N than the first dataset, or interventions in some but not all."""
    first = _data_source(datasets[0])
    x0, i0, _ = arrays[0]
    for data, (x, interventions, _) in zip(datasets[1:], arrays[1:]):
        other = _data_source(data)
        if x.shape[1] != x0.shape[1]:
            raise JspgfnError(
                f"{other} has d={x.shape[1]} variables but {first} has d={x0.shape[1]}: the datasets trained "
                "together must have the same number of variables (train the others in another command)"
            )
        if x.shape[0] != x0.shape[0]:
            raise JspgfnError(
                f"{other} has {x.shape[0]} training rows but {first} has {x0.shape[0]}: the datasets trained "
                "together must have the same number of rows (train the others in another command)"
            )
        if (interventions is None) != (i0 is None):
            kinds = {True: "observational", False: "interventional"}
            raise JspgfnError(
                f"{other} is {kinds[interventions is None]} but {first} is {kinds[i0 is None]}: the datasets "
                "trained together must be all observational or all interventional"
            )


class RunGroup:
    """The TrainState of the K runs trained together and the compiled step that advances them.

    K = 1: the state itself, advanced by Trainer.run_chunk (its data a constant of the step, as for a
    run on its own). K > 1: the states stacked on a leading run axis, advanced by
    Trainer.run_group_chunk with the data float32 [K, N, d] (and interventions [K, N, d]) as arguments.
    """

    def __init__(self, trainer, states, xs, interventions):
        self.trainer, self.size = trainer, len(states)
        if self.size == 1:
            self.states = states[0]
            return
        import jax.numpy as jnp

        self.states = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *states)
        self.data = jnp.asarray(np.stack(xs), jnp.float32)
        self.interventions = None if interventions[0] is None else jnp.asarray(np.stack(interventions), jnp.float32)

    def advance(self, num, active):
        """num iterations of the runs with active[i] (the others keep their state): a dict of floats (the
        metrics averaged over the chunk) per run; blocks until the chunk is done (one host transfer)."""
        if self.size == 1:
            self.states, metrics = self.trainer.run_chunk(self.states, num)
            return [{k: float(v) for k, v in jax.device_get(metrics).items()}]
        self.states, metrics = self.trainer.run_group_chunk(
            self.states, np.asarray(active, bool), self.data, self.interventions, num
        )
        metrics = jax.device_get(metrics)
        return [{k: float(v[i]) for k, v in metrics.items()} for i in range(self.size)]

    def state(self, i):
        """The TrainState of run i (unbatched)."""
        if self.size == 1:
            return self.states
        return jax.tree_util.tree_map(lambda leaf: leaf[i], self.states)


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


def _train_until(group, infos, runs, target, deadline, progress):
    """Train every run of `group` from its infos[i]["iteration"] up to `target` (or the first chunk boundary
    after `deadline`, a time.time() value or None), logging each run's metrics.jsonl and checkpointing it.
    A dispatch advances the runs still short of the target by the same number of iterations, ending on the
    next multiple of `iterations_per_dispatch` (or the target) of each, as a run on its own does when all
    are at the same iteration. Returns (infos, out_of_time)."""
    from jspgfn.gflownet import checkpoint

    cfg = group.trainer.cfg
    done = [int(info["iteration"]) for info in infos]
    infos = [dict(info, iteration=step) for info, step in zip(infos, done)]
    chunk = cfg.iterations_per_dispatch
    out_of_time = False
    last_save = time.time()
    start_wall = [time.time() - float(info["wall_seconds"]) for info in infos]
    desc = "jspgfn train" if len(runs) == 1 else f"jspgfn train ({len(runs)} runs)"
    with contextlib.ExitStack() as stack:
        logs = [
            stack.enter_context(TrainingLog(run / METRICS, cfg.num_iterations, step, progress and i == 0, desc))
            for i, (run, step) in enumerate(zip(runs, done))
        ]
        while any(step < target for step in done):
            active = [step < target for step in done]
            n = min(min(chunk - step % chunk, target - step) for step, on in zip(done, active) if on)
            tick = time.time()
            metrics = group.advance(n, active)
            rate = n / max(time.time() - tick, 1e-9)
            moved = [i for i, on in enumerate(active) if on]
            for i in moved:
                done[i] += n
            diverged = [i for i in moved if not np.isfinite(metrics[i]["loss"])]
            if diverged:
                i = diverged[0]
                where = "in a new --out folder" if (runs[i] / CHECKPOINT).is_file() else "(the same --out is fine)"
                raise TrainingDiverged(
                    f"{runs[i]}: training diverged (non-finite loss at iteration {done[i]}); look for extreme "
                    f"values in the data, or train with a smaller learning_rate {where}"
                )
            for i in moved:
                logs[i].record(done[i], n, metrics[i]["loss"], metrics[i], rate)
                infos[i] = {"iteration": done[i], "wall_seconds": time.time() - start_wall[i]}
            out_of_time = deadline is not None and any(step < target for step in done) and time.time() >= deadline
            periodic = time.time() - last_save >= cfg.checkpoint_every_seconds
            saved = False
            for i in moved:
                if done[i] >= target or out_of_time or periodic:
                    checkpoint.save(runs[i] / CHECKPOINT, group.state(i), infos[i])
                    saved = True
            if saved:
                last_save = time.time()
            if out_of_time:
                break
    for i, run in enumerate(runs):
        if done[i] >= target and not (run / CHECKPOINT).is_file():
            checkpoint.save(run / CHECKPOINT, group.state(i), infos[i])
    return infos, out_of_time


def load_run(run_dir):
    """(trainer, state, info, config) of a run folder, for sampling: the trainer holds zeros of the data's shape
    (sampling reads no data), or where the network reads it (run_folder.network_reads_data) the training data of
    train_data.npz."""
    from jspgfn.gflownet import checkpoint

    run = Path(run_dir)
    runlock.check_not_training(run)
    if not (run / CONFIG).is_file() or not (run / CHECKPOINT).is_file():
        raise JspgfnError(f"{run}: not a JSP-GFN run folder (needs {CONFIG} and {CHECKPOINT}; run `jspgfn train`)")
    config = with_family(read_config(run, SAMPLE_ADVICE))
    if run_folder.network_reads_data(config["train_config"]):
        x, interventions = run_folder.read_train_data(run, config)
    else:
        x = np.zeros((config["num_rows"], config["num_variables"]), np.float32)  # shapes only
        interventions = np.zeros_like(x, np.uint8) if config.get("interventional") else None
    trainer = build_trainer(config, x, interventions)
    template = jax.eval_shape(lambda: trainer.init(config["seed"]))
    state, info = checkpoint.load(run / CHECKPOINT, template)
    if info["iteration"] < trainer.cfg.num_iterations:
        import warnings

        warnings.warn(
            f"{run}: training is unfinished ({info['iteration']} of {trainer.cfg.num_iterations} iterations)",
            stacklevel=2,
        )
    return trainer, state, info, config
