"""Start check processes from a warm forkserver and make sure none outlives `kb check`."""

from __future__ import annotations

import atexit
import contextlib
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from multiprocessing import spawn
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from ._environment import check_environment
from ._scratch import RunFolder
from ._server import ForkServer, ServerProcess
from ._spec import SnippetSpec

__all__ = ["BoundedOutput", "Slot", "TorchUnavailable", "WarmPool", "free_port"]

_HEAD_BYTES = 16 * 1024
_TAIL_BYTES = 48 * 1024


class BoundedOutput:
    """Drains a pipe on a thread, keeping only its head and tail (a flood costs no memory)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                self.total += len(chunk)
                room = _HEAD_BYTES - len(self.head)
                if room > 0:
                    self.head += chunk[:room]
                    chunk = chunk[room:]
                if chunk:
                    self.tail += chunk
                    if len(self.tail) > _TAIL_BYTES:
                        del self.tail[: len(self.tail) - _TAIL_BYTES]
        except OSError:
            pass

    def finish(self, wait: float = 2.0) -> None:
        self._thread.join(wait)
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def text(self) -> str:
        """Head and tail, with a marker where bytes were dropped."""
        kept = len(self.head) + len(self.tail)
        gap = self.total - kept
        middle = f"\n[... {gap} bytes of output dropped ...]\n".encode() if gap > 0 else b""
        return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", "replace")


_used_ports: set[int] = set()
_port_lock = threading.Lock()


def free_port() -> int:
    """A port the kernel just handed out on 127.0.0.1, never one this process gave before."""
    with _port_lock:
        while True:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind(("127.0.0.1", 0))
                port: int = sock.getsockname()[1]
            if port not in _used_ports:
                _used_ports.add(port)
                return port


class _Registry:
    """Supervisors not yet known to have exited; stopped on exit, on SIGTERM/SIGHUP and on Ctrl-C.

    Stopping asks first (SIGTERM: the supervisor kills every descendant of its check, whatever
    session they made) and kills the supervisor's process group only if it does not go in time.
    A process is signalled only while multiprocessing has not seen it exit, so a recycled pid
    is never hit.
    """

    def __init__(self) -> None:
        self._processes: dict[int, BaseProcess] = {}
        self._lock = threading.Lock()
        atexit.register(self.kill_all)

    def add(self, process: BaseProcess) -> None:
        assert process.pid is not None, "a process is registered once started"
        with self._lock:
            for pid in [pid for pid, p in self._processes.items() if p.exitcode is not None]:
                del self._processes[pid]
            self._processes[process.pid] = process

    def kill(self, process: BaseProcess) -> None:
        pid = process.pid
        if pid is None:  # never started: nothing to kill or forget
            return
        if process.exitcode is None:
            for kill in (os.killpg, os.kill):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    kill(pid, signal.SIGKILL)
        process.join(1)
        with self._lock:
            self._processes.pop(pid, None)

    def kill_all(self, grace: float = 5.0) -> None:
        with self._lock:
            processes = list(self._processes.values())
        for process in processes:
            if process.exitcode is None and process.pid is not None:
                _ask_to_stop(process.pid)
        deadline = time.monotonic() + grace
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
            self.kill(process)


def _ask_to_stop(pid: int) -> None:
    """SIGTERM, then SIGCONT: a supervisor its snippet stopped (SIGSTOP) must wake to clean up."""
    for signum in (signal.SIGTERM, signal.SIGCONT):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


def _without_main(name: str) -> dict[str, Any]:
    """Preparation data minus the re-run of ``__main__`` that spawn/forkserver children do.

    Re-running the caller's main script in every check (pytest, a benchmark, `kb`) would cost
    time and, for an unguarded script, recurse.
    """
    data = _get_preparation_data(name)
    data.pop("init_main_from_path", None)
    data.pop("init_main_from_name", None)
    return data


_get_preparation_data = spawn.get_preparation_data


class TorchUnavailable(RuntimeError):
    """torch cannot be imported in this environment (the message says why); no check can run."""


class WarmPool:
    """A forkserver of kb's own (see ``_server``) that has imported torch once; each check is a fork of it.

    ``cold=True`` starts every check as a fresh interpreter instead (spawn): the baseline
    the overhead benchmark compares against.
    """

    def __init__(self, preload: list[str] | None = None, cold: bool = False) -> None:
        self._cold = cold
        self._folder = RunFolder()
        # The checks' environment: the server and every supervisor it forks show it in
        # /proc/<pid>/environ, so none of kb's own variables (GIT_*, TRAINKB_*) may be in it.
        self._server = ForkServer(
            ["trainkb.check._warm", *(preload or [])], check_environment(os.environ), self._folder.path
        )
        self._start_lock = threading.RLock()
        self._spares: list[Slot] = []
        self._spares_wanted = 0
        self._refiller: threading.Thread | None = None
        self._spare_ready = threading.Condition(self._start_lock)
        self._closed = False
        self.registry = _Registry()
        atexit.register(self.shutdown)  # runs before the registry's hook (last in, first out)

    @property
    def closed(self) -> bool:
        """Whether shutdown began: a check stopped now was stopped on purpose."""
        return self._closed

    @property
    def folder(self) -> str:
        """The run's folder: each check's working folder is made in it (see ``_scratch``)."""
        return self._folder.path

    @property
    def server_pid(self) -> int | None:
        """The forkserver's pid while it runs (None in a cold pool or before the first check)."""
        return self._server.pid

    def start(self, target: Any, args: tuple[Any, ...]) -> BaseProcess:
        """Fork a child running ``target(*args)``; it is registered for killing at once."""
        process: BaseProcess
        if self._cold:
            process = multiprocessing.get_context("spawn").Process(target=target, args=args, daemon=False)
            with self._start_lock:
                spawn.get_preparation_data = _without_main
                try:
                    process.start()
                finally:
                    spawn.get_preparation_data = _get_preparation_data
        else:
            process = ServerProcess(self._server, _without_main, target, args)
            process.start()
        assert process.pid is not None
        self.registry.add(process)
        return process

    def result_pipe(self) -> tuple[Connection, Connection]:
        return multiprocessing.Pipe(duplex=False)

    def slot(self) -> Slot:
        """A started supervisor whose snippet process waits for a check: a spare if one is ready."""
        with self._spare_ready:  # a spare being started now comes sooner than a new one
            while not self._spares and self._refiller is not None and self._refiller.is_alive():
                self._spare_ready.wait(1)
            spare = self._spares.pop() if self._spares else None
        if spare is not None and spare.process.exitcode is None:
            return spare
        if spare is not None:
            spare.discard()
        return Slot(self)

    def keep_spares(self, count: int) -> None:
        """Start spares in the background until ``count`` wait (one per parallel job).

        Not for ``cold`` pools: there a fresh interpreter per check is the point.
        """
        if self._cold:
            return
        with self._start_lock:
            if self._closed:
                return
            self._spares_wanted = count
            if self._refiller is not None and self._refiller.is_alive():
                return
            self._refiller = threading.Thread(target=self._refill, daemon=True)
            self._refiller.start()

    def _refill(self) -> None:
        with contextlib.suppress(Exception), self._notify_when_done():
            while True:
                with self._start_lock:
                    if self._closed or len(self._spares) >= self._spares_wanted:
                        return
                spare = Slot(self)
                with self._spare_ready:
                    self._spares.append(spare)
                    self._spare_ready.notify()

    @contextlib.contextmanager
    def _notify_when_done(self) -> Iterator[None]:
        try:
            yield
        finally:  # wake a check waiting for a spare that will not come
            with self._spare_ready:
                self._spare_ready.notify_all()

    def shutdown(self) -> None:
        """Stop the spares, every check still running, then the forkserver (reaped before we return)."""
        with self._start_lock:
            self._closed = True
            refiller = self._refiller
        self._server.refuse()  # a spare being started stops waiting for the server
        if refiller is not None:
            refiller.join(30)
        with self._start_lock:
            spares, self._spares = self._spares, []
        self.registry.kill_all()
        for spare in spares:
            spare.discard()
        self._folder.remove()  # before the server stops: it removes the folder only if kb is gone
        self._server.stop()

    def stop(self, process: BaseProcess, grace: float = 5.0, wait: bool = True) -> None:
        """Have the supervisor kill its check's processes, wait for it, and kill its group if it hangs.

        ``wait=False`` for a check whose snippet has reported: its supervisor is reaping and
        exiting on its own; it stays registered until it has, and the run's end waits for it.
        """
        if not wait or process.pid is None:
            return
        if process.exitcode is None:
            _ask_to_stop(process.pid)
            process.join(grace)
        self.registry.kill(process)

    def probe(self, packages: list[str]) -> dict[str, Any]:
        """Environment facts that need torch, computed in a warm child."""
        from ._probe import probe

        reader, writer = self.result_pipe()
        process = self.start(probe, (writer, packages))
        writer.close()
        try:
            if not reader.poll(120):
                raise RuntimeError("the environment probe did not answer within 120 s")
            env: dict[str, Any] = reader.recv()
            if "torch_error" in env:
                raise TorchUnavailable(env["torch_error"])
            return env
        finally:
            self.stop(process)


class Slot:
    """One check process before and after it gets its check: supervisor, pipes, output readers."""

    def __init__(self, pool: WarmPool) -> None:
        from ._supervise import supervise

        self.pool = pool
        self.result, result_w = pool.result_pipe()
        control_r, self.control = pool.result_pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        out_conn, err_conn = Connection(out_w, readable=False), Connection(err_w, readable=False)
        try:
            self.process = pool.start(supervise, (control_r, result_w, out_conn, err_conn))
        except BaseException:
            for conn in (self.result, self.control):
                conn.close()
            for fd in (out_r, err_r):
                os.close(fd)
            raise
        finally:  # the supervisor holds its own copies now
            for conn in (result_w, control_r, out_conn, err_conn):
                conn.close()
        self.outputs = (BoundedOutput(out_r), BoundedOutput(err_r))

    def begin(self, spec: SnippetSpec) -> None:
        """Hand the waiting snippet process its check."""
        self.control.send(spec)
        self.control.close()

    def discard(self) -> None:
        """Stop an unused slot (its supervisor ends its snippet process) and free the pipes."""
        self.control.close()
        self.pool.stop(self.process)
        self.result.close()
        for stream in self.outputs:
            stream.finish(0.5)
