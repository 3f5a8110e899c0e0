"""Checkpoints of a TrainState across versions (gflownet/checkpoint.py)."""

from typing import NamedTuple

import jax
import numpy as np
import pytest

from jspgfn.errors import DataError
from jspgfn.gflownet import checkpoint


def _old_state():
    class TrainState(NamedTuple):
        params: dict
        target: jax.Array | None = None

    return TrainState


def _new_state():  # the same class name, with fields appended
    class TrainState(NamedTuple):
        params: dict
        target: jax.Array | None = None
        anchor: jax.Array | None = None
        terminals: jax.Array | None = None

    return TrainState


def test_a_checkpoint_written_before_a_field_was_appended_loads(tmp_path):
    """TrainState gained `terminals` (None without backward_every): a checkpoint of the older structure loads into
    the new template, leaves in place; a field that is not None in the template, or another structure, does not."""
    Old, New = _old_state(), _new_state()
    old = Old({"w": np.arange(3.0), "b": np.ones(2)}, None)
    checkpoint.save(tmp_path / "c.npz", old, {"iteration": 5, "wall_seconds": 1.0})
    tree, info = checkpoint.load(tmp_path / "c.npz", New({"w": np.zeros(3), "b": np.zeros(2)}))
    np.testing.assert_array_equal(tree.params["w"], np.arange(3.0))
    assert tree.terminals is None and info["iteration"] == 5
    with pytest.raises(DataError, match="structure differs"):
        checkpoint.load(tmp_path / "c.npz", New({"w": np.zeros(3), "b": np.zeros(2)}, terminals=np.zeros(2)))
    with pytest.raises(DataError, match="structure differs"):
        checkpoint.load(tmp_path / "c.npz", New({"w": np.zeros(3)}))
