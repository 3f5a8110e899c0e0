"""The .npz files of the project: named arrays plus a JSON `metadata` string, written atomically."""

import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from jspgfn import atomic
from jspgfn.errors import DataError


class NpzReadError(Exception):
    """A file that is not a readable .npz archive; the message is a short reason in plain words
    (no numpy internals), for a caller to put in its own one-line error."""


def write_npz(path, arrays, metadata):
    """Write arrays and the metadata dict (as a JSON string) to one compressed .npz, atomically."""
    payload = {**arrays, "metadata": np.array(json.dumps(metadata, sort_keys=True, default=atomic.json_default))}
    with atomic.atomic_path(path, suffix=".npz") as tmp:
        np.savez_compressed(tmp, **payload)


def _reason(path, exc):
    """A short reason for an exception numpy or zipfile raised while reading `path`."""
    text = str(exc)
    if isinstance(exc, EOFError):
        return "the file is empty" if path.stat().st_size == 0 else "the file ends too early"
    if isinstance(exc, zipfile.BadZipFile):
        if "not a zip file" in text:
            return "truncated, or not an .npz archive"
        return f"damaged archive: {text}"
    if isinstance(exc, zlib.error):
        return "damaged compressed data"
    if "pickle" in text:  # np.load tries a pickle on anything that is neither .npz nor .npy
        return "not an .npz archive"
    return f"damaged array data: {text}" if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def load_arrays(path):
    """{name: array} of every array of an .npz file, read in full (so a damaged member fails here).

    Raises NpzReadError with a short reason when the file is not a readable .npz archive (empty,
    truncated, damaged, or another kind of file); OSError (missing, no permission) passes through.
    """
    path = Path(path)
    try:
        data = np.load(path, allow_pickle=False)
    except (OSError, MemoryError):
        raise
    except Exception as exc:  # numpy and zipfile raise several types on a corrupt file
        raise NpzReadError(_reason(path, exc)) from None
    if not isinstance(data, np.lib.npyio.NpzFile):
        raise NpzReadError("a single .npy array, not an .npz archive")
    try:
        with data:
            return {key: data[key] for key in data.files}
    except (OSError, MemoryError):
        raise
    except Exception as exc:
        raise NpzReadError(_reason(path, exc)) from None


def read_npz(path, required, kind):
    """(arrays without metadata, metadata dict) of a write_npz file.

    Raises DataError(path, problem) when the file is missing, unreadable, lacks one of the
    `required` arrays (then it is "not <kind>") or has invalid metadata JSON.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "file not found")
    try:
        arrays = load_arrays(path)
    except NpzReadError as exc:
        raise DataError(
            path,
            f"not a readable .npz file: corrupt or not {kind} ({exc}); write it again with the command that made it",
        ) from None
    except OSError as exc:
        raise DataError(path, f"cannot be read ({exc.strerror or exc})") from None
    missing = [key for key in (*required, "metadata") if key not in arrays]
    if missing:
        raise DataError(path, f"missing array(s) {', '.join(repr(k) for k in missing)}: not {kind}")
    try:
        metadata = json.loads(str(arrays.pop("metadata")))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"metadata is not valid JSON ({exc})") from None
    return arrays, metadata
