"""On a dumb terminal (TERM=dumb) kb writes plain lines: no line-erase sequence for it to show raw."""

from __future__ import annotations

import io

import pytest

from trainkb import _status
from trainkb.catalogue import CheckStatus
from trainkb.check._progress import Progress
from trainkb.check._runner import CheckResult


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _result() -> CheckResult:
    return CheckResult("D1", "c0", CheckStatus.FAILED, 0.1, "rank 0 raised ValueError: x", "failure", "c", "ok", "p", 1)


@pytest.mark.parametrize(("term", "erases"), [("dumb", False), ("xterm-256color", True)])
def test_progress_erases_lines_only_where_the_terminal_can(monkeypatch, term, erases):
    monkeypatch.setenv("TERM", term)
    stream = _Terminal()
    Progress(1, stream)(_result())
    assert ("\x1b[2K" in stream.getvalue()) is erases
    assert "FAIL" in stream.getvalue()


@pytest.mark.parametrize(("term", "shown"), [("dumb", ""), ("xterm", "\r\x1b[2Kbuilding the index…")])
def test_status_line_is_left_out_on_a_dumb_terminal(monkeypatch, term, shown):
    monkeypatch.setenv("TERM", term)
    stream = _Terminal()
    monkeypatch.setattr(_status.sys, "stderr", stream)
    with _status.status("building the index"):
        pass
    assert stream.getvalue() == (shown + "\r\x1b[2K" if shown else "")
