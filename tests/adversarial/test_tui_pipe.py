"""`python train.py 2>&1 | kb tui`: the pipe is read to its end (tail kept, writer never blocked or
killed), and SIGTERM leaves the alternate screen. Runs `kb tui` on a pseudo-terminal, headless."""

from __future__ import annotations

import fcntl
import os
import pty
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from helpers import read_pty_until, take_terminal

from trainkb._tail import PIPE_TAIL_BYTES

DDP = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing loss."
)
# a trainer printing 80 MB (the old reader stopped at 64 MB), its failure last; a broken pipe would exit 3
VOLUME = max(80 * 1024 * 1024, 3 * PIPE_TAIL_BYTES)
WRITER = f"""
import sys
line = b"step 123 loss 0.4567 lr 0.001 " + b"x" * 70 + b"\\n"
try:
    for _ in range({VOLUME} // len(line)):
        sys.stdout.buffer.write(line)
    sys.stdout.buffer.write({DDP!r}.encode() + b"\\n")
    sys.stdout.buffer.flush()
except BrokenPipeError:
    sys.exit(3)
"""
ENTER_ALT, LEAVE_ALT = b"\x1b[?1049h", b"\x1b[?1049l"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_piped_log_past_the_limit_then_sigterm(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", XDG_CACHE_HOME=str(tmp_path / "cache"))
    writer = subprocess.Popen([sys.executable, "-c", WRITER], stdout=subprocess.PIPE)
    tui = subprocess.Popen(
        [sys.executable, "-m", "trainkb.cli", "tui"],
        stdin=writer.stdout,
        stdout=slave,
        stderr=slave,
        preexec_fn=take_terminal(1),
        env=env,
    )
    assert writer.stdout is not None
    writer.stdout.close()
    os.close(slave)
    out = bytearray()
    try:
        assert writer.wait(timeout=120) == 0  # read to its end: no block, no broken pipe
        # the UI is up and names the entry for the failure at the very end of the log: the tail was kept
        assert read_pty_until(master, out, lambda o: ENTER_ALT in o and b"D8" in o, 120), bytes(out[-2000:])
        tui.send_signal(signal.SIGTERM)
        read_pty_until(master, out, lambda o: LEAVE_ALT in o[o.find(ENTER_ALT) :], 20)
        assert tui.wait(timeout=120) == 0
        read_pty_until(master, out, lambda o: False, 0.5)
    finally:
        for proc in (tui, writer):
            if proc.poll() is None:
                proc.kill()
        os.close(master)
    assert out.rfind(LEAVE_ALT) > out.rfind(ENTER_ALT) >= 0
    assert b"Traceback" not in out
