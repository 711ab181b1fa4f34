"""Run a training command with its output passed through untouched, keeping a tail to diagnose.

stdout and stderr stay separate streams and are copied byte for byte as they arrive (no
line buffering added, so `\\r` progress bars keep working). Signals that would stop us —
Ctrl-C, SIGTERM, SIGHUP, SIGQUIT — are forwarded to the child's process group instead.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["RunOutcome", "Tail", "watch"]

_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)


class Tail:
    """The last ``limit`` bytes seen on either stream, in arrival order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size > self.limit and self._chunks:
            excess = self._size - self.limit
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
            else:
                self._chunks[0] = first[excess:]
                self._size -= excess

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")


@dataclass
class RunOutcome:
    returncode: int
    tail: str

    @property
    def exit_status(self) -> int:
        """What a shell would report: 128+N for a child killed by signal N."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode


def watch(cmd: Sequence[str], tail_bytes: int = 256 * 1024, idle_timeout: float | None = None,
          on_idle: Callable[[str, float], None] | None = None,
          stdout_fd: int = 1, stderr_fd: int = 2) -> RunOutcome:
    """Run ``cmd`` to completion, copying its output through; call ``on_idle`` after silences."""
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # a piped Python child would otherwise block-buffer
    child = subprocess.Popen(list(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             start_new_session=True)
    previous = {}

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(child.pid, signum)

    for signum in _FORWARDED:
        previous[signum] = signal.signal(signum, forward)
    tail = Tail(tail_bytes)
    selector = selectors.DefaultSelector()
    assert child.stdout is not None and child.stderr is not None
    selector.register(child.stdout, selectors.EVENT_READ, stdout_fd)
    selector.register(child.stderr, selectors.EVENT_READ, stderr_fd)
    last_output = time.monotonic()
    reported_idle = False
    try:
        while selector.get_map():
            wait = None if idle_timeout is None else max(0.05, idle_timeout - (time.monotonic() - last_output))
            events = selector.select(wait)
            if not events:
                if idle_timeout is not None and not reported_idle and on_idle is not None:
                    on_idle(tail.text(), time.monotonic() - last_output)
                    reported_idle = True
                continue
            for key, _ in events:
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                _write_all(key.data, chunk)
                tail.add(chunk)
                last_output = time.monotonic()
                reported_idle = False
        returncode = child.wait()
    finally:
        selector.close()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return RunOutcome(returncode, tail.text())


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BrokenPipeError:
            return
        view = view[written:]
