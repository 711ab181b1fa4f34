"""A killed `kb site build` takes its page-rendering workers along instead of leaving them under pid 1."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import child_pids


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux-only")
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_killing_the_build_ends_its_workers(tmp_path, signum):
    kb = subprocess.Popen(
        [sys.executable, "-m", "trainkb", "site", "build", "-o", str(tmp_path / "site")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while not workers and kb.poll() is None and time.monotonic() < deadline:
        workers = child_pids(kb.pid)
        time.sleep(0.01)
    if not workers:
        kb.kill()
        kb.wait()
        pytest.skip("the build rendered in one process (too few CPUs or entries)")
    kb.send_signal(signum)
    assert kb.wait(timeout=60) == -signum
    deadline = time.monotonic() + 15
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in workers if _alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == []
