"""The .npz files of the project: named arrays plus a JSON `metadata` string, written atomically."""

import json
from pathlib import Path

import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError


def write_npz(path, arrays, metadata):
    """Write arrays and the metadata dict (as a JSON string) to one compressed .npz, atomically."""
    payload = {**arrays, "metadata": np.array(json.dumps(metadata, sort_keys=True, default=atomic.json_default))}
    with atomic.atomic_path(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **payload)


def read_npz(path, required, kind):
    """(arrays without metadata, metadata dict) of a write_npz file.

    Raises DataError(path, problem) when the file is missing, unreadable, lacks one of the
    `required` arrays (then it is "not <kind>") or has invalid metadata JSON.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {key: data[key] for key in data.files}
    except Exception as exc:  # numpy raises several types on a corrupt archive
        raise DataError(path, f"not a readable .npz file ({exc})") from None
    missing = [key for key in (*required, "metadata") if key not in arrays]
    if missing:
        raise DataError(path, f"missing array(s) {', '.join(repr(k) for k in missing)}: not {kind}")
    try:
        metadata = json.loads(str(arrays.pop("metadata")))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"metadata is not valid JSON ({exc})") from None
    return arrays, metadata
