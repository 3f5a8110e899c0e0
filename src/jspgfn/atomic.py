"""Write files under a temporary name, then rename: a reader never sees half a file.

The temporary file is `.<name>.<8 random characters>.tmp<suffix>` next to the target. A process
killed while writing (SIGKILL, a cluster's time limit) leaves it behind; the next write of the same
target removes such leftovers (see `remove_stale_temporaries`), folders written whole included.
A finished file gets the permissions a plain open() would give it under the process's umask (usually
0644), not mkstemp's private 0600: results on a shared machine or cluster stay readable by the group.
"""

import contextlib
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from jspgfn.errors import DataError

# A temporary file of the same target older than this is a leftover of a killed writer.
STALE_SECONDS = 60.0


def _temporary_name_pattern(name, suffix):
    # tempfile.mkstemp puts 8 characters of [a-z0-9_] between prefix and suffix; matching exactly
    # that (anchored at both ends) keeps the temporaries of another target (say "a.b" next to "a") apart.
    return re.compile(rf"\.{re.escape(name)}\.[a-z0-9_]{{8}}\.tmp{re.escape(suffix)}")


def umask():
    """The process's umask (Linux reads it without changing it; elsewhere it is set and put back)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_mode(folder=False):
    """The mode open() (0o666) or mkdir() (0o777) would give a new file or folder under the umask."""
    return (0o777 if folder else 0o666) & ~umask()


def remove_stale_temporaries(path, suffix=""):
    """Remove leftover temporaries of `path` whose last change is older than STALE_SECONDS: the files
    of `atomic_path`, and the folders of `dataset.write_dataset_folder` (a folder written whole, then
    renamed; its mtime moves with every file created in it).

    Why an age and not "all of them": a temporary is only written between mkstemp and the rename,
    which takes seconds (np.savez of a checkpoint, a CSV, a figure), and its mtime moves while it is
    written. Snakemake gives each output one job, so a second live writer of the same target is not
    expected; if a user still runs two commands with the same output at once, the age keeps one from
    deleting the other's file in the middle of its write (its rename would fail). A leftover younger
    than the limit is removed by the next write after that (checkpoints are written every few minutes).
    """
    pattern = _temporary_name_pattern(path.name, suffix)
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(path.parent) as entries:
        for entry in entries:
            if not pattern.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):  # gone already, or not ours to remove
                if now - entry.stat(follow_symlinks=False).st_mtime <= STALE_SECONDS:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path)
                elif entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Yield a temporary path next to `path`; rename it onto `path` only on success.

    `suffix` keeps the extension (numpy's savez appends ".npz" when it is missing).
    Raises DataError when `path` is a folder or its folder cannot be created or written to.
    """
    path = Path(path)
    suffix = path.suffix if suffix is None else suffix
    if path.is_dir():
        raise DataError(path, "is a folder; give the path of a file to write")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise DataError(path, f"cannot create the folder {path.parent}: a file is in the way") from None
    except OSError as exc:
        raise DataError(path, f"cannot create the folder {path.parent} ({exc.strerror or exc})") from None
    remove_stale_temporaries(path, suffix)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=f".tmp{suffix}", dir=path.parent)
    except OSError as exc:
        raise DataError(path, f"cannot write in {path.parent} ({exc.strerror or exc})") from None
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, default_mode())  # mkstemp's 0600 would make every result private
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_text(path, text):
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)


def write_json(path, obj):
    write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=json_default) + "\n")


def json_default(value):
    """json.dumps fallback for numpy scalars and arrays."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")
