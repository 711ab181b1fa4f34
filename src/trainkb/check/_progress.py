"""Progress while checks run: one rewritten line on a terminal, plain lines otherwise (a dumb terminal included)."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from typing import TextIO

from .._status import rewrites_lines
from .._terminal import printable
from ..catalogue import CheckStatus
from ._mutants import MutantStatus
from ._runner import CheckResult

__all__ = ["Progress"]

_LABEL: dict[str, str] = {
    CheckStatus.PASSED: "PASS",
    CheckStatus.FAILED: "FAIL",
    CheckStatus.ERROR: "ERROR",
    CheckStatus.SKIPPED: "SKIP",
    MutantStatus.KILLED: "KILL",
    MutantStatus.SURVIVED: "SURV",
}


def _shown(message: str) -> str:
    """A verdict quotes what the snippet raised: its escape sequences are spelled out, not obeyed."""
    return printable(message[:200], newlines=False)


def _where(result: CheckResult) -> str:
    return printable(f"{result.entry}:{result.check}", newlines=False)


class Progress:
    """Progress on stderr; one that cannot be written (closed, a full disk) costs the progress only,
    never a check's verdict or the report."""

    def __init__(self, total: int, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total = total
        self.stream = stream or sys.stderr  # None when kb started with its stderr closed
        self.tty = rewrites_lines(self.stream)
        self.quiet = quiet or self.stream is None
        self.counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, result: CheckResult) -> None:
        with self._lock:
            self.counts[result.status] += 1
            if self.quiet:
                return
            try:
                self._show(result)
            except (OSError, ValueError):  # the reader went away or the disk is full: stop showing
                self.quiet = True

    def _show(self, result: CheckResult) -> None:
        done = sum(self.counts.values())
        if self.tty:
            if result.status in {CheckStatus.FAILED, CheckStatus.ERROR, MutantStatus.SURVIVED}:
                self.stream.write(f"\r\x1b[2K{_LABEL[result.status]} {_where(result)}: {_shown(result.message)}\n")
            tally = " ".join(f"{self.counts[s]} {s}" for s in _LABEL if self.counts[s])
            self.stream.write(f"\r\x1b[2K[{done}/{self.total}] {tally}  {_where(result)}")
            if done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(
                f"{_LABEL[result.status]:<5} {_where(result)} ({result.seconds:.2f} s) {_shown(result.message)}\n"
            )
        self.stream.flush()
