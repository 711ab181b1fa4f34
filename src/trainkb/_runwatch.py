"""Run a training command with its output passed through untouched, keeping a tail to diagnose.

stdout and stderr stay separate streams and are copied byte for byte as they arrive (no
line buffering added, so `\\r` progress bars keep working). Where our own stdout or stderr is a
terminal, the child gets a pseudo-terminal on that stream instead of a pipe (output
processing off, so bytes still pass unchanged): `isatty()` is true, and colours, tqdm and
line buffering behave as they do without `kb run`. When the reader of our output goes away
(`kb run -- yes | head -1`), the child's pipe is closed too, so it gets SIGPIPE/EPIPE as it
would have. Signals are passed on to the child's process group: Ctrl-C, SIGTERM, SIGHUP,
SIGQUIT, SIGUSR1/SIGUSR2 (batch schedulers' pre-emption warnings), terminal resizes, and
Ctrl-Z/`fg` (the job stops and resumes with us).

Where our stdout and stderr show in one place (a terminal, `2>&1`), a line that one stream has
begun is finished before the other stream's output is shown: the pieces in which a long line
is read must not let the other stream cut into it, as a terminal never would inside one
write. A line left open for LINE_PATIENCE (a prompt, `print(..., end="")`) stops holding
the other stream back; a progress bar redrawn with `\\r` never does.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import selectors
import signal
import termios
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._runguard import FORWARDED, start
from ._tail import RUN_TAIL_BYTES

__all__ = ["RunOutcome", "Tail", "watch"]

LINE_PATIENCE = 1.0  # seconds an unfinished line of one stream may keep the other stream's output waiting

_FORWARDED = (*FORWARDED, signal.SIGCONT)
_HANDLED = (*_FORWARDED, signal.SIGWINCH, signal.SIGTSTP)  # what `_forwarding` installs a handler for


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
    output_closed: bool = False  # our reader went away (a closed pipe) before the command ended
    mid_line: bool = False  # our stderr's last line is unfinished: print a line end before adding to it

    @property
    def exit_status(self) -> int:
        """What a shell would report: 128+N for a child killed by signal N."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode


def _channel(target_fd: int) -> tuple[int, int]:
    """(read end for us, write end for the child): a pseudo-terminal if ``target_fd`` is one."""
    if not os.isatty(target_fd):
        return os.pipe()
    ours, theirs = pty.openpty()
    attrs = termios.tcgetattr(theirs)
    attrs[1] &= ~termios.OPOST  # no "\n" -> "\r\n": the real terminal does that once, on our write
    termios.tcsetattr(theirs, termios.TCSANOW, attrs)
    _copy_size(target_fd, theirs)
    return ours, theirs


def _copy_size(source: int, pty_fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.ioctl(pty_fd, termios.TIOCSWINSZ, fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8))


def _same_file(a: int, b: int) -> bool:
    """Whether two of our descriptors write to one place (a terminal, `2>&1`), where lines can mix."""
    try:
        return os.path.samestat(os.fstat(a), os.fstat(b))
    except OSError:
        return False


class _Copy:
    """Where each stream's output stands: at a line start, inside a plain line, or inside a redrawn one."""

    START, PLAIN, REDRAWN = 0, 1, 2

    def __init__(self, targets: Sequence[int], shared: bool) -> None:
        self.shared = shared
        self.state = dict.fromkeys(targets, self.START)
        self.open = set(targets)
        self.last_data = dict.fromkeys(targets, 0.0)
        self.opened = dict.fromkeys(targets, 0.0)
        self.last_target: int | None = None

    def wrote(self, target: int, chunk: bytes, now: float) -> None:
        end = chunk.rfind(b"\n")
        rest = chunk[end + 1 :]
        before = self.START if end >= 0 else self.state[target]
        if not rest:
            state = before
        elif b"\r" in rest or before == self.REDRAWN:
            state = self.REDRAWN  # a progress bar redraws its line: nothing to keep whole
        else:
            state = self.PLAIN
        if state == self.PLAIN and (before != self.PLAIN or end >= 0):
            self.opened[target] = now
        self.state[target] = state
        self.last_data[target] = now
        self.last_target = target

    def closed(self, target: int) -> None:
        self.open.discard(target)

    def holding(self, now: float) -> int | None:
        """The stream whose unfinished line keeps the other waiting: only where both share one place,
        and only while that line keeps coming (a prompt or `print(..., end="")` lets go after a pause)."""
        if not self.shared:
            return None
        open_lines = [
            t
            for t, state in self.state.items()
            if t in self.open and state == self.PLAIN and now - self.last_data[t] < LINE_PATIENCE
        ]
        return min(open_lines, key=lambda t: self.opened[t]) if open_lines else None

    def mid_line(self, target: int) -> bool:
        """Whether text written to ``target`` now would land inside a line already shown."""
        last = self.last_target if self.shared else target
        return last is not None and self.state[last] != self.START


@contextlib.contextmanager
def _forwarding(pgid: int, terminals: list[tuple[int, int]]) -> Iterator[None]:
    """Pass signals on to the child's group while the command runs; restore ours after."""

    def send(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)

    def forward(signum: int, _frame: object) -> None:
        send(signum)

    def resize(signum: int, _frame: object) -> None:
        for source, pty_fd in terminals:
            _copy_size(source, pty_fd)
        send(signum)

    def suspend(_signum: int, _frame: object) -> None:
        # The child's group is in another session, where the kernel ignores SIGTSTP (an
        # orphaned group): stop it outright, stop ourselves as Ctrl-Z would, resume it after.
        send(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)
        signal.signal(signal.SIGTSTP, suspend)
        send(signal.SIGCONT)

    handlers = {**dict.fromkeys(_FORWARDED, forward), signal.SIGWINCH: resize, signal.SIGTSTP: suspend}
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _open_standard_streams() -> None:
    """Give a closed stdout or stderr (`>&-`) /dev/null, so our pipes never take its number."""
    for fd in (1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)


def watch(
    cmd: Sequence[str],
    tail_bytes: int = RUN_TAIL_BYTES,
    idle_timeout: float | None = None,
    on_idle: Callable[[str, float], None] | None = None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
) -> RunOutcome:
    """Run ``cmd`` to completion, copying its output through; call ``on_idle`` after silences.

    ``on_idle`` is called with our stderr at the start of a line, so what it prints stands on its own.
    """
    _open_standard_streams()
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # a piped Python child would otherwise block-buffer
    channels = {target: _channel(target) for target in (stdout_fd, stderr_fd)}
    # Held back from the start of the command until the handlers that pass them on are in place: a
    # Ctrl-Z or SIGTERM in between would otherwise stop or end kb alone and leave the command running.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED)
    try:
        child = start(
            cmd,
            channels[stdout_fd][1],
            channels[stderr_fd][1],
            env,
            close=[ours for ours, _ in channels.values()],
            mask=mask,
        )
    except BaseException:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for fd in {fd for pair in channels.values() for fd in pair}:
            os.close(fd)
        raise
    for _, theirs in channels.values():
        os.close(theirs)
    terminals = [(target, ours) for target, (ours, _) in channels.items() if os.isatty(ours)]
    tail = Tail(tail_bytes)
    copy = _Copy(list(channels), _same_file(stdout_fd, stderr_fd))
    selector = selectors.DefaultSelector()
    alone = {target: selectors.DefaultSelector() for target in channels}  # to wait for one stream only
    for target, (ours, _) in channels.items():
        selector.register(ours, selectors.EVENT_READ, target)
        alone[target].register(ours, selectors.EVENT_READ, target)
    last_output = time.monotonic()
    reported_idle = False
    output_closed = False
    try:
        with _forwarding(child.pid, terminals):
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what came meanwhile is passed on now
            while selector.get_map():
                now = time.monotonic()
                holding = copy.holding(now)
                waits = [] if idle_timeout is None or reported_idle else [idle_timeout - (now - last_output)]
                if holding is not None:
                    waits.append(LINE_PATIENCE - (now - copy.last_data[holding]))
                wait = max(0.01, min(waits)) if waits else None
                events = (alone[holding] if holding is not None else selector).select(wait)
                now = time.monotonic()
                if not events:
                    if idle_timeout is not None and not reported_idle and now - last_output >= idle_timeout:
                        if on_idle is not None:
                            if copy.mid_line(stderr_fd):
                                _write_all(stderr_fd, b"\n")
                            on_idle(tail.text(), now - last_output)
                        reported_idle = True
                    continue
                for key, _ in events:
                    if copy.holding(now) not in (None, key.data):  # the other stream's line came first
                        continue  # still readable: the next select reports it again
                    try:
                        chunk = os.read(key.fd, 65536)
                    except OSError:  # EIO: every holder of a pseudo-terminal's other end has closed it
                        chunk = b""
                    written = bool(chunk) and _write_all(key.data, chunk)
                    if chunk:
                        tail.add(chunk)
                        copy.wrote(key.data, chunk, now)
                        last_output = now
                        reported_idle = False
                    if not written:  # end of the stream, or nobody reads ours: the child's writes now fail
                        output_closed |= bool(chunk)
                        copy.closed(key.data)
                        selector.unregister(key.fd)
                        alone[key.data].close()
                        os.close(key.fd)
            returncode = child.wait()
    except BaseException:  # whatever stops us must not leave the command, or what it started, running unwatched
        child.abort()
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for key in list(selector.get_map().values()):
            alone[key.data].close()
            os.close(key.fd)
        selector.close()
    return RunOutcome(returncode, tail.text(), output_closed, copy.mid_line(stderr_fd))


def _write_all(fd: int, data: bytes) -> bool:
    """Write everything; False when the reader has gone (EPIPE). Other write errors (a full disk,
    `2>/dev/full`) drop this piece and keep the command running, as its own write would not stop it."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BrokenPipeError:
            return False
        except OSError:
            return True
        view = view[written:]
    return True
