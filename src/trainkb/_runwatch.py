"""Run a training command with its output passed through untouched, keeping a tail to diagnose.

Output is copied byte for byte as it arrives (no line buffering added, so `\\r` progress bars keep
working). Where our stdout and stderr are one file (the same device and inode: a terminal, `2>&1`,
`|&`), the command gets one channel for both, so what it writes to the two streams arrives in the
order it wrote it, as it would without `kb run`; where they differ, each stream gets a channel of
its own, so streams the user split stay split. A channel is a pseudo-terminal where its target is
a terminal (output processing off, so bytes still pass unchanged): `isatty()` is true, and
colours, tqdm and line buffering behave as they do without `kb run`. Elsewhere it is a pipe; one
that carries both streams is widened to SHARED_PIPE_BYTES, because Linux lets another write into a
pipe in the middle of a write only once the pipe is full (fs/pipe.c, pipe_write), so a line
written in one call up to that size is not cut by the other stream while we keep up. When the
reader of our output goes away (`kb run -- yes | head -1`), the child's pipe is closed too, so it
gets SIGPIPE/EPIPE as it would have. Signals are passed on to the child's process group: Ctrl-C,
SIGTERM, SIGHUP, SIGQUIT, SIGUSR1/SIGUSR2 (batch schedulers' pre-emption warnings), terminal
resizes, and Ctrl-Z/`fg` (the job stops and resumes with us).

kb returns when the command exits, as a shell does, after copying what was already written:
a background job the command leaves holding the output (`sleep 60 &`) does not keep it waiting.
Such a job's later output goes on through a relay process, which copies it as long as the job
holds the output, as if the job wrote to kb's stdout and stderr itself.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import selectors
import signal
import sys
import termios
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._runguard import FORWARDED, NUDGE_EVERY, start
from ._tail import RUN_TAIL_BYTES

__all__ = ["RunOutcome", "Tail", "watch"]

SHARED_PIPE_BYTES = 1 << 20  # a pipe carrying both streams: a write up to this size lands whole (Linux's default cap)
LAST_WORDS = 1 << 16  # after a failed write to a file both streams share: what is dropped before the channel closes
# Once the command has exited: a pseudo-terminal passes on its last bytes a moment later, and a
# background job may hold the output open; a quiet spell this long ends the copy, as does the limit.
DRAIN_QUIET = 0.05
DRAIN_LIMIT = 1.0

_FORWARDED = (*FORWARDED, signal.SIGCONT)
_HANDLED = (*_FORWARDED, signal.SIGWINCH, signal.SIGTSTP)  # what `_forwarding` installs a handler for


class Tail:
    """The last ``limit`` bytes seen on either stream, in arrival order."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self.dropped = 0  # bytes seen and let go: the tail is not the whole output
        self.dropped_lines = 0  # line ends among them: the tail's first line is line dropped_lines + 1

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size > self.limit and self._chunks:
            excess = self._size - self.limit
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                self._size -= len(first)
                self.dropped += len(first)
                self.dropped_lines += first.count(b"\n")
            else:
                self._chunks[0] = first[excess:]
                self._size -= excess
                self.dropped += excess
                self.dropped_lines += first.count(b"\n", 0, excess)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")


@dataclass
class RunOutcome:
    returncode: int
    tail: str
    output_closed: bool = False  # our reader went away (a closed pipe) before the command ended
    mid_line: bool = False  # our stderr's last line is unfinished: print a line end before adding to it
    write_error: str | None = None  # why the command's stdout could not be written (a full disk), if so
    guard_death: str | None = None  # how kb's guard died before the command ended (kb then killed them all)
    interrupted: bool = False  # kb was sent SIGINT (Ctrl-C) while the command ran, and passed it on
    dropped: int = 0  # bytes of output before ``tail``, not kept (--tail-bytes)
    dropped_lines: int = 0  # line ends among them: ``tail`` starts on line dropped_lines + 1 of the output

    @property
    def exit_status(self) -> int:
        """What a shell would report: 128+N for a child killed by signal N."""
        return 128 - self.returncode if self.returncode < 0 else self.returncode


def _channel(target_fd: int, shared: bool) -> tuple[int, int]:
    """(read end for us, write end for the child): a pseudo-terminal if ``target_fd`` is one, else a
    pipe, widened where it carries both streams (``shared``)."""
    if not os.isatty(target_fd):
        ours, theirs = os.pipe()
        if shared:
            _widen(theirs)
        return ours, theirs
    ours, theirs = pty.openpty()
    attrs = termios.tcgetattr(theirs)
    attrs[1] &= ~termios.OPOST  # no "\n" -> "\r\n": the real terminal does that once, on our write
    termios.tcsetattr(theirs, termios.TCSANOW, attrs)
    _copy_size(target_fd, theirs)
    return ours, theirs


def _widen(pipe_fd: int) -> None:
    """Room for a long line in one write, so the other stream's writes wait until it is in. Where the
    system refuses (a lower cap, the user's pipe quota spent), the pipe keeps its size: lines still
    arrive in order, and whole up to that size."""
    if sys.platform == "linux":
        with contextlib.suppress(OSError):
            fcntl.fcntl(pipe_fd, fcntl.F_SETPIPE_SZ, SHARED_PIPE_BYTES)


def _copy_size(source: int, pty_fd: int) -> None:
    with contextlib.suppress(OSError):
        fcntl.ioctl(pty_fd, termios.TIOCSWINSZ, fcntl.ioctl(source, termios.TIOCGWINSZ, b"\0" * 8))


def _same_file(a: int, b: int) -> bool:
    """Whether two of our descriptors write to one place (a terminal, `2>&1`, `|&`), where the order of
    their lines shows."""
    try:
        return os.path.samestat(os.fstat(a), os.fstat(b))
    except OSError:
        return False


class _Lines:
    """Whether the output shown last ends inside a line, so that kb's own text starts on a line of its own."""

    def __init__(self, shared: bool) -> None:
        self.shared = shared  # one channel carries both streams: what it showed last is what either ends on
        self.open: dict[int, bool] = {}  # target -> whether its last byte shown is not a line end
        self.last_target: int | None = None

    def wrote(self, target: int, chunk: bytes) -> None:
        if chunk:
            self.open[target] = not chunk.endswith(b"\n")
            self.last_target = target

    def mid_line(self, target: int) -> bool:
        """Whether text written to ``target`` now would land inside a line already shown."""
        last = self.last_target if self.shared else target
        return last is not None and self.open.get(last, False)


@contextlib.contextmanager
def _forwarding(pgid: int, terminals: list[tuple[int, int]], passed: set[int]) -> Iterator[None]:
    """Pass signals on to the child's group while the command runs, noting each in ``passed``; restore ours after."""

    def send(signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)

    def forward(signum: int, _frame: object) -> None:
        passed.add(signum)
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


class _Streams:
    """Our ends of the command's output channels, each copied to its target as it arrives."""

    def __init__(
        self, readers: dict[int, int], tail: Tail, lines: _Lines, on_stop: Callable[[int], object], stdout: int = 1
    ) -> None:
        self.readers = readers  # target fd -> our read end, while the stream is open
        self.stdout = stdout  # the target whose write errors end the copy (on stderr they are dropped)
        self.write_error: str | None = None  # why the command's stdout could not be written, if it could not
        self.on_stop = on_stop  # called with a read end before it is closed
        self.tail = tail
        self.lines = lines
        self.output_closed = False
        self.dropping: dict[int, int] = {}  # target -> bytes still dropped before its channel closes

    def read(self, target: int, size: int = 65536) -> int:
        """One read from ``target``'s channel, shown at once: how many bytes came (0 at its end)."""
        try:
            chunk = os.read(self.readers[target], size)
        except OSError:  # EIO: every holder of a pseudo-terminal's other end has closed it
            chunk = b""
        if not chunk:
            self.stop(target)
            return 0
        self.tail.add(chunk)
        self.show(target, chunk)
        return len(chunk)

    def show(self, target: int, data: bytes) -> None:
        if target in self.dropping:
            self.dropping[target] -= len(data)
            if self.dropping[target] <= 0:
                self.output_closed = True
                self.stop(target)
            return
        error = _write_all(target, data)
        if error is None:
            self.lines.wrote(target, data)
            return
        if not isinstance(error, BrokenPipeError):
            if target != self.stdout:  # a full or broken stderr: dropped, as most commands ignore such errors
                self.lines.wrote(target, data)
                return
            # A full disk or a file size limit: the command's output is being lost, so stop passing it on
            # (its next write gets EPIPE/SIGPIPE, as a shell pipeline's writer would) and say so. Where
            # stderr shares the channel, LAST_WORDS more are dropped first: the error line a command prints
            # on its way out must not cost it a SIGPIPE, while one that keeps writing (`yes`) is stopped.
            self.write_error = error.strerror or str(error)
            if self.lines.shared:
                self.dropping[target] = LAST_WORDS
                return
        self.output_closed = True  # nobody reads ours: the command's writes now fail, as without kb
        self.stop(target)

    def stop(self, target: int) -> None:
        fd = self.readers.pop(target, None)
        if fd is not None:
            self.on_stop(fd)
            os.close(fd)

    def drain(self) -> None:
        """Copy what the command wrote before it exited. A stream ends at its end (the usual case: no one
        else holds it) or after DRAIN_QUIET without data; a job left writing keeps kb DRAIN_LIMIT at most."""
        deadline = time.monotonic() + DRAIN_LIMIT
        while self.readers and (now := time.monotonic()) < deadline:
            targets = {fd: target for target, fd in self.readers.items()}
            ready = select.select(list(targets), [], [], min(DRAIN_QUIET, deadline - now))[0]
            if not ready:
                break
            for fd in ready:
                if fd in targets and targets[fd] in self.readers:
                    self.read(targets[fd])

    def close(self) -> None:
        for target in list(self.readers):
            self.stop(target)


def watch(
    cmd: Sequence[str],
    tail_bytes: int = RUN_TAIL_BYTES,
    idle_timeout: float | None = None,
    on_idle: Callable[[str, float, int, int], None] | None = None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
) -> RunOutcome:
    """Run ``cmd`` until it exits, copying its output through; call ``on_idle`` after silences.

    ``on_idle`` is called with our stderr at the start of a line, so what it prints stands on its own.
    """
    _open_standard_streams()
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # a piped Python child would otherwise block-buffer
    shared = _same_file(stdout_fd, stderr_fd)
    targets = (stdout_fd,) if shared else (stdout_fd, stderr_fd)  # one file: one channel, in the command's order
    channels = {target: _channel(target, shared) for target in targets}
    # Held back from the start of the command until the handlers that pass them on are in place: a
    # Ctrl-Z or SIGTERM in between would otherwise stop or end kb alone and leave the command running.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED)
    try:
        child = start(
            cmd,
            channels[stdout_fd][1],
            channels[targets[-1]][1],
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
    lines = _Lines(shared)
    selector = selectors.DefaultSelector()
    streams = _Streams(
        {target: ours for target, (ours, _) in channels.items()},
        Tail(tail_bytes),
        lines,
        selector.unregister,
        stdout_fd,
    )
    for target, ours in streams.readers.items():
        selector.register(ours, selectors.EVENT_READ, target)
    if child.exit_fd is not None:  # readable once the command has exited
        selector.register(child.exit_fd, selectors.EVENT_READ, None)
    last_output = time.monotonic()
    reported_idle = False
    passed: set[int] = set()
    try:
        with _forwarding(child.pid, terminals, passed):
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # what came meanwhile is passed on now
            while streams.readers:
                now = time.monotonic()
                waits = [] if idle_timeout is None or reported_idle else [idle_timeout - (now - last_output)]
                waits.append(NUDGE_EVERY)  # the command may have stopped the guard: keep it going
                events = selector.select(max(0.01, min(waits)))
                child.nudge()
                now = time.monotonic()
                if not events:
                    if idle_timeout is not None and not reported_idle and now - last_output >= idle_timeout:
                        if on_idle is not None:
                            if lines.mid_line(stderr_fd):
                                _write_all(stderr_fd, b"\n")
                            on_idle(
                                streams.tail.text(), now - last_output, streams.tail.dropped, streams.tail.dropped_lines
                            )
                        reported_idle = True
                    continue
                for key, _ in events:
                    if key.data in streams.readers and streams.read(key.data):
                        last_output = now
                        reported_idle = False
                if any(key.data is None for key, _ in events):
                    streams.drain()
                    break
            returncode = child.wait()
            if child.guard_death is not None:  # everything that held the output is dead: copy what is left
                streams.drain()
            elif streams.readers:  # a job the command left still holds its output: keep passing it on
                _relay(streams.readers)
    except BaseException:  # whatever stops us must not leave the command, or what it started, running unwatched
        child.abort()
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        streams.close()
        selector.close()
    return RunOutcome(
        returncode,
        streams.tail.text(),
        streams.output_closed,
        lines.mid_line(stderr_fd),
        streams.write_error,
        child.guard_death,
        signal.SIGINT in passed,
        streams.tail.dropped,
        streams.tail.dropped_lines,
    )


def _write_all(fd: int, data: bytes) -> OSError | None:
    """Write everything; the error that stopped it (EPIPE: the reader has gone; ENOSPC, EFBIG…), if any."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:  # a descriptor shared with something that made it non-blocking: wait, not drop
            select.select([], [fd], [])
            continue
        except OSError as exc:
            return exc
        view = view[written:]
    return None


def _relay(readers: dict[int, int]) -> None:
    """Hand the streams still open to a process of their own, which copies them to their targets until
        every writer has closed them. It runs in a session of its own, as the job does, so a Ctrl-C meant
        for the next command spares it; when a target's reader goes away, the stream is closed, so the job
        gets SIGPIPE/EPIPE as it would without kb. Twice forked: nothing is left for kb to reap. Where no
    process can be made, the streams close with kb, as they would if the job's writes had failed."""
    try:
        pid = os.fork()
    except OSError:
        return
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                _copy_until_closed(readers)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def _copy_until_closed(readers: dict[int, int]) -> None:
    for signum in _HANDLED:  # kb's handlers would signal a group that is not ours
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())
    keep = {*readers, *readers.values()}
    for name in os.listdir("/proc/self/fd") if os.path.isdir("/proc/self/fd") else []:
        if int(name) not in keep:
            with contextlib.suppress(OSError):
                os.close(int(name))
    open_streams = {fd: target for target, fd in readers.items()}
    while open_streams:
        for fd in select.select(list(open_streams), [], [])[0]:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: a pseudo-terminal none of whose holders is left
                chunk = b""
            if not chunk or _write_all(open_streams[fd], chunk) is not None:
                del open_streams[fd]
                os.close(fd)
