"""Atomic .npz checkpoints of a pytree (no pickle).

The leaves are stored as leaf_00000, leaf_00001, ... in tree-flatten order, with
the tree structure as a string for checking; restoring needs a template pytree
of the same structure (built from the run's config), whose leaves are replaced.
"""

import json
from pathlib import Path

import jax
import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError
from jspgfn.npzfile import NpzReadError, load_arrays

CORRUPT_ADVICE = "delete it to restart training from the beginning"


def save(path, tree, info=None):
    """Write `tree` (any pytree of arrays) and a JSON-able `info` dict atomically."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    arrays = {f"leaf_{i:05d}": np.asarray(leaf) for i, leaf in enumerate(leaves)}
    arrays["treedef"] = np.array(str(treedef))
    arrays["info"] = np.array(json.dumps(info or {}, sort_keys=True))
    with atomic.atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def _corrupt(path, reason):
    return DataError(path, f"corrupt checkpoint ({reason}); {CORRUPT_ADVICE}")


def _info(path, data):
    """The info dict of a checkpoint: iteration (int >= 0) and wall_seconds (>= 0)."""
    try:
        info = json.loads(str(data["info"]))
    except json.JSONDecodeError:
        raise _corrupt(path, "its info record is not valid JSON") from None
    if not isinstance(info, dict):
        raise _corrupt(path, "its info record is not a JSON object")
    iteration, seconds = info.get("iteration"), info.get("wall_seconds")
    if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 0:
        raise _corrupt(path, f"iteration {iteration!r} is not a count")
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not seconds >= 0:
        raise _corrupt(path, f"wall_seconds {seconds!r} is not a duration")
    return info


def same_structure(stored, template):
    """Whether a checkpoint's tree structure `stored` (str of a PyTreeDef) fits the `template`'s: equal, or equal to
    the template's less trailing None fields of its outer node: fields appended to TrainState since the checkpoint
    was written, unused (None) by this run, so that a run of an older version still samples and resumes."""
    end = ", None]))"
    while stored != template and template.endswith(end):
        template = template[: -len(end)] + "]))"
    return stored == template


def load(path, template):
    """template: pytree of arrays or jax.ShapeDtypeStruct.

    Returns (tree with the template's structure and the stored leaves, info dict).
    Raises DataError on a file that is empty, truncated, damaged or not a checkpoint, and on a
    checkpoint of another configuration."""
    path = Path(path)
    leaves, treedef = jax.tree_util.tree_flatten(template)
    try:
        data = load_arrays(path)
    except NpzReadError as exc:
        raise _corrupt(path, exc) from None
    except OSError as exc:
        raise DataError(path, f"cannot read the checkpoint ({exc.strerror or exc})") from None
    missing = [key for key in ("treedef", "info") if key not in data]
    if missing:
        raise _corrupt(path, f"no {' or '.join(missing)} record: not a checkpoint")
    info = _info(path, data)
    if not same_structure(str(data["treedef"]), str(treedef)):
        raise DataError(path, "checkpoint structure differs from this run's configuration")
    names = [f"leaf_{i:05d}" for i in range(len(leaves))]
    absent = [name for name in names if name not in data]
    if absent:
        raise _corrupt(path, f"{len(absent)} of its {len(names)} arrays are missing")
    stored = [data[name] for name in names]
    for new, old in zip(stored, leaves):
        if tuple(new.shape) != tuple(old.shape) or new.dtype != np.dtype(old.dtype):
            raise DataError(
                path,
                f"checkpoint array {new.shape}/{new.dtype} does not match "
                f"{old.shape}/{old.dtype} (a different configuration or data size)",
            )
    return jax.tree_util.tree_unflatten(treedef, [jax.numpy.asarray(a) for a in stored]), info
