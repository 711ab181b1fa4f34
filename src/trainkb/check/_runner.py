"""Run selected checks in parallel, each contained in its own forked process group."""

from __future__ import annotations

import contextlib
import errno
import io
import math
import os
import pickle
import resource
import shutil
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from ..catalogue import Check, CheckStatus
from ._child import EARLY_KEY
from ._environment import check_environment
from ._process import BoundedOutput, WarmPool, free_port
from ._spec import SnippetSpec
from ._supervise import INTERRUPTED_KEY, SIGNALLED_KEY, STATUS_KEY
from ._tasks import CheckTask, skip_reason
from ._verdict import RankRun, Verdict, early_verdict, verdict_of

__all__ = ["INTERRUPTED", "CheckResult", "RunOptions", "check_env", "not_run", "run_tasks"]

INTERRUPTED = "interrupted: kb check was stopped before this check finished (no verdict)"

_TORCHRUN_VARS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "ROLE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
)


# The largest message a check may send kb (outcomes and tracebacks are small; kb has no memory limit).
MESSAGE_CAP = 64 * 1024**2
_READ_CHUNK = 1024**2

# How long a supervisor may take to report once its forkserver is gone (it reaps for up to 10 s).
_LAST_WORD = 15.0


@dataclass
class RunOptions:
    timeout: float = 60.0
    memory_bytes: int | None = 16 * 1024**3
    threads: int = 1
    jobs: int = os.cpu_count() or 1


@dataclass
class CheckResult:
    """The outcome of one check; ``evidence`` holds the traceback or warning it produced."""

    entry: str
    check: str
    status: str  # a CheckStatus; a MutantStatus once `kb check --mutants` judged a mutant
    seconds: float
    message: str
    demonstrates: str
    claim: str
    expect: str
    path: str
    line: int
    output: str = ""
    evidence: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def _rank_env(rank: int, world: int, port: int | None) -> dict[str, str]:
    if world == 1:  # a check must see a bare `python`, not whatever launched kb
        return {}
    return {
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world),
        "LOCAL_WORLD_SIZE": str(world),
        "GROUP_RANK": "0",
        "ROLE_RANK": str(rank),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
    }


def check_env(task: CheckTask, rank: int = 0, world: int = 1, port: int | None = None) -> dict[str, str]:
    """The whole environment of one check process: the allow-list, the rank contract, the GPU rule.

    A check that does not declare ``cuda: true`` sees no GPU, so its verdict is the same on a
    laptop and on a GPU host (a library that probes CUDA cannot change the outcome).
    """
    env = {k: v for k, v in check_environment(os.environ).items() if k not in _TORCHRUN_VARS}
    env.update(_rank_env(rank, world, port))
    if not task.check.requires.cuda:
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _cores() -> int:
    """The CPUs this process may run on (a container or taskset may allow fewer than the host has)."""
    with contextlib.suppress(AttributeError, OSError):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def cpu_seconds(check: Check, limit: float) -> int:
    """A check's CPU-time limit (RLIMIT_CPU): a backstop should kb fail to stop it, never the verdict.

    kb stops a check on wall time: at its timeout, or once its declared hang has lasted. Until then
    every thread may keep a core busy, so the limit allows all of them that long, and a check that
    spins in several threads reaches its ``hangs.seconds`` instead of dying with SIGXCPU first.
    """
    hang = getattr(getattr(check.expect, "hangs", None), "seconds", None)
    wall = max(limit, hang) if hang is not None else limit
    return math.ceil(wall * max(2, _cores())) + 30


def _script_name(key: str) -> str:
    """The file a check's code is written to, named after the check (``D1:c0`` → ``D1-c0.py``)."""
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in key) + ".py"


def _spec(
    task: CheckTask,
    rank: int,
    world: int,
    port: int | None,
    cwd: str,
    owner_dir: str,
    limit: float,
    options: RunOptions,
) -> SnippetSpec:
    return {
        "code": task.check.code,
        "filename": f"<{task.key}>",
        "script": os.path.join(owner_dir, _script_name(task.key)),
        "cwd": cwd,
        "owner_dir": owner_dir,
        "env": check_env(task, rank, world, port),
        # CUDA reserves tens of GB of virtual address space at context creation: an RLIMIT_AS
        # sized for CPU work would make every CUDA check fail with a bogus out-of-memory.
        "memory_bytes": None if task.check.requires.cuda else options.memory_bytes,
        "cpu_seconds": cpu_seconds(task.check, limit),
        "threads": options.threads,
    }


class _PlainData(pickle.Unpickler):
    """Loads dicts, lists, strings, numbers and None only: the snippet shares the result pipe, and
    unpickling anything that names a class or function would run code it chose inside kb."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a check's message may not hold {module}.{name}")


def _plain_message(data: bytes) -> dict[str, Any]:
    message = _PlainData(io.BytesIO(data)).load()
    if not isinstance(message, dict):
        raise pickle.UnpicklingError(f"a check's message is a dict, not {type(message).__name__}")
    return message


def _take_message(buffer: bytearray) -> bytes | str | None:
    """Cut one whole message off the front of ``buffer`` (framed as ``Connection.send_bytes``
    frames it); None while it is incomplete, a reason when kb refuses to read it."""
    if len(buffer) < 4:
        return None
    (size,) = struct.unpack("!i", buffer[:4])
    start = 4
    if size == -1:  # a size that needs 8 bytes
        if len(buffer) < 12:
            return None
        (size,) = struct.unpack("!Q", buffer[4:12])
        start = 12
    if size < 0 or size > MESSAGE_CAP:
        return (
            f"sent kb a message of {size} bytes on its result pipe, more than the {MESSAGE_CAP // 1024**2} MiB "
            "kb reads (or not a message at all); kb stopped reading that pipe"
        )
    if len(buffer) < start + size:
        return None
    message = bytes(buffer[start : start + size])
    del buffer[: start + size]
    return message


class _Launch:
    """The processes of one check, their pipes and what they reported."""

    def __init__(self, pool: WarmPool, task: CheckTask, limit: float, options: RunOptions, waiting: int) -> None:
        self.pool = pool
        world = task.check.requires.processes
        port = free_port() if world > 1 else None
        self.port = port
        self.cwd = tempfile.mkdtemp(prefix=f"kb-check-{task.entry_id}-", dir=pool.folder)
        self.ranks = [RankRun(rank) for rank in range(world)]
        self.processes = []
        self.results: dict[Connection, int] = {}
        self._partial: dict[Connection, bytearray] = {}
        self.outputs: list[tuple[BoundedOutput, BoundedOutput]] = []
        try:
            # The code as a script file (spawn and forkserver workers re-import __main__ from it),
            # beside the ranks' folders: each rank starts in an empty folder of its own.
            with open(
                os.path.join(self.cwd, _script_name(task.key)), "x", encoding="utf-8", errors="surrogatepass"
            ) as f:
                f.write(task.check.code)
            for rank in range(world):
                rank_dir = os.path.join(self.cwd, f"rank{rank}")
                os.makedirs(rank_dir, exist_ok=True)
                slot = pool.slot()
                try:
                    slot.begin(_spec(task, rank, world, port, rank_dir, self.cwd, limit, options))
                except OSError:  # the spare died while it waited; start a fresh one
                    slot.discard()
                    slot = pool.slot()
                    slot.begin(_spec(task, rank, world, port, rank_dir, self.cwd, limit, options))
                self.processes.append(slot.process)
                self.results[slot.result] = rank
                self.outputs.append(slot.outputs)
        except BaseException:  # out of descriptors or processes: the ranks begun so far and the folder go
            for process in self.processes:
                pool.stop(process)
            for conn in self.results:
                conn.close()
            shutil.rmtree(self.cwd, ignore_errors=True)
            raise
        pool.keep_spares(min(options.jobs, waiting))  # no spare for a check that will never come

    def _receive(self, conn: Connection, rank: int) -> bool:
        """Read what the pipe holds now, without blocking, and take each whole message in it (what
        the snippet raised, its outcome, or the supervisor's status); True while more may come on
        this pipe. A part of a message waits for the rest, so a stalled writer cannot hold kb past
        the check's deadline. Anything else on the pipe ends it as if it had closed."""
        buffer = self._partial.setdefault(conn, bytearray())
        try:
            os.set_blocking(conn.fileno(), False)
            chunk = os.read(conn.fileno(), _READ_CHUNK)
        except BlockingIOError:
            return True
        except OSError:
            chunk = b""
        if not chunk:
            if buffer:
                self.ranks[rank].pipe_error = (
                    f"left an incomplete message ({len(buffer)} bytes) on its result pipe, so kb could not read "
                    "its outcome (did the snippet write to that pipe?)"
                )
            return self._close_result(conn)
        buffer += chunk
        while (taken := _take_message(buffer)) is not None:
            if isinstance(taken, str):
                self.ranks[rank].pipe_error = taken
                return self._close_result(conn)
            try:
                message = _plain_message(taken)
            except pickle.UnpicklingError:
                return self._close_result(conn)
            if not self._take(message, rank):
                return self._close_result(conn)
        return True

    def _close_result(self, conn: Connection) -> bool:
        self.results.pop(conn, None)
        self._partial.pop(conn, None)
        conn.close()
        return False

    def _take(self, message: dict[str, Any], rank: int) -> bool:
        """Record one message; True while more may follow it."""
        state = self.ranks[rank]
        if message.get(EARLY_KEY):  # what the main code raised; the exit and its outcome come later
            state.outcome = message
            return True
        if STATUS_KEY in message:  # the snippet died without an outcome; this is how
            status = message[STATUS_KEY]
            state.exitcode = os.waitstatus_to_exitcode(status) if status is not None else -9
            state.interrupted = bool(message.get(INTERRUPTED_KEY))
            state.signalled = message.get(SIGNALLED_KEY)
        else:  # the snippet's outcome: it has closed its output and is exiting with this code
            state.outcome = message
            state.exitcode = message["exit_code"] & 0xFF
        state.reported = True
        return False

    def _ended(self, rank: int) -> None:
        """The supervisor exited, or the forkserver that reports its exit died: read what it
        left (its status comes, or its pipe closes, once it and the snippet are gone); no
        status means it was killed itself."""
        last = time.monotonic() + _LAST_WORD
        for conn, owner in list(self.results.items()):
            while owner == rank and conn in self.results and conn.poll(max(0.0, last - time.monotonic())):
                self._receive(conn, rank)
        state = self.ranks[rank]
        if state.running:
            self.processes[rank].join(0)
            state.exitcode = self.processes[rank].exitcode
            state.supervisor_lost = True

    def collect(self, deadline: float, check: Any, stop_early: bool) -> bool:
        """Gather outcomes until every rank exited, a verdict is clear, or the deadline; True if hit."""
        sentinels = {p.sentinel: rank for rank, p in enumerate(self.processes)}
        while True:
            open_results = list(self.results)
            alive = [s for s, rank in sentinels.items() if self.ranks[rank].running]
            if not alive and not open_results:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True
            for ready in wait([*open_results, *alive], timeout=remaining):
                if ready in self.results:
                    self._receive(ready, self.results[ready])
                elif isinstance(ready, int) and self.ranks[sentinels[ready]].running:  # a process sentinel
                    self._ended(sentinels[ready])
            if stop_early and early_verdict(check, self.ranks) is not None:
                return False

    def close(self) -> str:
        for process, state in zip(self.processes, self.ranks, strict=True):
            # A supervisor that reported has killed everything of its check and is exiting by
            # itself; waiting for its address space to be torn down would only add latency.
            self.pool.stop(process, wait=not state.reported)
        texts = []
        for rank, (out, err) in enumerate(self.outputs):
            out.finish()
            err.finish()
            prefix = f"[rank{rank}] " if len(self.outputs) > 1 else ""
            for label, stream in (("stdout", out), ("stderr", err)):
                if stream.total:
                    texts.append(f"--- {prefix}{label} ({stream.total} bytes) ---\n{stream.text()}")
        for conn in self.results:
            conn.close()
        shutil.rmtree(self.cwd, ignore_errors=True)
        return "\n".join(texts)


def _run_one(pool: WarmPool, task: CheckTask, options: RunOptions, waiting: int) -> tuple[Verdict, float, str]:
    expect = task.check.expect
    hang_seconds = getattr(getattr(expect, "hangs", None), "seconds", None)
    limit = task.check.timeout or options.timeout
    wait_for = hang_seconds if hang_seconds is not None else limit
    for attempt in (1, 2):  # a check cut short from outside (its forkserver died, its port taken) runs once more
        started = time.monotonic()
        launch = _Launch(pool, task, limit, options, waiting)
        begun = time.monotonic()  # the check's time starts once its processes run (a fresh forkserver takes long)
        try:
            hit = launch.collect(begun + wait_for, task.check, stop_early=hang_seconds is None)
            elapsed = time.monotonic() - begun
            verdict = verdict_of(task.check, launch.ranks, elapsed, hit, limit)
        finally:
            output = launch.close()
        cut_short = any(state.interrupted for state in launch.ranks)
        if attempt == 2 or pool.closed or not (cut_short or _lost_port(launch.port, verdict, output)):
            break
    return verdict, time.monotonic() - started, output


def _lost_port(port: int | None, verdict: Verdict, output: str) -> bool:
    """Whether a check failed only because another program took the MASTER_PORT kb picked for it.

    The port is free when kb picks it and the store binds it a moment later: a busy machine can hand
    it to someone else in between. That says nothing about the check, so it runs once more on a new port.
    """
    return (
        port is not None
        and verdict.status != CheckStatus.PASSED
        and f"port: {port}," in output
        and "EADDRINUSE" in output
    )


def _result(
    task: CheckTask, status: str, seconds: float, message: str, output: str = "", evidence: list[str] | None = None
) -> CheckResult:
    check = task.check
    return CheckResult(
        task.entry_id,
        check.name,
        status,
        round(seconds, 3),
        message,
        check.demonstrates,
        check.claim,
        task.expect_kind,
        task.path,
        task.line,
        output,
        evidence or [],
    )


def not_run(task: CheckTask, why: str) -> CheckResult:
    """A task kb never ran (the run was stopped first): skipped, with ``why`` as its message."""
    return _result(task, CheckStatus.SKIPPED, 0.0, why)


def _could_not_run(exc: Exception, jobs: int) -> str:
    """Why the runner failed a check; running out of file descriptors names the limit and the way out."""
    if isinstance(exc, OSError) and exc.errno == errno.EMFILE:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        raise_to = 1024 if hard == resource.RLIM_INFINITY else min(1024, hard)
        ways = [f"raise it (`ulimit -n {raise_to}`)"] * (raise_to > soft) + ["lower --jobs"] * (jobs > 1)
        way_out = " or ".join(ways) or f"its hard limit ({hard}) allows no more: run where it is higher"
        limit = f"the open-file limit ({soft}, `ulimit -n`) is too low for -j {jobs}"
        return f"the checker could not run it: {exc.strerror}: {limit}; {way_out}"
    return f"the checker could not run it: {type(exc).__name__}: {exc}"


def run_tasks(
    tasks: list[CheckTask],
    options: RunOptions,
    pool: WarmPool,
    env: dict[str, Any],
    on_result: Callable[[CheckResult], None] | None = None,
) -> list[CheckResult]:
    """Run every task (skips decided up front) and return results in task order."""
    results: dict[int, CheckResult] = {}
    runnable = []
    for index, task in enumerate(tasks):
        reason = skip_reason(task.check, env)
        if reason is None:
            runnable.append((index, task))
        else:
            results[index] = _result(task, CheckStatus.SKIPPED, 0.0, reason)
            if on_result:
                on_result(results[index])

    not_started = [len(runnable)]
    counting = threading.Lock()
    # CUDA checks take turns: an OOM check fills the card, and another check's memory would show up
    # in its message ("Process N has ... in use") and change the verdict with --jobs
    gpu = threading.Lock()

    def work(item: tuple[int, CheckTask]) -> None:
        index, task = item
        with counting:
            not_started[0] -= 1
            waiting = not_started[0]
        try:
            if task.check.requires.cuda:
                with gpu:
                    verdict, seconds, output = _run_one(pool, task, options, waiting)
            else:
                verdict, seconds, output = _run_one(pool, task, options, waiting)
            keep_output = output if verdict.status != CheckStatus.PASSED else ""
            result = _result(task, verdict.status, seconds, verdict.message, keep_output, verdict.evidence)
        except Exception as exc:  # the runner itself failed for this check; say so, keep going
            result = _result(task, CheckStatus.ERROR, 0.0, _could_not_run(exc, options.jobs))
        if pool.closed:  # kb was stopped meanwhile: however the check ended, that is no verdict on it
            result = _result(task, CheckStatus.SKIPPED, result.seconds, INTERRUPTED)
        results[index] = result
        if on_result:
            on_result(result)

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as executor:
        try:
            list(executor.map(work, runnable))
        except BaseException:  # Ctrl-C, or SIGTERM/SIGHUP turned into an exception by `kb check`
            pool.shutdown()
            executor.shutdown(wait=True, cancel_futures=True)  # each check removes its folder
            raise
    return [results[i] for i in range(len(tasks))]
