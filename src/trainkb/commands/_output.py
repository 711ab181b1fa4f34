"""Files a command writes: checked before any work starts, and replaced whole or not at all.

A regular file (or a link to one) is replaced by renaming a finished temporary file over it;
anything else that already exists under the name (``/dev/stdout``, a FIFO, a device) is written
through, because renaming over it would replace the device node or the link itself.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from ._exit import UsageError

__all__ = ["checked_output", "write_atomic"]


def _is_stream(path: Path) -> bool:
    """True when ``path`` names something that exists and is not a regular file (after links)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _target(path: Path) -> Path:
    """The file a rename must replace: a link's target, so the link stays a link."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def checked_output(name: str, option: str) -> Path:
    """The path ``name`` given to ``option``; a usage error now, before any work, if it cannot be written."""
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{option} {name}: is a folder; give a file name")
    if _is_stream(path):
        if not os.access(path, os.W_OK):
            raise UsageError(f"{option} {name}: is not writable")
        return path
    folder = _target(path).parent
    if not folder.is_dir():
        raise UsageError(f"{option} {name}: folder {folder} does not exist")
    try:  # os.access says yes to root everywhere, /proc included: create a file to be sure
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        os.close(handle)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{option} {name}: cannot write in folder {folder}: {exc.strerror or exc}") from None
    return path


def _write_through(path: Path, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
    except OSError as exc:
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None


def _mode_for(target: Path) -> int:
    """The mode the file had, or what a plain ``open`` would give under the umask."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside ``path`` and rename it over ``path``: a reader (or a crash)
    sees the old file or the new one, never a part; UsageError with the reason when it fails."""
    if _is_stream(path):
        _write_through(path, text)
        return
    target = _target(path)
    temp = None
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fchmod(stream.fileno(), _mode_for(target))
            os.fsync(stream.fileno())
        os.replace(temp, target)
    except OSError as exc:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
    except BaseException:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise
