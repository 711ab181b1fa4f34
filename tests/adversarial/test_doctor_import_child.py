"""`kb doctor`'s trial import of torch under hostile conditions: kb killed (SIGKILL, SIGTERM) or
interrupted while torch imports, and an import that hangs after starting a process in a session of
its own. Nothing the import started may outlive kb, and Ctrl-C is one line with status 130.

A fake `torch` first on PYTHONPATH forks a child that calls setsid() (as a launcher or a daemon
might), then sleeps; both write their pid where the test can find them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

FAKE_TORCH = """
import os, time
here = os.environ["FAKE_TORCH_PIDS"]
if os.fork() == 0:
    os.setsid()
    with open(os.path.join(here, "grandchild"), "w") as f:
        f.write(str(os.getpid()))
    time.sleep(600)
    os._exit(0)
with open(os.path.join(here, "importer"), "w") as f:
    f.write(str(os.getpid()))
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    """Running (a zombie is dead: only its exit status is left)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def _start(tmp_path: Path, *argv: str) -> subprocess.Popen[str]:
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text(FAKE_TORCH, encoding="utf-8")
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(fake), os.environ.get("PYTHONPATH", "")]),
        "FAKE_TORCH_PIDS": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
    }
    command = [sys.executable, "-m", "trainkb", "doctor", *argv]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _pids(tmp_path: Path, timeout: float = 90) -> list[int]:
    """The importer's and its setsid'd child's pids, once both have started."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError):
            return [int((tmp_path / name).read_text()) for name in ("importer", "grandchild")]
        time.sleep(0.1)
    raise AssertionError("the fake torch import never started")


def _gone(pids: list[int], timeout: float = 15) -> list[int]:
    """Those of ``pids`` still running after ``timeout`` seconds (killed here, so no test leaves them)."""
    deadline = time.monotonic() + timeout
    while any(map(_alive, pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in pids if _alive(pid)]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM])
def test_the_import_dies_with_kb(tmp_path, signum):
    kb = _start(tmp_path)
    try:
        pids = _pids(tmp_path)
        kb.send_signal(signum)
        assert kb.wait(timeout=30) == -signum
    finally:
        kb.kill()
        kb.communicate()
    assert _gone(pids) == []


def test_ctrl_c_is_one_line_and_status_130(tmp_path):
    kb = _start(tmp_path)
    try:
        pids = _pids(tmp_path)
        kb.send_signal(signal.SIGINT)
        _out, err = kb.communicate(timeout=30)
    finally:
        kb.kill()
    assert kb.returncode == 130
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("kb doctor: stopped by SIGINT")
    assert _gone(pids) == []


def test_a_hung_import_leaves_no_process_in_another_session(tmp_path):
    kb = _start(tmp_path, "--import-timeout", "3")
    try:
        pids = _pids(tmp_path)
        out, _err = kb.communicate(timeout=90)
    finally:
        kb.kill()
    assert "importing torch did not finish within 3 s" in out
    assert _gone(pids, timeout=2) == []
