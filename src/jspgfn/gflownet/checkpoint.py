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
from jspgfn.errors import JspgfnError


def save(path, tree, info=None):
    """Write `tree` (any pytree of arrays) and a JSON-able `info` dict atomically."""
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    arrays = {f"leaf_{i:05d}": np.asarray(leaf) for i, leaf in enumerate(leaves)}
    arrays["treedef"] = np.array(str(treedef))
    arrays["info"] = np.array(json.dumps(info or {}, sort_keys=True))
    with atomic.atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def load(path, template):
    """template: pytree of arrays or jax.ShapeDtypeStruct.

    Returns (tree with the template's structure and the stored leaves, info dict)."""
    path = Path(path)
    leaves, treedef = jax.tree_util.tree_flatten(template)
    try:
        with np.load(path, allow_pickle=False) as data:
            stored_def = str(data["treedef"])
            info = json.loads(str(data["info"]))
            stored = [data[f"leaf_{i:05d}"] for i in range(len(leaves))]
    except (OSError, KeyError, ValueError) as exc:
        raise JspgfnError(f"{path}: not a readable checkpoint ({exc})") from None
    if stored_def != str(treedef):
        raise JspgfnError(f"{path}: checkpoint structure differs from this run's configuration")
    for new, old in zip(stored, leaves):
        if tuple(new.shape) != tuple(old.shape) or new.dtype != np.dtype(old.dtype):
            raise JspgfnError(
                f"{path}: checkpoint array {new.shape}/{new.dtype} does not match "
                f"{old.shape}/{old.dtype} (a different configuration or data size)"
            )
    return jax.tree_util.tree_unflatten(treedef, [jax.numpy.asarray(a) for a in stored]), info
