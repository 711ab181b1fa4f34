"""`kb run` keeps the order in which the command wrote its two streams where they show in one place,
and keeps them apart where the user split them."""

from __future__ import annotations

import os
import pty
import select
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KB_RUN = [sys.executable, "-m", "trainkb", "run", "--"]

# Lines that alternate between stdout and stderr, each flushed as it is printed.
_ALTERNATING = (
    "import sys\nfor i in range(2000):\n    print('o', i, flush=True)\n    print('e', i, file=sys.stderr, flush=True)\n"
)
_IN_ORDER = [f"{stream} {i}" for i in range(2000) for stream in "oe"]


def _kb_run_in_bash(tmp_path: Path, script: str, redirect: str) -> subprocess.CompletedProcess[str]:
    """``kb run -- python inter.py`` with ``redirect``, whose {out}, {err} and {both} name files in ``tmp_path``."""
    child = tmp_path / "inter.py"
    child.write_text(script)
    kb = shlex.join([*KB_RUN, sys.executable, str(child)])
    files = {name: shlex.quote(str(tmp_path / name)) for name in ("out", "err", "both")}
    return subprocess.run(
        ["bash", "-c", f"{kb} {redirect.format(**files)}"], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("redirect", ["> {both} 2>&1", "|& cat > {both}"], ids=["file", "pipe"])
def test_lines_of_both_streams_keep_the_order_the_command_wrote_them(tmp_path, redirect):
    done = _kb_run_in_bash(tmp_path, _ALTERNATING, redirect)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "both").read_text().splitlines() == _IN_ORDER


def test_streams_sent_to_two_files_stay_apart(tmp_path):
    done = _kb_run_in_bash(tmp_path, _ALTERNATING, "> {out} 2> {err}")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out").read_text().splitlines() == [f"o {i}" for i in range(2000)]
    assert (tmp_path / "err").read_text().splitlines() == [f"e {i}" for i in range(2000)]


def test_a_failure_into_one_file_keeps_the_order_and_is_still_diagnosed(tmp_path):
    """Both streams in one pipe: the diagnosis still reads the failure from what the command wrote."""
    script = _ALTERNATING + "sys.exit(3)\n"
    done = _kb_run_in_bash(tmp_path, script, "> {both} 2>&1")
    assert done.returncode == 3
    lines = (tmp_path / "both").read_text().splitlines()
    assert lines[: len(_IN_ORDER)] == _IN_ORDER
    assert any(line.startswith("── kb run: ") and "exited with status 3" in line for line in lines), lines[-5:]


def _on_a_terminal(args: list[str], timeout: float = 120) -> tuple[int, bytes]:
    """Run ``args`` with stdout and stderr on one pseudo-terminal; (status, everything it showed)."""
    ours, theirs = pty.openpty()
    proc = subprocess.Popen(args, stdout=theirs, stderr=theirs, stdin=subprocess.DEVNULL)
    os.close(theirs)
    shown = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([ours], [], [], 0.5)[0]:
            try:
                chunk = os.read(ours, 65536)
            except OSError:  # EIO: every holder of the other end has closed it
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    else:
        proc.kill()  # it overran: a failure, not a process left running
    os.close(ours)
    return proc.wait(timeout=120), shown


def test_on_a_terminal_both_streams_are_one_terminal_in_the_commands_order():
    """Without kb both streams are the same terminal: the command sees that, and its order is kept."""
    probe = "import os, sys\nprint('same', sys.stderr.isatty() and os.path.samestat(os.fstat(1), os.fstat(2)))\n"
    status, shown = _on_a_terminal([*KB_RUN, sys.executable, "-c", probe + _ALTERNATING])
    assert status == 0
    lines = shown.decode().replace("\r\n", "\n").splitlines()
    assert lines == ["same True", *_IN_ORDER]


# stdout into a full file shared with stderr: the line the command prints to stderr once kb's copy has
# failed (without kb, a write that fails and goes on) must not kill it with SIGPIPE.
_LAST_WORDS = "import sys, time\nprint('out', flush=True)\ntime.sleep(1)\nprint('err', file=sys.stderr)\nsys.exit(7)\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_into_one_full_file_a_last_line_on_stderr_keeps_the_commands_status(tmp_path):
    done = _kb_run_in_bash(tmp_path, _LAST_WORDS, ">/dev/full 2>&1")
    assert done.returncode == 7


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_into_one_full_file_a_command_that_keeps_writing_is_stopped():
    kb = shlex.join([*KB_RUN, "yes"])
    done = subprocess.run(["bash", "-c", f"{kb} >/dev/full 2>&1"], capture_output=True, timeout=120)
    assert done.returncode == 128 + signal.SIGPIPE  # what `yes` reports once its pipe is closed


@pytest.mark.skipif(sys.platform != "linux", reason="F_GETPIPE_SZ is Linux-only")
def test_the_pipe_both_streams_share_holds_a_long_line_whole(tmp_path):
    """The shared pipe is widened, so a write of up to 1 MiB goes in whole, never cut by the other stream."""
    probe = "import fcntl\nprint(fcntl.fcntl(1, fcntl.F_GETPIPE_SZ), fcntl.fcntl(2, fcntl.F_GETPIPE_SZ))\n"
    done = _kb_run_in_bash(tmp_path, probe, "> {both} 2>&1")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "both").read_text() == f"{1 << 20} {1 << 20}\n"
