"""Files a command writes: checked before any work starts, and replaced whole or not at all."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ._exit import UsageError

__all__ = ["checked_output", "write_atomic"]


def checked_output(name: str, option: str) -> Path:
    """The path ``name`` given to ``option``; a usage error now, before any work, if it cannot be written."""
    path = Path(name)
    if path.is_dir():
        raise UsageError(f"{option} {name}: is a folder; give a file name")
    folder = path.parent
    if not folder.is_dir():
        raise UsageError(f"{option} {name}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UsageError(f"{option} {name}: folder {folder} is not writable")
    return path


def write_atomic(path: Path, text: str) -> None:
    """Write a temporary file beside ``path`` and rename it over ``path``: a reader (or a crash)
    sees the old file or the new one, never a part; UsageError with the reason when it fails."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise UsageError(f"could not write {path}: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
