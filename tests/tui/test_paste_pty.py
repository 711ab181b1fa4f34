"""`kb tui` on a pseudo-terminal, sent a bracketed paste holding escapes and a Ctrl+Q byte, as a terminal sends
a coloured log: the driver's parser must keep it one paste. Textual's own parser quit on the pasted ``\\x11``."""

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
from helpers import TRACEBACK, read_pty_until, take_terminal

ENTER_ALT, LEAVE_ALT = b"\x1b[?1049h", b"\x1b[?1049l"
D8_LINE = TRACEBACK.splitlines()[-1].removeprefix("[rank1]: ")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_pasted_ctrl_q_after_an_escape_does_not_quit(tmp_path: Path) -> None:
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
        shown = len(out)
        paste = f"\x1b[0mlog line\n\x11more\n\x1b[31m{D8_LINE}\x1b[0m\n"
        os.write(master, b"\x1b[200~" + paste.encode() + b"\x1b[201~")
        assert read_pty_until(master, out, lambda o: b"D8" in o[shown:], 60), bytes(out[-3000:])
        read_pty_until(master, out, lambda o: False, 2)
        assert tui.poll() is None, bytes(out[-3000:])  # the pasted \x11 was text, not Ctrl+Q
        os.write(master, b"\x11")  # Ctrl+Q typed
        read_pty_until(master, out, lambda o: LEAVE_ALT in o[o.find(ENTER_ALT) :], 30)
        assert tui.wait(timeout=60) == 0
    finally:
        if tui.poll() is None:
            tui.kill()
            tui.wait()
        os.close(master)
    assert b"Traceback" not in out
