"""`kb tui` on a terminal that sends bytes that are not UTF-8: ``café`` typed on a Latin-1 terminal
(0xe9), a pasted log holding 0x9b or 0xff. Each bad byte is read as U+FFFD; the UI stays up and
exits cleanly on Ctrl+Q. Runs `kb tui` on a pseudo-terminal, with the real bytes."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from helpers import read_pty_until, take_terminal

ENTER_ALT, LEAVE_ALT = b"\x1b[?1049h", b"\x1b[?1049l"
REPLACED = "\ufffd".encode()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_latin1_input_is_replaced_and_the_ui_stays(tmp_path: Path) -> None:
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", XDG_CACHE_HOME=str(tmp_path / "cache"))
    tui = subprocess.Popen(
        [sys.executable, "-m", "trainkb", "tui"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        preexec_fn=take_terminal(0),
        env=env,
    )
    os.close(slave)
    out = bytearray()
    try:
        assert read_pty_until(master, out, lambda o: ENTER_ALT in o and b"paste" in o.lower(), 120), bytes(out[-2000:])
        read_pty_until(master, out, lambda o: False, 3)  # let the first screen settle
        os.write(master, b"caf\xe9 \x9b\xff RuntimeError")
        assert read_pty_until(master, out, lambda o: REPLACED in o, 30), bytes(out[-2000:])
        read_pty_until(master, out, lambda o: False, 2)
        assert tui.poll() is None, bytes(out[-3000:])  # still running: the input thread survived
        os.write(master, b"\x11")  # Ctrl+Q
        read_pty_until(master, out, lambda o: LEAVE_ALT in o[o.find(ENTER_ALT) :], 30)
        assert tui.wait(timeout=60) == 0
    finally:
        if tui.poll() is None:
            tui.kill()
            tui.wait()
        os.close(master)
    assert b"UnicodeDecodeError" not in out and b"Traceback" not in out
    assert b"caf" + REPLACED in out  # what was typed reached the paste box, the bad byte replaced
