"""One trainer per run folder: an advisory lock on `<run>/train.lock`.

`jspgfn train` holds an exclusive `fcntl.flock` on the file while it works and writes its PID into it;
the operating system releases the lock when the process ends in any way (kill -9 included), so a
stale lock never blocks a rerun. A second trainer, or a sampler, finds the lock taken and is refused
with the holder's PID. The file itself stays (removing it would let a third process lock a fresh file
while the second still holds the old one).
"""

import contextlib
import fcntl
import os
from pathlib import Path

from jspgfn.errors import JspgfnError

LOCK = "train.lock"


def _holder(handle):
    """The PID written by the lock's holder, as text ('unknown' when it has not written it yet)."""
    handle.seek(0)
    text = handle.read().strip()
    return text if text.isdigit() else "unknown"


@contextlib.contextmanager
def training(run):
    """Hold the run folder's lock while training; JspgfnError naming the holder's PID when it is taken."""
    run = Path(run)
    with open(run / LOCK, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _holder(handle)
            raise JspgfnError(
                f"{run}: another `jspgfn train` (PID {pid}) is training this run folder; wait for it to finish "
                f"or stop it (kill {pid}), then run this command again"
            ) from None
        handle.truncate(0)
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def check_not_training(run):
    """JspgfnError naming the trainer's PID when a `jspgfn train` holds the lock of run folder `run`."""
    path = Path(run) / LOCK
    if not path.is_file():
        return
    with open(path) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise JspgfnError(
                f"{run}: `jspgfn train` (PID {_holder(handle)}) is still training this run folder; sample it "
                "when that command has finished"
            ) from None
        fcntl.flock(handle, fcntl.LOCK_UN)
