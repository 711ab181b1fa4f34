"""`trainkb.install()`: after an uncaught exception's traceback, name the entries that explain it.

Installing costs nothing: search and the catalogue are imported only once an exception
actually escapes. The original hook always runs first and unchanged; anything that goes
wrong in trainkb's part is swallowed, because a diagnostic must never hide the error.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from types import TracebackType

__all__ = ["install", "uninstall"]


class _Hooks:
    """The hooks trainkb replaced (and calls first), and how many entries to name.

    A plain class, not a dataclass: `import trainkb` stays cheap.
    """

    def __init__(
        self,
        excepthook: Callable[[type[BaseException], BaseException, TracebackType | None], object],
        threading_hook: Callable[[threading.ExceptHookArgs], object],
        top: int = 3,
    ) -> None:
        self.excepthook = excepthook
        self.threading = threading_hook
        self.top = top
        self.active = True  # False once uninstalled while a later hook still chains to ours


_installed: _Hooks | None = None


def _job_id() -> str | None:
    """What the ranks of one job on this machine share, and no other job does; None outside a job.

    The launcher (torchrun's agent, srun's step daemon, a shell script) is the ranks' common
    parent: its pid and start time tell this job from the next one, even with a fixed
    MASTER_PORT or torchrun's default run id "none". A restart by the agent counts as a new job.
    """
    env = os.environ
    world = env.get("LOCAL_WORLD_SIZE") or env.get("WORLD_SIZE") or "1"
    if not world.isdigit() or int(world) < 2:
        return None
    parent = os.getppid()
    try:  # field 22, the parent's start time in clock ticks since boot
        started = open(f"/proc/{parent}/stat", "rb").read().rsplit(b")", 1)[1].split()[19].decode()  # noqa: SIM115
    except (OSError, IndexError):
        started = ""
    parts = (
        env.get("TORCHELASTIC_RUN_ID", ""),
        env.get("TORCHELASTIC_RESTART_COUNT", ""),
        env.get("MASTER_PORT", ""),
        str(parent),
        started,
    )
    return "\0".join(parts)


MARKER_PREFIX = "trainkb-hook-"
MARKER_MAX_AGE = 3600.0  # seconds: a job's ranks fail within a minute of each other (torchrun SIGKILLs after 30 s)


def _started_at() -> float | None:
    """When this process started, on the wall clock (so a claim from before a reboot is older); None
    where /proc or the boot clock cannot tell. /proc/self/stat's field 22 counts ticks since boot."""
    clock = getattr(time, "CLOCK_BOOTTIME", None)
    try:
        with open("/proc/self/stat", "rb") as handle:
            ticks = int(handle.read().rsplit(b")", 1)[1].split()[19])
        since_boot = ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None
    return None if clock is None else time.time() - (time.clock_gettime(clock) - since_boot)


def _claim(marker: str) -> bool:
    """Whether this process is the first of its job to claim ``marker``.

    A claim counts only for processes that were already running when it was made: the ranks of a
    job start together, before any of them fails, while the same script rerun from the same shell
    (same launcher) starts after the last run's claim and so advises again. The marker holds the
    claim's time and is read and written under a lock, so two ranks never both claim it.
    """
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        fd = os.open(marker, flags, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                if not os.path.samestat(os.fstat(fd), os.stat(marker, follow_symlinks=False)):
                    continue  # removed as stale meanwhile: claim the new one
            except FileNotFoundError:
                continue
            if os.fstat(fd).st_uid != os.getuid():
                return True  # another user's file under our name: no say over our advice
            try:
                claimed: float | None = float(os.read(fd, 64).decode())
            except ValueError:  # empty: made an instant ago by a rank that has not written yet
                claimed = None
            started = _started_at()
            if claimed is not None and (started is None or claimed >= started):
                return False
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, f"{time.time():.3f}".encode())
            return True
        finally:
            os.close(fd)


def _remove_old_markers(folder: str) -> None:
    """Remove this user's markers untouched for MARKER_MAX_AGE; one a rank holds locked is left alone."""
    cutoff = time.time() - MARKER_MAX_AGE
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if not entry.name.startswith(MARKER_PREFIX):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mtime > cutoff:
                    continue
                fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    if os.path.samestat(os.fstat(fd), os.stat(entry.path, follow_symlinks=False)):
                        os.unlink(entry.path)
                finally:
                    os.close(fd)


def _first_time_for_this_job(text: str) -> bool:
    """True in exactly one rank of a job for each distinct error (the same error in 8 ranks prints once)."""
    job = _job_id()
    if job is None:
        return True
    last = text.strip().splitlines()[-1] if text.strip() else ""
    digest = hashlib.sha256(f"{job}\0{os.getuid()}\0{last}".encode()).hexdigest()[:20]
    folder = tempfile.gettempdir()
    try:
        first = _claim(os.path.join(folder, f"{MARKER_PREFIX}{digest}"))
    except OSError:
        return True
    _remove_old_markers(folder)
    return first


@contextlib.contextmanager
def _sigterm_deferred() -> Iterator[None]:
    """Hold SIGTERM until the advice is out, then deliver it.

    When one rank fails, torchrun SIGTERMs the others (and SIGKILLs them 30 s later); the
    rank that claimed the job's advice is usually still searching at that moment.
    Only the main thread may set handlers; elsewhere the advice is not protected.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        if pending:
            os.kill(os.getpid(), signal.SIGTERM)


def _report(exc_type: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    if issubclass(exc_type, KeyboardInterrupt) or _installed is None or not _installed.active:
        return
    try:
        with _sigterm_deferred():
            text = "".join(traceback.format_exception(exc_type, value, tb))
            if not _first_time_for_this_job(text):
                return
            from ._advice import advice_block

            advice = advice_block(text, top=_installed.top, output=text)  # all the hook has
            if advice:
                sys.stderr.write(advice)
                sys.stderr.flush()
    except Exception:  # the catalogue may be missing or broken: stay silent
        return
    except KeyboardInterrupt:  # Ctrl-C while advising: the user wants out, not kb's traceback
        return


def _excepthook(exc_type: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    previous = _installed.excepthook if _installed else sys.__excepthook__
    try:
        previous(exc_type, value, tb)
    except SystemExit:  # the hook ends the process with its own status, as Python lets it: after the advice
        _report(exc_type, value, tb)
        raise
    except BaseException as failure:  # the hook trainkb chains after failed: shown as Python shows it, as its own
        _show_hook_failure(failure, exc_type, value, tb)
        if isinstance(failure, KeyboardInterrupt):  # Ctrl-C in that hook: the user wants out, not advice
            return
    _report(exc_type, value, tb)


def _show_hook_failure(
    failure: BaseException, exc_type: type[BaseException], value: BaseException, tb: TracebackType | None
) -> None:
    """What Python prints when ``sys.excepthook`` raises (Python/pythonrun.c, ``_PyErr_PrintEx``), with the
    failure's traceback starting at the failing hook's frame: the frame of ``_excepthook`` that called it is
    trainkb's, not part of the user's hook."""
    first = failure.__traceback__
    if first is not None and first.tb_frame.f_code is _excepthook.__code__:
        failure.__traceback__ = first.tb_next
    with contextlib.suppress(Exception):
        sys.stderr.write("Error in sys.excepthook:\n")
        sys.stderr.write("".join(traceback.format_exception(failure)))
        sys.stderr.write("\nOriginal exception was:\n")
        sys.stderr.flush()
        sys.__excepthook__(exc_type, value, tb)


def _threading_hook(args: threading.ExceptHookArgs) -> None:
    previous = _installed.threading if _installed else threading.__excepthook__
    previous(args)
    if args.exc_value is not None:
        _report(args.exc_type, args.exc_value, args.exc_traceback)


def install(top: int = 3) -> None:
    """Chain trainkb after the current ``sys.excepthook`` and ``threading.excepthook``.

    ``sys.unraisablehook`` is left alone: exceptions in ``__del__`` and finalizers are
    rarely the failure that stopped a run, and advice there would be noise.
    """
    global _installed
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top is how many entries the advice names, a whole number of 1 or more; got {top!r}")
    if _installed is None:
        _installed = _Hooks(sys.excepthook, threading.excepthook)
    # after an uninstall that left a later hook in place, ours is still in that chain: only the hook
    # put back is replaced again, so no chain calls ours twice
    if sys.excepthook is _installed.excepthook:
        sys.excepthook = _excepthook
    if threading.excepthook is _installed.threading:
        threading.excepthook = _threading_hook
    _installed.top = top
    _installed.active = True


def uninstall() -> None:
    """Put the previous hooks back where trainkb's are still the current ones, and stop advising.

    A hook set after trainkb's may call ours in turn: it stays, and ours then only passes each
    exception on to the hook it replaced.
    """
    global _installed
    if _installed is None:
        return
    if sys.excepthook is _excepthook:
        sys.excepthook = _installed.excepthook
    if threading.excepthook is _threading_hook:
        threading.excepthook = _installed.threading
    if sys.excepthook is _installed.excepthook and threading.excepthook is _installed.threading:
        _installed = None  # out of every chain
    else:
        _installed.active = False
