"""Find processes a test started and left behind, by a marker in their start-up environment.

Every process a `kb check` (or `kb run`) run creates inherits its environment block, so a
unique ``TMPDIR`` given to the run marks them all, forks and execs alike; the same folder
shows whether the run left temporary folders behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def marked_tmpdir() -> Iterator[Path]:
    """A fresh folder whose path is the marker; short, because multiprocessing puts a socket in it."""
    path = Path(tempfile.mkdtemp(prefix="kbm-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def survivors(marker: str) -> list[str]:
    """`pid cmdline` of every live process whose start-up environment contains ``marker``."""
    needle = marker.encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if needle not in Path(f"/proc/{entry}/environ").read_bytes():
                continue
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if state not in {b"Z", b"X"}:
            found.append(f"{entry} {cmd[:120]}")
    return found


def wait_for_no_survivors(marker: str, seconds: float = 120.0) -> list[str]:
    """Survivors still there after ``seconds`` (an empty list is the pass)."""
    deadline = time.monotonic() + seconds
    while (left := survivors(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def wait_for_file(path: Path, proc: subprocess.Popen, seconds: float = 240.0) -> None:
    """Wait until ``path`` exists; fail at once if ``proc`` ended first. The bound is generous: on a loaded
    2-core machine starting kb check's worker (it imports torch) has taken over a minute."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the process ended first (rc {proc.returncode}): {out}{err}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        time.sleep(0.05)
