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
write. The other stream is still read meanwhile and kept in memory, so the command never
blocks on it. A line left open for LINE_PATIENCE (a prompt, `print(..., end="")`), one that
keeps growing for LINE_HOLD_LIMIT (heartbeat dots), or one that has HELD_BYTES of the other
stream waiting stops holding it back; a progress bar redrawn with `\\r` never holds it.

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
import termios
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._runguard import FORWARDED, NUDGE_EVERY, start
from ._tail import RUN_TAIL_BYTES

__all__ = ["RunOutcome", "Tail", "watch"]

LINE_PATIENCE = 1.0  # seconds an unfinished line of one stream may keep the other stream's output waiting
LINE_HOLD_LIMIT = 5.0  # seconds one unfinished line may hold the other stream back, however it keeps coming
HELD_BYTES = 1 << 20  # what the other stream may have waiting in memory meanwhile
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
    write_error: str | None = None  # why the command's stdout could not be written (a full disk), if so
    guard_death: str | None = None  # how kb's guard died before the command ended (kb then killed them all)
    interrupted: bool = False  # kb was sent SIGINT (Ctrl-C) while the command ran, and passed it on

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
        self.let_go: set[int] = set()  # streams whose current line no longer holds the other back
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
            self.let_go.discard(target)
        self.state[target] = state
        self.last_data[target] = now
        self.last_target = target

    def closed(self, target: int) -> None:
        self.open.discard(target)

    def holding(self, now: float) -> int | None:
        """The stream whose unfinished line keeps the other waiting: only where both share one place,
        only while that line keeps coming (a prompt or `print(..., end="")` lets go after a pause),
        and for LINE_HOLD_LIMIT at most (heartbeat dots would otherwise hold it for ever)."""
        if not self.shared:
            return None
        open_lines = [
            t
            for t, state in self.state.items()
            if t in self.open
            and t not in self.let_go
            and state == self.PLAIN
            and now - self.last_data[t] < LINE_PATIENCE
            and now - self.opened[t] < LINE_HOLD_LIMIT
        ]
        return min(open_lines, key=lambda t: self.opened[t]) if open_lines else None

    def hold_ends(self, target: int) -> float:
        """When ``target``'s line stops holding the other stream if nothing more comes."""
        return min(self.last_data[target] + LINE_PATIENCE, self.opened[target] + LINE_HOLD_LIMIT)

    def mid_line(self, target: int) -> bool:
        """Whether text written to ``target`` now would land inside a line already shown."""
        last = self.last_target if self.shared else target
        return last is not None and self.state[last] != self.START


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
    """Our ends of the command's stdout and stderr, copied to ``targets`` as the line rule allows."""

    def __init__(
        self, readers: dict[int, int], tail: Tail, copy: _Copy, on_stop: Callable[[int], object], stdout: int = 1
    ) -> None:
        self.readers = readers  # target fd -> our read end, while the stream is open
        self.stdout = stdout  # the target whose write errors end the copy (on stderr they are dropped)
        self.write_error: str | None = None  # why the command's stdout could not be written, if it could not
        self.on_stop = on_stop  # called with a read end before it is closed
        self.tail = tail
        self.copy = copy
        self.held = {target: bytearray() for target in readers}  # read, waiting for the other's line
        self.gone: set[int] = set()  # targets whose reader went away (EPIPE)
        self.output_closed = False

    def read(self, target: int, now: float, size: int = 65536) -> int:
        """One read from ``target``'s stream: how many bytes came (0 at its end)."""
        try:
            chunk = os.read(self.readers[target], size)
        except OSError:  # EIO: every holder of a pseudo-terminal's other end has closed it
            chunk = b""
        if not chunk:
            self.stop(target)
            return 0
        self.tail.add(chunk)
        if self.copy.holding(now) in (None, target) and not self.held[target]:
            self.show(target, chunk, now)
            return len(chunk)
        self.held[target] += chunk
        holder = self.copy.holding(now)
        if holder is not None and holder != target and len(self.held[target]) >= HELD_BYTES:
            self.copy.let_go.add(holder)  # in memory up to a bound, never at the cost of blocking the command
        self.release(now)
        return len(chunk)

    def release(self, now: float, everything: bool = False) -> None:
        """Show what waited, for each stream that no other stream's line holds back now."""
        for target, waiting in self.held.items():
            if waiting and (everything or self.copy.holding(now) in (None, target)):
                data = bytes(waiting)
                waiting.clear()
                self.show(target, data, now)

    def show(self, target: int, data: bytes, now: float) -> None:
        if target in self.gone:
            return
        error = _write_all(target, data)
        if error is None:
            self.copy.wrote(target, data, now)
            return
        if not isinstance(error, BrokenPipeError):
            if target != self.stdout:  # a full or broken stderr: dropped, as most commands ignore such errors
                self.copy.wrote(target, data, now)
                return
            # A full disk or a file size limit: the command's output is being lost, so stop passing it on
            # (its next write gets EPIPE/SIGPIPE, as a shell pipeline's writer would) and say so.
            self.write_error = error.strerror or str(error)
        self.output_closed = True  # nobody reads ours: the command's writes now fail, as without kb
        self.gone.add(target)
        self.held[target].clear()
        self.stop(target)

    def stop(self, target: int) -> None:
        self.copy.closed(target)
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
                    self.read(targets[fd], now)
        self.release(time.monotonic(), everything=True)

    def close(self) -> None:
        for target in list(self.readers):
            self.stop(target)


def watch(
    cmd: Sequence[str],
    tail_bytes: int = RUN_TAIL_BYTES,
    idle_timeout: float | None = None,
    on_idle: Callable[[str, float], None] | None = None,
    stdout_fd: int = 1,
    stderr_fd: int = 2,
) -> RunOutcome:
    """Run ``cmd`` until it exits, copying its output through; call ``on_idle`` after silences.

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
    copy = _Copy(list(channels), _same_file(stdout_fd, stderr_fd))
    selector = selectors.DefaultSelector()
    streams = _Streams(
        {target: ours for target, (ours, _) in channels.items()}, Tail(tail_bytes), copy, selector.unregister, stdout_fd
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
                streams.release(now)
                holding = copy.holding(now)
                waits = [] if idle_timeout is None or reported_idle else [idle_timeout - (now - last_output)]
                if holding is not None and any(streams.held.values()):
                    waits.append(copy.hold_ends(holding) - now)
                waits.append(NUDGE_EVERY)  # the command may have stopped the guard: keep it going
                events = selector.select(max(0.01, min(waits)))
                child.nudge()
                now = time.monotonic()
                if not events:
                    if idle_timeout is not None and not reported_idle and now - last_output >= idle_timeout:
                        streams.release(now)
                        if on_idle is not None:
                            if copy.mid_line(stderr_fd):
                                _write_all(stderr_fd, b"\n")
                            on_idle(streams.tail.text(), now - last_output)
                        reported_idle = True
                    continue
                for key, _ in events:
                    if key.data in streams.readers and streams.read(key.data, now):
                        last_output = now
                        reported_idle = False
                if any(key.data is None for key, _ in events):
                    streams.drain()
                    break
            streams.release(time.monotonic(), everything=True)
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
        copy.mid_line(stderr_fd),
        streams.write_error,
        child.guard_death,
        signal.SIGINT in passed,
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
