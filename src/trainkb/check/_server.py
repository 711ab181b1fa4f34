"""kb's own forkserver: multiprocessing's protocol, reachable only through a socket kb holds.

multiprocessing's forkserver (Python < 3.14) listens on a path any process of the user can
connect to: a check that connected and sent nothing crashed it, and one that spoke its protocol
had it start processes kb never knew about. Here kb and the server share an unnamed socket pair
(nothing to connect to), the server starts with the checks' environment (never kb's own
variables), is a child subreaper that kills any process it adopts (what a check left when its
supervisor was killed), and exits when kb closes its end — or dies — and kb reaps it.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from multiprocessing.connection import wait
from multiprocessing.context import set_spawning_popen
from multiprocessing.process import BaseProcess
from typing import Any

from .._terminal import printable

__all__ = ["ForkServer", "ServerProcess", "ServerUnavailable"]

_MAX_FDS = 256
_PR_SET_CHILD_SUBREAPER = 36
# How long a running server may take to fork one child, its start (an import of torch, slow on a
# loaded machine) included: a server silent this long is stuck; a stopped one (SIGSTOP) is seen at once.
_ANSWER_SECONDS = 300.0
_POLL_SECONDS = 0.2
_LOG_NAME = "forkserver.log"  # in the run's folder: what the server printed before it died
# Made by kb alone: a check can put a FIFO (an open or read of it blocks) or a symlink (kb would fill
# the file it names) at that path first, so nothing already there is opened, and no link followed.
_LOG_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LOG_TAIL = 4096  # bytes of it an error quotes: a snippet can write there too (/proc/<pid>/fd/2)


class ServerUnavailable(RuntimeError):
    """The forkserver did not start a child: kb is shutting it down, or it stopped answering."""


def _is_stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, SIGTSTP) or held by a tracer: it cannot answer."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in (b"T", b"t")


class ForkServer:
    """Starts the server on first use (and again if it died); forks a child per request."""

    def __init__(self, preload: list[str], environ: dict[str, str], folder: str | None = None) -> None:
        self._preload = preload
        self._environ = environ
        self._folder = folder  # the run's folder, removed by the server if kb dies
        self._lock = threading.Lock()
        self._server: subprocess.Popen[bytes] | None = None
        self._socket: socket.socket | None = None
        self._closed = False
        self._log: int | None = None  # the server's stderr, held open: its path is never opened again

    @property
    def pid(self) -> int | None:
        return self._server.pid if self._server is not None else None

    def _ensure_running(self) -> socket.socket:
        if self._closed:
            raise ServerUnavailable("kb check is stopping: no new check process is started")
        if self._server is not None and self._socket is not None and self._server.poll() is None:
            return self._socket
        self._drop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        args = f"{theirs.fileno()}, {self._preload!r}, {sys.path!r}, {self._folder!r}"
        command = f"from trainkb.check._server import main; main({args})"
        log = self._open_log()
        try:
            self._server = subprocess.Popen(
                [spawn.get_executable(), *util._args_from_interpreter_flags(), "-c", command],  # type: ignore[attr-defined]
                pass_fds=[theirs.fileno()],
                env=self._environ,
                # Not kb's own stdout/stderr: a snippet reaches its supervisor's through /proc and
                # would write into kb's report; what a snippet prints comes through its own pipes.
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        return ours

    def _open_log(self) -> int:
        """The server's stderr: the run's log, made on the first start and emptied for each later server;
        nowhere when there is no folder or the path is taken (a check put something there first)."""
        if self._folder is None:
            return subprocess.DEVNULL
        if self._log is None:
            try:
                self._log = os.open(os.path.join(self._folder, _LOG_NAME), _LOG_FLAGS, 0o600)
            except OSError:
                return subprocess.DEVNULL
        with contextlib.suppress(OSError):  # appended to (O_APPEND): the next server writes from the start
            os.ftruncate(self._log, 0)
        return self._log

    def last_words(self) -> str:
        """The end of what the server printed (a traceback when it crashed), on one line; '' if nothing.

        Read from the file kb made and holds, never through the path a check can replace."""
        if self._log is None:
            return ""
        try:
            size = os.fstat(self._log).st_size
            tail = os.pread(self._log, _LOG_TAIL, max(0, size - _LOG_TAIL)).decode("utf-8", "replace")
        except OSError:
            return ""
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return printable(" | ".join(lines[-3:]), newlines=False)[-600:]

    def _unavailable(self, why: str, asked: subprocess.Popen[bytes] | None) -> ServerUnavailable:
        """The error for a server that is gone: with its exit status and its last words, when it had any."""
        if asked is not None and asked.poll() is not None:
            why += f" (exit status {asked.returncode})"
            words = self.last_words()
            if words:
                why += f"; it printed: {words}"
        return ServerUnavailable(why)

    def start_child(self, fds: list[int]) -> tuple[int, int, int]:
        """Have the server fork a child; return (status_r, data_w, pid).

        A server that a check stopped (SIGSTOP) or that is stuck never answers: it is killed (its
        supervisors end their checks, which `kb check` then runs once more) and one fresh server
        is asked instead, so no wait on it outlasts ``_ANSWER_SECONDS``.
        """
        for attempt in (1, 2):
            with self._lock:
                status_r, data_w = self._request(fds)
                asked = self._server
            try:
                return status_r, data_w, self._answer(status_r, asked)
            except ServerUnavailable:
                os.close(status_r)
                os.close(data_w)
                with self._lock:
                    if self._server is asked:
                        self._drop()
                if attempt == 2 or self._closed:
                    raise
        raise AssertionError("unreachable")

    def _answer(self, status_r: int, asked: subprocess.Popen[bytes] | None) -> int:
        """The pid the server sends once it forked, read without waiting on a server that cannot send it."""
        deadline = time.monotonic() + _ANSWER_SECONDS
        while not wait([status_r], _POLL_SECONDS):
            if self._closed:
                raise ServerUnavailable("kb check is stopping: no new check process is started")
            if asked is None or asked.poll() is not None or _is_stopped(asked.pid):
                raise self._unavailable("kb's forkserver was stopped or ended unexpectedly", asked)
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"kb's forkserver did not start a process within {_ANSWER_SECONDS:g} s")
        try:
            pid: int = forkserver.read_signed(status_r)
        except (EOFError, OSError) as exc:
            if asked is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    asked.wait(1.0)  # it closed the pipe as it died: its status and output are final
            raise self._unavailable(f"kb's forkserver ended before starting a process ({exc})", asked) from None
        return pid

    def _request(self, fds: list[int]) -> tuple[int, int]:
        """Ask for a child; return (status_r, data_w) as multiprocessing's forkserver does."""
        if len(fds) + 2 > _MAX_FDS:
            raise ValueError("too many fds")
        parent_r, child_w = os.pipe()
        child_r, parent_w = os.pipe()
        try:
            try:
                reduction.sendfds(self._ensure_running(), [child_r, child_w, *fds])
            except OSError:  # it died since we looked: one fresh server, one more try
                self._drop()
                reduction.sendfds(self._ensure_running(), [child_r, child_w, *fds])
        except BaseException:
            os.close(parent_r)
            os.close(parent_w)
            raise
        finally:
            os.close(child_r)
            os.close(child_w)
        return parent_r, parent_w

    def _drop(self, grace: float = 0.0) -> None:
        """Close our end (the server exits at EOF) and reap it; kill it if it lingers."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._server is not None:
            try:
                self._server.wait(grace)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
            self._server = None

    def refuse(self) -> None:
        """Start no more children: a wait for one ends now (kb is stopping)."""
        self._closed = True

    def stop(self, grace: float = 5.0) -> None:
        """Start nothing more; close the server (killed if it lingers, or was stopped) and reap it."""
        self.refuse()
        with self._lock:
            if self._server is not None and _is_stopped(self._server.pid):
                grace = 0.0
            self._drop(grace)
            if self._log is not None:
                os.close(self._log)
                self._log = None


def _wake_to_end(pid: int) -> None:
    """Have a stopped supervisor end its check: a stopped process acts on no signal but SIGKILL, so
    its parent-death SIGTERM waits; SIGTERM then SIGCONT lets it kill what it started and exit."""
    if _is_stopped(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)
            os.kill(pid, signal.SIGCONT)


class _Popen(popen_forkserver.Popen):
    """multiprocessing's forkserver Popen, talking to kb's server instead of the global one."""

    def poll(self, flag: int = os.WNOHANG) -> int | None:
        # The status pipe closes without a status when the server dies: its supervisor may still
        # live, stopped, and would outlive kb with its check's processes.
        code: int | None = super().poll(flag)
        if code == 255 and self.pid is not None:
            _wake_to_end(self.pid)
        return code

    def _launch(self, process_obj: Any) -> None:
        server: ForkServer = process_obj._kb_server
        prepared = process_obj._kb_prepare(process_obj._name)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prepared, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        # The pid first: the server sends it on forking, and a server that sends none is dealt with there.
        self.sentinel, w, self.pid = server.start_child(self._fds)  # type: ignore[attr-defined]
        parent_w = os.dup(w)  # the child sees its parent gone when this closes
        self.finalizer = util.Finalize(self, util.close_fds, (parent_w, self.sentinel))  # type: ignore[attr-defined]
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())


class ServerProcess(BaseProcess):
    """A process forked by a :class:`ForkServer`; ``prepare`` gives the preparation data."""

    _start_method = None  # the child keeps the platform's default (a check sets its own)

    def __init__(
        self, server: ForkServer, prepare: Callable[[str], dict[str, Any]], target: Any, args: tuple[Any, ...]
    ) -> None:
        super().__init__(target=target, args=args, daemon=False)
        self._kb_server = server
        self._kb_prepare = prepare

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_kb_server"], state["_kb_prepare"]
        return state

    @staticmethod
    def _Popen(process_obj: BaseProcess) -> _Popen:
        return _Popen(process_obj)


# ---------------------------------------------------------------- the server process


def _children() -> list[int]:
    pid = os.getpid()
    try:
        return [int(p) for p in open(f"/proc/{pid}/task/{pid}/children").read().split()]
    except OSError:
        return []


def _kill_adopted(forked: dict[int, int]) -> None:
    """SIGKILL every child that is not a supervisor we forked: an orphan of a killed supervisor."""
    for pid in _children():
        if pid not in forked:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _reap(forked: dict[int, int]) -> None:
    """Reap every exited child; tell kb the exit code of each supervisor."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        child_w = forked.pop(pid, None)
        if child_w is not None:
            with contextlib.suppress(OSError):
                forkserver.write_signed(child_w, os.waitstatus_to_exitcode(status))
            os.close(child_w)


def _serve_one(child_r: int, fds: list[int], unused: list[int], handlers: dict[signal.Signals, Any]) -> int:
    """In the forked child: forget the server, then run the process object kb sends."""
    signal.set_wakeup_fd(-1)
    for signum, handler in handlers.items():
        signal.signal(signum, handler)
    for fd in unused:
        os.close(fd)
    forkserver._forkserver._inherited_fds = fds  # type: ignore[attr-defined]  # what DupFd.detach reads
    code: int = spawn._main(child_r, os.dup(child_r))
    return code


def main(fd: int, preload: list[str], sys_path: list[str], folder: str | None = None) -> None:
    """Server loop: one fork per request from kb; exit at EOF (kb closed its end or died), removing
    the run's ``folder`` if kb died (a kb that closed its end removed it itself)."""
    sys.path[:] = sys_path
    for name in preload:
        with contextlib.suppress(ImportError):
            __import__(name)
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    util._close_stdin()  # type: ignore[attr-defined]
    sig_r, sig_w = os.pipe()
    os.set_blocking(sig_r, False)
    os.set_blocking(sig_w, False)
    handlers: dict[signal.Signals, Any] = {
        signal.SIGCHLD: signal.signal(signal.SIGCHLD, lambda *_: None),
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),  # Ctrl-C is kb's to handle
    }
    signal.set_wakeup_fd(sig_w)
    forked: dict[int, int] = {}
    kb = socket.socket(fileno=fd)
    with selectors.DefaultSelector() as selector:
        selector.register(kb, selectors.EVENT_READ)
        selector.register(sig_r, selectors.EVENT_READ)
        while True:
            ready = [key.fileobj for key, _ in selector.select()]
            if sig_r in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(sig_r, 65536)
                _reap(forked)
                _kill_adopted(forked)
            if kb not in ready:
                continue
            try:
                fds = reduction.recvfds(kb, _MAX_FDS + 1)
            except EOFError:  # kb is gone: what it left is killed by each supervisor
                break
            except (OSError, RuntimeError):
                continue
            if len(fds) < 2:
                for extra in fds:
                    os.close(extra)
                continue
            child_r, child_w, *inherited = fds
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    kb.close()
                    selector.close()
                    code = _serve_one(child_r, inherited, [sig_r, sig_w, child_w, *forked.values()], handlers)
                except Exception:
                    sys.excepthook(*sys.exc_info())
                    sys.stderr.flush()
                finally:
                    os._exit(code)
            with contextlib.suppress(OSError):
                forkserver.write_signed(child_w, pid)
            forked[pid] = child_w
            os.close(child_r)
            for extra in inherited:
                os.close(extra)
    for pid in forked:  # a stopped supervisor would not act on its parent-death signal
        _wake_to_end(pid)
    _kill_adopted(forked)
    if folder is not None:  # kb's lock on it is dropped in the same exit that closed the socket
        from ._scratch import remove_if_abandoned

        remove_if_abandoned(folder, wait=2.0)
    os._exit(0)
