"""The guard between `kb run` and its command, so that nothing the command starts outlives kb.

A parent-death signal reaches only the process it is set on: `kb run -- bash train.sh` or
`kb run -- torchrun …` killed by SIGKILL would take the shell or torchrun along and leave their
children running. So on Linux `kb run` forks a guard first. The guard leads a session of its
own (the command runs in its process group, where kb sends the signals it passes on) and is a
child subreaper: a process the command leaves behind, even one in a new session (torchrun's
workers), is re-parented to the guard when its parent dies. The guard tells kb how the command
ended, then waits until kb lets it go. If kb dies first (even by SIGKILL), or gives up on the
command, kb's end of the lifeline pipe closes and the guard kills every descendant it has; its
parent-death signal is SIGCONT, so a job stopped by Ctrl-Z is woken to be cleaned up too.

The command can reach its guard (it is the command's parent). A guard stopped by SIGSTOP would
never report the exit, so kb sends it SIGCONT every second while it waits. A guard killed outright
leaves its descendants to the nearest subreaper, so kb is one itself while the guard lives: they
come to kb, which kills them all and says that the guard died.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

__all__ = ["FORWARDED", "NUDGE_EVERY", "GuardedJob", "Job", "how_it_ended", "start"]

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37
NUDGE_EVERY = 1.0  # seconds between the SIGCONTs that keep a stopped guard going
_RELEASE = b"done"  # kb's word that the command ended and was reported: leave what it left alone
# The signals `kb run` passes on to the command's process group (`_runwatch` adds SIGCONT).
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
# What reaches the group, from kb or from the command itself (`kill -s ALRM 0`): for the command, not the guard.
_PASSED_ON = (*FORWARDED, signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF)


def _prctl(option: int, value: int) -> None:
    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _subreaper() -> bool:
    """Whether this process is a child subreaper already (a `kb run` inside another keeps being one)."""
    value = ctypes.c_int(0)
    ctypes.CDLL(None, use_errno=True).prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0)
    return bool(value.value)


def _die_with(parent: int) -> Callable[[], None]:
    """In the command before exec: SIGKILL when the guard dies."""

    def arm() -> None:
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the guard died before the line above
            os._exit(137)

    return arm


def _popen(cmd: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
    """Start ``cmd``; a text file without a `#!` line is run by /bin/sh, as execvp and a shell do
    (POSIX: ENOEXEC falls back to the shell). A binary for another machine keeps its error, as in bash."""
    try:
        return subprocess.Popen(list(cmd), **options)
    except OSError as exc:
        if exc.errno != errno.ENOEXEC:
            raise
        path = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0])
        try:
            with open(path or cmd[0], "rb") as handle:
                first_line = handle.read(256).split(b"\n", 1)[0]
        except OSError:
            first_line = b"\0"
        if path is None or b"\0" in first_line:
            raise
        return subprocess.Popen(["/bin/sh", path, *cmd[1:]], **options)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
    return found


def _kill_descendants(spare: Collection[int] = ()) -> None:
    """SIGKILL every process below this one until none is left (those whose parents die come to us, a
    subreaper): the guard's, or, once the guard is gone, what it left to kb. The children in ``spare``
    (kb's own before the guard, in a program that runs the guard in-process) and theirs are left be."""
    me = os.getpid()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        ours = [pid for pid in _children(me) if pid not in spare]
        if not ours:
            return
        stack, seen = list(ours), set()
        while stack:
            pid = stack.pop()
            if pid not in seen:
                seen.add(pid)
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
                stack.extend(_children(pid))
        for pid in ours:  # each by its pid: a spared child's status stays its owner's to collect
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, os.WNOHANG)
        time.sleep(0.01)


def _read_line(fd: int) -> bytes:
    """One line from the guard's report pipe (b"" if the guard is gone)."""
    data = b""
    while not data.endswith(b"\n"):
        piece = os.read(fd, 1)
        if not piece:
            break
        data += piece
    return data


def _wait_for(pid: int, life: int) -> int | None:
    """The command's wait status, or None when kb's end of the lifeline closed first. Processes
    re-parented to the guard are reaped on the way, so a long job's leftovers do not pile up."""
    try:
        pidfd: int | None = os.pidfd_open(pid)
    except (AttributeError, OSError):  # before Linux 5.3: look every tenth of a second
        pidfd = None
    watched = [life] if pidfd is None else [life, pidfd]
    while True:
        ready, _, _ = select.select(watched, [], [], 0.1 if pidfd is None else 1.0)
        with contextlib.suppress(ChildProcessError):
            while True:
                done, status = os.waitpid(-1, os.WNOHANG)
                if done == pid:
                    return status
                if not done:
                    break
        if life in ready:
            return None


def _guard(cmd: Sequence[str], out: int, err: int, env: Mapping[str, str], life: int, report: int) -> None:
    os.setsid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGCONT)  # kb killed while the job is stopped (Ctrl-Z): wake to clean up
    for signum in _PASSED_ON:  # a handler, not SIG_IGN: the command gets the default back at exec,
        if signal.getsignal(signum) != signal.SIG_IGN:  # and what kb was started ignoring (nohup, `&`) stays ignored
            signal.signal(signum, lambda *_: None)
    try:
        command = _popen(cmd, stdout=out, stderr=err, env=env, preexec_fn=_die_with(os.getpid()))
    except OSError as exc:
        os.write(report, f"E {exc.errno or 0}\n".encode())
        return
    os.write(report, b"S\n")
    for fd in {out, err}:  # one descriptor where both streams share a channel
        os.close(fd)
    status = _wait_for(command.pid, life)
    if status is None:
        _kill_descendants()
        return
    os.write(report, f"X {status}\n".encode())
    word = b""
    while piece := os.read(life, 64):
        word += piece
    if word != _RELEASE:  # kb died or gave up before it had copied the command's output: take its leftovers along
        _kill_descendants()


def how_it_ended(code: int) -> str:
    """A return code as subprocess gives it (-N for signal N) in words: "was killed by signal 9 (SIGKILL)",
    "exited with status 70"."""
    if code >= 0:
        return f"exited with status {code}"
    name = signal.Signals(-code).name if -code in signal.valid_signals() else "?"
    return f"was killed by signal {-code} ({name})"


class GuardedJob:
    """The command of `kb run`, started behind a guard; ``pid`` is the process group to signal."""

    def __init__(
        self,
        cmd: Sequence[str],
        out: int,
        err: int,
        env: Mapping[str, str],
        close: Sequence[int],
        mask: Iterable[int] = (),
    ) -> None:
        """Start ``cmd`` with ``out``/``err`` as its stdout/stderr; ``close`` are kb's own ends, which
        the guard must not hold (a reader that goes away must reach the command as EPIPE); ``mask``
        the guard's and the command's blocked signals. OSError when the command cannot be started,
        as from subprocess."""
        self.guard_death: str | None = None  # how the guard died before it reported the command's end
        life_r, self._life = os.pipe()
        self._report, report_w = os.pipe()
        self._spare = frozenset(_children(os.getpid()))
        self._was_subreaper = _subreaper()
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # what the guard leaves behind if it is killed comes to kb
        self._last_nudge = time.monotonic()
        self.pid = os.fork()
        if self.pid == 0:  # the guard: never returns
            code = 0
            try:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                for fd in (*close, self._life, self._report):
                    os.close(fd)
                _guard(cmd, out, err, env, life_r, report_w)
            except BaseException:
                code = 70
                with contextlib.suppress(BaseException):
                    _kill_descendants()
            finally:
                os._exit(code)
        os.close(life_r)
        os.close(report_w)
        self._status: int | None = None
        started = self._report_line()  # the command may stop the guard before it says "started"
        self.exit_fd: int | None = self._report  # readable once the command has exited (or the guard died)
        if not started.startswith(b"S"):
            self._close()
            _, guard_status = os.waitpid(self.pid, 0)
            if os.WIFSIGNALED(guard_status) and not started:  # killed by the command it had just started
                self.exit_fd = None
                self._status = self._lost(guard_status)
                return
            self._unreap()
            number = int(started.split()[1]) if started.startswith(b"E ") else 0
            raise OSError(number, os.strerror(number) if number else "the command could not be started", cmd[0])

    def _unreap(self) -> None:
        """Stop being a subreaper once the guard is gone: later orphans (the relay's) are not kb's."""
        if not self._was_subreaper:
            _prctl(_PR_SET_CHILD_SUBREAPER, 0)

    def nudge(self) -> None:
        """SIGCONT to the guard, at most once a second: the command may have stopped it (SIGSTOP)."""
        now = time.monotonic()
        if self._status is None and now - self._last_nudge >= NUDGE_EVERY:
            self._last_nudge = now
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGCONT)

    def _report_line(self) -> bytes:
        """The guard's report of the command's end (b"" if the guard died first), nudging it meanwhile."""
        while not select.select([self._report], [], [], NUDGE_EVERY)[0]:
            self.nudge()
        return _read_line(self._report)

    def _close(self) -> None:
        for fd in (self._life, self._report):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._life = self._report = -1

    def wait(self) -> int:
        """The command's return code as subprocess gives it (-N for signal N); lets the guard go. If the
        guard died before it reported, kb kills what it left (its descendants came to kb) and sets
        ``guard_death``; the return code is then -SIGKILL, the signal that ended the command."""
        if self._status is None:
            line = self._report_line()
            if line.startswith(b"X "):
                self._unreap()  # before the guard goes: what the command leaves running is not kb's
                with contextlib.suppress(OSError):
                    os.write(self._life, _RELEASE)
            self._close()
            _, guard_status = os.waitpid(self.pid, 0)
            if line.startswith(b"X "):
                self._status = int(line.split()[1])
            else:
                self._status = self._lost(guard_status)
        return os.waitstatus_to_exitcode(self._status)

    def _lost(self, guard_status: int) -> int:
        """The guard died before it reported the command's end: kill what it left (it came to kb, the
        subreaper) and say how it died. The command's wait status is then SIGKILL's, which ended it."""
        _kill_descendants(self._spare)
        self._unreap()
        self.guard_death = how_it_ended(os.waitstatus_to_exitcode(guard_status))
        return signal.SIGKILL

    def abort(self) -> None:
        """Kill the command and everything it started, now."""
        if self._status is not None:
            return
        self._close()  # the guard sees the lifeline close and kills every descendant
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._status = status
                break
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGCONT)  # a stopped guard cannot clean up
            time.sleep(0.01)
        else:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            self._status = os.waitpid(self.pid, 0)[1]
        _kill_descendants(self._spare)  # a guard killed before it cleaned up left its descendants to kb
        self._unreap()


class Job(Protocol):
    pid: int
    exit_fd: int | None  # readable once the command has exited; None: its output's end is the only sign
    guard_death: str | None  # set by wait() when the guard died before the command's end was known

    def nudge(self) -> None: ...

    def wait(self) -> int: ...

    def abort(self) -> None: ...


class _PlainJob:
    """Elsewhere than Linux (no subreaper, no parent-death signal): the command in a session of its own."""

    def __init__(self, cmd: Sequence[str], out: int, err: int, env: Mapping[str, str], mask: Iterable[int]) -> None:
        blocked = set(mask)
        self._process = _popen(
            cmd,
            stdout=out,
            stderr=err,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_SETMASK, blocked),
        )
        self.pid = self._process.pid
        self.exit_fd: int | None = None
        self.guard_death: str | None = None  # no guard here

    def nudge(self) -> None:
        """Nothing to keep going: there is no guard."""

    def wait(self) -> int:
        return self._process.wait()

    def abort(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        self._process.wait()


def start(
    cmd: Sequence[str], out: int, err: int, env: Mapping[str, str], close: Sequence[int], mask: Iterable[int] = ()
) -> Job:
    """The command started with ``out``/``err`` as its stdout/stderr (see GuardedJob for ``close``) and
    ``mask`` as its blocked signals: kb holds back the signals it passes on until it can pass them on."""
    if sys.platform == "linux":
        return GuardedJob(cmd, out, err, env, close, mask)
    return _PlainJob(cmd, out, err, env, mask)
