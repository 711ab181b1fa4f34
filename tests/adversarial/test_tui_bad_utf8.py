"""`kb tui` on a terminal that sends bytes that are not UTF-8: ``café`` typed on a Latin-1 terminal
(0xe9), a pasted log holding 0x9b or 0xff. Each bad byte is read as U+FFFD; the UI stays up and
exits cleanly on Ctrl+Q. Runs `kb tui` on a pseudo-terminal, with the real bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers import ENTER_ALT, LEAVE_ALT, read_pty_until, tui_on_pty

REPLACED = "\ufffd".encode()


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_latin1_input_is_replaced_and_the_ui_stays(tmp_path: Path) -> None:
    with tui_on_pty(tmp_path) as (tui, master, out):
        os.write(master, b"caf\xe9 \x9b\xff RuntimeError")
        assert read_pty_until(master, out, lambda o: REPLACED in o, 30), bytes(out[-2000:])
        read_pty_until(master, out, lambda o: False, 2)
        assert tui.poll() is None, bytes(out[-3000:])  # still running: the input thread survived
        os.write(master, b"\x11")  # Ctrl+Q
        read_pty_until(master, out, lambda o: LEAVE_ALT in o[o.find(ENTER_ALT) :], 30)
        assert tui.wait(timeout=60) == 0
    assert b"UnicodeDecodeError" not in out and b"Traceback" not in out
    assert b"caf" + REPLACED in out  # what was typed reached the paste box, the bad byte replaced
