"""The Python API, in the manner of scikit-learn and causal-learn estimators (exported by `jspgfn`):

    run = jspgfn.fit(data, model="lingauss", preset=None, seed=0, out=None, recipe=None, **options)   -> Run
    posterior = run.sample(1000)                                                          -> Posterior
    posterior = jspgfn.baseline("b-ges", data, model="lingauss", seed=0, **params)        -> Posterior

data: a pandas DataFrame [N, d] (columns = variable names), an array [N, d] (variables X1..Xd), or the path of
a CSV file or a dataset folder (dataset.py). The same functions as `jspgfn train`, `jspgfn sample` and
`jspgfn baseline` run underneath (gflownet.train.train, gflownet.method.sample_run, fit_baseline), so the
same data, seed and options give the same samples; errors of the input raise JspgfnError (one line).
"""

import os
import tempfile
from pathlib import Path

import numpy as np

from jspgfn.dataset import Dataset, check_values, load_dataset, warn_about_columns
from jspgfn.errors import DataError, check_count
from jspgfn.posterior import Posterior, default_names


def as_dataset(data):
    """A Dataset of a DataFrame [N, d], an array [N, d] or a CSV / dataset-folder path (a Dataset as it is).

    A table must be numeric with >= 1 row and >= 1 column, finite values within dataset.MAX_ABS_VALUE and
    unique column names (DataError otherwise); constant, duplicated or badly scaled columns warn
    (DataWarning), as for a CSV file.
    """
    import pandas as pd

    if isinstance(data, Dataset):
        return data
    if isinstance(data, (str, os.PathLike)):
        return load_dataset(data)
    if isinstance(data, pd.DataFrame):
        source, names = "data frame", tuple(str(column) for column in data.columns)
        if len(set(names)) != len(names):
            raise DataError(source, f"duplicate column names: {sorted({n for n in names if names.count(n) > 1})}")
    else:
        source, names = "array", None
    try:
        values = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(source, f"not a numeric table ({exc})") from None
    if values.ndim != 2 or values.shape[0] < 1 or values.shape[1] < 1:
        raise DataError(
            source, f"expected a table [N, d] with N >= 1 rows and d >= 1 columns, got shape {values.shape}"
        )
    names = names or default_names(values.shape[1])
    check_values(values, source, names)
    warn_about_columns(values, names, source)
    return Dataset(train=values, names=names)


class Run:
    """A JSP-GFN run folder (`jspgfn train`'s --out): `Run(folder).sample(n)` draws from a trained one.

    folder: its Path. The temporary folder of `fit(out=None)` is removed when this object is.
    """

    def __init__(self, folder, scratch=None):
        self.folder = Path(folder)
        self._scratch = scratch  # a tempfile.TemporaryDirectory holding `folder`, or None

    def __repr__(self):
        return f"Run({str(self.folder)!r})"

    def sample(self, n=1000, log_pt=False, *, seed=0, beam_size=16, mc_samples=64, log_pt_proposal="uniform"):
        """Posterior of n (G, theta) samples: graphs uint8 [n, d, d], theta ([n, d, d] for lingauss).

        log_pt: also estimate log P_T(G, theta) of each sample (float [n], `Posterior.log_prob_terminating`) by
        beam search (beam_size) and Monte Carlo (mc_samples orders from log_pt_proposal, 'uniform' or
        'mixture'), as `jspgfn sample --log-pt`. seed: the sampling seed (`jspgfn sample --seed`).
        """
        from jspgfn.gflownet.method import sample_run

        check_count("n", n, 1)
        return Posterior.of(sample_run(self.folder, n, seed, log_pt, beam_size, mc_samples, log_pt_proposal))


def fit(data, model="lingauss", preset=None, seed=0, out=None, *, family=None, recipe=None, progress=True, **options):
    """Train JSP-GFN on data [N, d] (DataFrame, array or path: `as_dataset`) and return its Run.

    model: the likelihood, lingauss (default), mlp-gauss, mlp-categorical or mlp-zinormal; family: the
    posterior family of P(theta | G), 'diag' (default) or 'full'; preset: smoke, quick or paper (None: quick, with
    the recipe's budget where it has one, as `jspgfn train` without --preset).
    out: the run folder (kept; an unfinished run there with the same settings is resumed); None: a
    temporary folder that lives as long as the returned Run. progress: the progress bar of `jspgfn train`.
    recipe: None or "paper" (the paper's method), or "lingauss" (beyond the paper, linear Gaussian model only:
    the options measured closest to the exact posterior for the data's d, gflownet.recipes), as `jspgfn train
    --recipe`; options given here win over a recipe's.
    options: what `jspgfn train --set KEY=VALUE` takes, a model setting (obs_var, prior_mean, prior_var,
    hidden, num_levels: models.SETTING_NAMES) or a training option (gflownet.presets.TrainConfig, e.g.
    num_iterations=5000).
    """
    from jspgfn.gflownet.train import train
    from jspgfn.models import split_settings

    dataset = as_dataset(data)
    settings, overrides = split_settings(options)
    scratch = tempfile.TemporaryDirectory(prefix="jspgfn-run-") if out is None else None
    folder = Path(scratch.name) / "run" if out is None else Path(out)
    train(
        dataset,
        model,
        preset,
        seed,
        folder,
        overrides=overrides,
        progress=progress,
        family=family,
        model_kwargs=settings,
        recipe=recipe,
    )
    return Run(folder, scratch)


def baseline(name, data, model="lingauss", seed=0, **params):
    """Posterior of baseline `name` (`jspgfn baseline --list`) fitted on data [N, d] (`as_dataset`).

    params: the method's parameters (baselines/<name>/method.yaml) and model settings (obs_var, ...), as
    `jspgfn baseline NAME DATA --param KEY=VALUE`. Needs the jspgfn-baselines package.
    """
    from jspgfn.competitors import baselines_package

    baselines = baselines_package(name)
    baselines.get_spec(name)  # an unknown name fails before the data is read
    return Posterior.of(baselines.fit_baseline(name, as_dataset(data), model, seed, **params))
