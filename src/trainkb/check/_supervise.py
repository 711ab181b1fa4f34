"""The per-check supervisor: the parent of the snippet, and the reaper of whatever it starts.

The forkserver forks one supervisor per check process. The supervisor makes itself a child
subreaper, so a process the snippet starts in a new session (``os.setsid()``, torchrun's
workers) is re-parented to it instead of to init when its own parent dies; when the snippet
ends, or `kb check` asks (SIGTERM), or the forkserver dies because `kb check` was SIGKILLed
(parent-death signal), it kills every descendant, removes the check's folder if nobody else
will, and reports the snippet's wait status on the result pipe. The parent-death signal is
SIGCONT: a supervisor its snippet stopped (SIGSTOP) acts on no other signal, and when kb's whole
process group is killed, forkserver included, nobody else is left to wake it. The snippet gets SIGKILL as
its own parent-death signal, so killing the supervisor takes the snippet with it and leaves
the forkserver, and every other check, untouched.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pickle
import shutil
import signal
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

from ._spec import SnippetSpec

__all__ = ["INTERRUPTED_KEY", "SIGNALLED_KEY", "STATUS_KEY", "supervise"]

STATUS_KEY = "supervisor_wait_status"
INTERRUPTED_KEY = "stopped_from_outside"  # the check was cut short by kb or the forkserver's death
SIGNALLED_KEY = "stopped_by_signal"  # a signal kb never sends (SIGINT, SIGHUP) stopped the check as it ran
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_HANDLED = (*_STOP_SIGNALS, signal.SIGCONT)
# kb asks a supervisor to stop with SIGTERM; in a session of its own it gets no terminal's SIGINT or
# SIGHUP, so one of those while the snippet runs came from inside the check, or from a user.
_NOT_KBS = (signal.SIGHUP, signal.SIGINT)


class _Stop(Exception):
    """Raised from a signal handler: kill the snippet now."""


def _prctl(option: int, value: int) -> None:
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _children() -> list[int]:
    """This process's live children (orphans adopted as subreaper included)."""
    pid = os.getpid()
    try:
        text = open(f"/proc/{pid}/task/{pid}/children").read()  # noqa: SIM115
        return [int(p) for p in text.split()]
    except OSError:  # kernel without CONFIG_PROC_CHILDREN: scan every process's parent
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError, IndexError):
                    stat = open(f"/proc/{entry}/stat", "rb").read()  # noqa: SIM115
                    if int(stat.rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
        return found


def _reap_all(deadline: float) -> None:
    """SIGKILL every descendant until none is left; each kill re-parents the next level to us."""
    while time.monotonic() < deadline:
        try:
            if os.waitpid(-1, os.WNOHANG) != (0, 0):
                continue  # reaped one; look again
        except ChildProcessError:
            return
        for pid in _children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.001)


def _raise_stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def _stop_if_orphaned(parent: int) -> Callable[[int, object], None]:
    """SIGCONT handler: the forkserver's death ends the check; a SIGCONT from anyone else does nothing."""

    def handler(_signum: int, _frame: object) -> None:
        if os.getppid() != parent:
            raise _Stop

    return handler


def _pass_on(feed: int, spec: SnippetSpec) -> None:
    data = pickle.dumps(spec)
    while data:
        data = data[os.write(feed, data) :]
    os.close(feed)


def _await_spec(feed: int) -> SnippetSpec:
    """In the snippet process: block until the supervisor passes on the check to run."""
    with os.fdopen(feed, "rb") as stream:
        try:
            spec: SnippetSpec = pickle.load(stream)
            return spec
        except EOFError:  # the supervisor was stopped before a check came
            os._exit(0)


def supervise(control: Connection, result: Connection, stdout: Connection, stderr: Connection) -> None:
    """Process target: fork the snippet process, hand it the check `kb check` sends, wait, clean up.

    Both processes exist before the check is known (`kb check` keeps one spare per job), so
    the two forks of a torch-sized process are not on any check's critical path.
    """
    parent = os.getppid()
    for signum in _STOP_SIGNALS:
        signal.signal(signum, _raise_stop)
    signal.signal(signal.SIGCONT, _stop_if_orphaned(parent))
    status: int | None = None
    stopped = False
    signalled = None
    running = False  # the snippet has its check
    owner_dir = None
    try:
        _prctl(_PR_SET_CHILD_SUBREAPER, 1)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGCONT)  # resumes a stopped supervisor, then ends the check
        if os.getppid() != parent:  # the forkserver died before the line above
            raise _Stop
        os.setsid()  # our own group: `kb check` can still kill it whole as a last resort
        me = os.getpid()
        feed_r, feed_w = os.pipe()
        # No _Stop inside fork's at-fork hooks (it would be printed and swallowed there).
        signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED)
        child = os.fork()
        if child == 0:
            for signum in _HANDLED:
                signal.signal(signum, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _HANDLED)
            _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
            if os.getppid() != me:
                os._exit(1)
            os.close(feed_w)
            control.close()
            spec = _await_spec(feed_r)
            from ._child import run_snippet

            run_snippet(spec, result, stdout, stderr)  # never returns
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _HANDLED)
        os.close(feed_r)
        stdout.close()
        stderr.close()
        try:
            spec = control.recv()
        except (EOFError, OSError):  # `kb check` closed the slot unused
            raise _Stop from None
        control.close()
        owner_dir = spec.get("owner_dir")
        _pass_on(feed_w, spec)
        running = True
        while status is None:
            pid, wait_status = os.waitpid(-1, 0)  # adopted orphans are reaped here too
            if pid == child:
                status = wait_status
    except _Stop as stop:
        stopped = True
        if stop.args and stop.args[0] in _NOT_KBS and running and os.getppid() == parent:
            signalled = stop.args[0]
    finally:
        for signum in _HANDLED:
            signal.signal(signum, signal.SIG_IGN)  # SIGCONT still resumes: the kernel does that
        _reap_all(time.monotonic() + 10)
        if os.getppid() != parent and owner_dir:  # `kb check` is gone: nobody else will
            shutil.rmtree(owner_dir, ignore_errors=True)
    with contextlib.suppress(OSError):
        result.send(
            {
                STATUS_KEY: status,
                INTERRUPTED_KEY: stopped and status is None and signalled is None,
                SIGNALLED_KEY: signalled,
            }
        )
    os._exit(0)
