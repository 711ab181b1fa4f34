"""`kb tui` on a pseudo-terminal, sent a bracketed paste holding escapes and a Ctrl+Q byte, as a terminal sends
a coloured log: the driver's parser must keep it one paste. Textual's own parser quit on the pasted ``\\x11``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import ENTER_ALT, LEAVE_ALT, TRACEBACK, read_pty_until, tui_on_pty

D8_LINE = TRACEBACK.splitlines()[-1].removeprefix("[rank1]: ")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_pasted_ctrl_q_after_an_escape_does_not_quit(tmp_path: Path) -> None:
    with tui_on_pty(tmp_path) as (tui, master, out):
        shown = len(out)
        paste = f"\x1b[0mlog line\n\x11more\n\x1b[31m{D8_LINE}\x1b[0m\n"
        os.write(master, b"\x1b[200~" + paste.encode() + b"\x1b[201~")
        assert read_pty_until(master, out, lambda o: b"D8" in o[shown:], 60), bytes(out[-3000:])
        read_pty_until(master, out, lambda o: False, 2)
        assert tui.poll() is None, bytes(out[-3000:])  # the pasted \x11 was text, not Ctrl+Q
        os.write(master, b"\x11")  # Ctrl+Q typed
        read_pty_until(master, out, lambda o: LEAVE_ALT in o[o.find(ENTER_ALT) :], 30)
        assert tui.wait(timeout=60) == 0
    assert b"Traceback" not in out
