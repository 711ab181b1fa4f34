"""Reading a file kb keeps or was pointed at, where the path may have been replaced by anything.

A cache entry swapped for a FIFO would block a plain read forever, and one linked to /dev/zero would
fill memory: only a regular file is read, opened without blocking and without following a final link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["read_regular"]

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: Path, most: int, *, follow: bool = True) -> bytes | None:
    """At most ``most`` bytes of ``path`` when it is a regular file; None for anything else or on error.

    ``follow=False`` refuses a final symbolic link too (kb's own cache files are never links).
    """
    flags = _FLAGS if follow else _FLAGS | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(most)
    except OSError:
        return None
    finally:
        os.close(fd)
