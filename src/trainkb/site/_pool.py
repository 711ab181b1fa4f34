"""The forked workers that render entry pages, bound to the build's life.

Each worker holds the write end of the pool's task queue, so none ever sees the build end: a build
killed by SIGKILL or SIGTERM would leave them asleep under pid 1. On Linux a parent-death signal
ends each worker with its parent; SIGTERM to the build ends the workers before the build itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

__all__ = ["forked_pool"]

_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """In each worker, first: SIGKILL when the build dies (or at once if it already has)."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


@contextlib.contextmanager
def forked_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A fork-based pool of ``workers`` that does not outlive the process that made it."""
    before = {child.pid for child in multiprocessing.active_children()}

    def terminate(signum: int, _frame: object) -> None:
        for child in multiprocessing.active_children():
            if child.pid not in before:
                child.kill()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)  # end as SIGTERM would have ended us, with its status

    pool = ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("fork"), initializer=_die_with, initargs=(os.getpid(),)
    )
    # Only the main thread may set a handler; a build run from another thread keeps the parent-death signal.
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminate) if in_main else None
    try:
        with pool:
            yield pool
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
