"""One folder per `kb check` run for every check's working folder, gone even when kb is SIGKILLed.

kb cannot clean up after SIGKILL, so the folder is made to be removable by others: kb holds an
exclusive ``flock`` on a file in it for as long as it runs, and the kernel drops that lock when kb
dies, however it dies. The forkserver, which outlives kb by a moment, removes the folder once the
lock is free; a folder whose forkserver died too is removed by the next `kb check` that finds it
unlocked. A lock, not a pid: a pid is reused, and one in another pid namespace sharing /tmp means
nothing here.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
import time

__all__ = ["PREFIX", "RunFolder", "remove_if_abandoned", "sweep_abandoned"]

PREFIX = "kb-check-run-"
_LOCK = ".lock"
# A folder without its lock file is one a kb made and has not locked yet (microseconds), or what a
# killed snippet re-created by an absolute path after the folder went: only the second grows this old.
_UNLOCKED_AGE = 60.0


class RunFolder:
    """This run's folder (made in the temp folder, locked until ``remove``)."""

    def __init__(self) -> None:
        sweep_abandoned()
        self.path = tempfile.mkdtemp(prefix=PREFIX)
        # Locked under another name, then renamed: a sweeper never sees `.lock` before it is held.
        fresh = os.path.join(self.path, _LOCK + ".new")
        self._fd: int | None = os.open(fresh, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        os.rename(fresh, os.path.join(self.path, _LOCK))

    def remove(self) -> None:
        """Remove the folder with whatever checks left in it, then let go of the lock."""
        shutil.rmtree(self.path, ignore_errors=True)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def remove_if_abandoned(path: str, wait: float = 0.0) -> bool:
    """Remove ``path`` if the kb that made it is gone (its lock is free), waiting up to ``wait`` s
    for the lock; True if it was removed. A folder locked by a live kb is left alone."""
    lock = os.path.join(path, _LOCK)
    try:
        if not stat.S_ISREG(os.lstat(lock).st_mode):
            return False  # a FIFO or device planted there would block an open: not kb's, left alone
        # Non-blocking and no symlinks, and checked again once open: the name may be swapped meanwhile.
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return _remove_unlocked(path)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)
        shutil.rmtree(path, ignore_errors=True)
        return True
    finally:
        os.close(fd)


def _remove_unlocked(path: str) -> bool:
    try:
        age = time.time() - os.stat(path).st_mtime
    except OSError:  # gone already
        return False
    if age < _UNLOCKED_AGE:
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def sweep_abandoned(folder: str | None = None) -> list[str]:
    """Remove the run folders of this user's runs that ended without cleaning up; their paths."""
    folder = folder or tempfile.gettempdir()
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.startswith(PREFIX):
                continue
            with contextlib.suppress(OSError):
                if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                    continue
                if remove_if_abandoned(entry.path):
                    removed.append(entry.path)
    return removed
