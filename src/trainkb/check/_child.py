"""What runs inside a check's process: contain it, run the snippet, report the outcome.

This module is imported by the warm forkserver, so it must stay import-light; torch is
already in ``sys.modules`` there (see ``_warm``).
"""

from __future__ import annotations

import atexit
import contextlib
import linecache
import multiprocessing
import operator
import os
import resource
import signal
import sys
import threading
import time
import traceback
import types
import warnings
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from ._spec import SnippetSpec

__all__ = ["EARLY_KEY", "KB_ERROR_KEY", "MEMORY_LIMIT_KEY", "UNDELIVERED", "remember_modules", "run_snippet"]

_MAX_TEXT = 64 * 1024
EARLY_KEY = "before_exit"  # what the main code raised, sent before the exit (threads, atexit) runs
KB_ERROR_KEY = "kb_error"  # the check could not be run as asked: an error of kb, never a verdict
MEMORY_LIMIT_KEY = "memory_limit"  # in what a rank raised: the address-space limit it ran under, when it ran out
UNDELIVERED = 70  # exit status when the outcome could not reach `kb check` (EX_SOFTWARE)
_exit = os._exit  # the real one: the snippet's own process gets a reporting os._exit


class _Unmet(Exception):
    """A condition kb promised the check (its memory limit, its folder) could not be set up."""


def _set_limit(which: int, soft: int, hard: int, what: str) -> None:
    try:
        resource.setrlimit(which, (soft, hard))
    except (ValueError, OSError) as exc:
        current = resource.getrlimit(which)[1]
        shown = "unlimited" if current == resource.RLIM_INFINITY else str(current)
        raise _Unmet(f"could not set the {what} to {hard} (the hard limit here is {shown}: {exc})") from None


def _contain(spec: SnippetSpec, stdout: Connection, stderr: Connection) -> None:
    """Resource limits, the allow-listed env, fresh cwd, own stdio (the supervisor owns the session)."""
    os.dup2(stdout.fileno(), 1)
    os.dup2(stderr.fileno(), 2)
    stdout.close()
    stderr.close()
    sys.stdout = open(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    # Before anything can initialise CUDA: a check that does not ask for a GPU sees none.
    os.environ.clear()
    os.environ.update(spec["env"])
    if spec["memory_bytes"]:
        limit = spec["memory_bytes"]
        _set_limit(resource.RLIMIT_AS, limit, limit, "address-space limit (--memory-limit)")
    if spec["cpu_seconds"]:
        soft = spec["cpu_seconds"]
        _set_limit(resource.RLIMIT_CPU, soft, soft + 5, "CPU-time limit")
    try:
        os.chdir(spec["cwd"])
    except OSError as exc:
        raise _Unmet(f"could not enter the check's folder: {exc}") from None
    # Children of a forkserver would inherit "forkserver" as their start method; a check's
    # DataLoader workers must behave as they would in a plain script.
    multiprocessing.set_start_method(None, force=True)
    # Ctrl-C raises KeyboardInterrupt in a script (and _thread.interrupt_main() relies on it);
    # kb's own processes left SIGINT at its default action, which kills without a traceback.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import torch  # already imported by the warm server; this is a dictionary lookup

    torch.set_num_threads(spec["threads"])


_UNVERIFIED = " (unverified name)"  # no expected type or category ends with this
# What each module loaded before the snippet ran held then (a shallow copy of its namespace):
# a snippet that empties sys.modules or rebinds builtins.ValueError changes neither what
# builtins.ValueError is nor whether its own class may take that name. Filled in the warm
# forkserver once (shared by every check it forks), then for the few modules loaded since.
_held_before: dict[str, dict[str, Any]] = {}
_started_ns = [0]  # when the snippet began (coarse clock: never later than a file's ctime)
# A file system may round a ctime down (to its timestamp granularity, up to 2 s on some), so a
# file the snippet writes can look a little older than the snippet; a library file is far older.
_CTIME_SLACK_NS = 3_000_000_000


def remember_modules() -> None:
    """Copy the namespace of every loaded module not yet remembered."""
    for name, module in list(sys.modules.items()):
        if name not in _held_before and isinstance(module, types.ModuleType):
            _held_before[name] = dict(vars(module))


def _library(name: str) -> object | None:
    """A module the snippet imported from a file that existed before it ran (or one built into
    the interpreter): unlike a module object or a file the snippet made, its classes are a library's."""
    module = sys.modules.get(name)
    if not isinstance(module, types.ModuleType):
        return None
    if name in sys.builtin_module_names:
        return module
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if (
        not isinstance(origin, str)
        or getattr(spec, "name", None) != name
        or getattr(module, "__file__", None) != origin
    ):
        return None
    try:
        return module if os.stat(origin).st_ctime_ns < _started_ns[0] - _CTIME_SLACK_NS else None
    except (OSError, ValueError):
        return None


def _resolves(cls: type) -> bool:
    """Whether ``module.qualname`` leads back to this very class as the module held it before the
    snippet ran (or, for a module imported since, as a library file defines it): a snippet can set
    both attributes, so only a name that resolves is evidence of which class was raised."""
    try:
        module = cls.__module__
        first, *rest = cls.__qualname__.split(".")
        held = _held_before.get(module)
        found: object
        if held is not None and first in held:
            found = held[first]
        elif (library := _library(module)) is not None:
            found = getattr(library, first)
        else:
            return False
        for part in rest:
            found = getattr(found, part)
    except Exception:
        return False
    return found is cls


def _class_name(cls: type) -> str:
    name = _unicode(f"{cls.__module__}.{cls.__qualname__}")
    return name if _resolves(cls) else name + _UNVERIFIED


def _mro_names(cls: type) -> list[str]:
    return [_class_name(c) for c in cls.__mro__ if c is not object]


def _message(exc: BaseException) -> str:
    """``str(exc)``, or what the traceback module shows when the exception's ``__str__`` raises."""
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


def _traceback_text(exc: BaseException) -> str:
    """The traceback as Python prints it, or a plainer one when the snippet broke the traceback or
    linecache module: what it raised still decides the check."""
    try:
        return "".join(traceback.format_exception(exc))
    except Exception:
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            frames.append(f'  File "{code.co_filename}", line {tb.tb_lineno}, in {code.co_name}\n')
            tb = tb.tb_next
        return "Traceback (most recent call last):\n" + "".join(frames) + f"{type(exc).__name__}: {_message(exc)}\n"


def _warning_text(item: Any) -> str:
    try:
        return warnings.formatwarning(item.message, item.category, item.filename, item.lineno)
    except Exception:
        return f"{item.filename}:{item.lineno}: {item.category.__name__}: {item.message}\n"


def _exit_status(code: object) -> int:
    """The status ``sys.exit(code)`` gives a script: an int (one beyond a C long is -1), 0 for
    None, 1 after printing anything else."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code if -(2**63) <= code < 2**63 else -1
    with contextlib.suppress(Exception):
        sys.stderr.write(f"{code}\n")
    return 1


def _finish_like_a_script() -> None:
    """What the interpreter does once a script's main module has ended: wait for its threads that
    are not daemons, then run the atexit callbacks. A hang, a warning or an os._exit there is
    the script's, so the check must see it too."""
    try:
        getattr(threading, "_shutdown")()  # noqa: B009  # private, so not in typeshed
    except BaseException as exc:  # Python prints what ends the wait and exits all the same
        with contextlib.suppress(Exception):
            sys.stderr.write("Exception ignored on threading shutdown:\n" + _traceback_text(exc))
    atexit._run_exitfuncs()


def _unicode(text: str) -> str:
    """``text`` with lone surrogates (``'\\ud800'`` is a valid str, but no UTF-8) spelled out: every
    report kb writes is UTF-8, and one such character must not cost the whole report."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _cap(text: str) -> str:
    text = _unicode(text)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT // 2] + "\n[...]\n" + text[-_MAX_TEXT // 2 :]


def _flush_and_close(close: bool) -> None:
    """Flush (and close) our stdout and stderr; a snippet may have closed or broken them."""
    for stream, fd in ((sys.stdout, 1), (sys.stderr, 2)):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
        if close:
            with contextlib.suppress(OSError):
                os.close(fd)


def _deliver(result: Connection, identity: tuple[int, int], outcome: dict[str, Any]) -> bool:
    """Send the outcome on the result pipe; if the snippet closed or replaced that descriptor,
    reopen the supervisor's copy of the same pipe (Linux). False when it could not be sent."""
    fd = result.fileno()
    try:
        same = (os.fstat(fd).st_dev, os.fstat(fd).st_ino) == identity
    except OSError:
        same = False
    if same:
        try:
            result.send(outcome)
            return True
        except OSError:
            pass
    if sys.platform != "linux":
        return False
    try:
        fresh = os.open(f"/proc/{os.getppid()}/fd/{fd}", os.O_WRONLY)
    except OSError:
        return False
    try:
        if (os.fstat(fresh).st_dev, os.fstat(fresh).st_ino) != identity:
            return False
        Connection(fresh, readable=False).send(outcome)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(OSError):
            os.close(fresh)


def _report(result: Connection, identity: tuple[int, int], outcome: dict[str, Any], caught: list[Any]) -> NoReturn:
    """Add the warnings caught, close the output, send the outcome and exit with its status."""
    for item in caught:
        outcome["warnings"].append(
            {
                "category": _class_name(item.category),
                "mro": _mro_names(item.category),
                "message": _cap(str(item.message)),
                "text": _cap(_warning_text(item)),
            }
        )
    # Output first, outcome last: once `kb check` has the outcome it needs nothing more from us.
    _flush_and_close(close=True)
    delivered = False
    try:
        delivered = _deliver(result, identity, outcome)
    finally:
        _exit(outcome["exit_code"] & 0xFF if delivered else UNDELIVERED)


def _record_rerouted(caught: list[Any]) -> None:
    """Record a warning also when the snippet routes warnings elsewhere: ``logging.captureWarnings``
    (or any new ``warnings.showwarning``) takes them past the record, though a script still shows them."""
    show = getattr(warnings, "_showwarnmsg")  # noqa: B009  # private, so not in typeshed
    default = getattr(warnings, "_showwarning_orig")  # noqa: B009

    def showing(message: Any) -> None:
        if warnings.showwarning is not default:  # the record (the default showwarning) is skipped
            caught.append(message)
        show(message)

    setattr(warnings, "_showwarnmsg", showing)  # noqa: B010


def _drop_own_frame(exc: BaseException) -> None:
    """Start the traceback at the snippet's first frame, as a script's does: the frame of the ``exec`` in
    ``run_snippet`` is kb's, not the snippet's."""
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame.f_code is run_snippet.__code__:
        exc.__traceback__ = tb.tb_next


def _refused_memory(exc: BaseException) -> bool:
    """An allocation refused: Python's MemoryError, or torch's CPU allocator failing with ENOMEM (its
    RuntimeError names DefaultCPUAllocator and error code 12, c10/core/impl/alloc_cpu.cpp)."""
    if isinstance(exc, MemoryError):
        return True
    message = _message(exc)
    return isinstance(exc, RuntimeError) and "DefaultCPUAllocator: can't allocate memory" in message


def run_snippet(spec: SnippetSpec, result: Connection, stdout: Connection, stderr: Connection) -> None:
    """Process target: run ``spec['code']`` as __main__ and send one outcome dict.

    Only this process reports: a process the snippet forks that returns here (``sys.exit`` or
    an exception in the child of ``os.fork()``) exits with its status and says nothing, so its
    end cannot decide the check.
    """
    me = os.getpid()
    stat = os.fstat(result.fileno())
    identity = (stat.st_dev, stat.st_ino)
    try:
        _contain(spec, stdout, stderr)
    except _Unmet as exc:
        _deliver(result, identity, {KB_ERROR_KEY: str(exc), "raised": None, "warnings": [], "exit_code": 0})
        _exit(0)
    outcome: dict[str, Any] = {"raised": None, "warnings": [], "exit_code": 0}
    remember_modules()
    _started_ns[0] = time.clock_gettime_ns(getattr(time, "CLOCK_REALTIME_COARSE", time.CLOCK_REALTIME))
    # kb's code in this process judges what the snippet did, and a snippet can rebind this module's
    # names (say, _class_name): every step after the snippet first puts back what kb defined here.
    namespace = globals()
    own = dict(namespace)

    def restore() -> None:
        namespace.update(own)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _record_rerouted(caught)
        # A real module registered as __main__, so classes the snippet defines can be pickled
        # (torch.save, DataLoader workers) exactly as in a script run with `python check.py`.
        main = types.ModuleType("__main__")
        main.__file__ = spec["script"]
        sys.modules["__main__"] = main
        sys.argv[:] = [spec["script"]]
        lines = spec["code"].splitlines(keepends=True)
        linecache.cache[spec["filename"]] = (len(spec["code"]), None, lines, spec["filename"])

        def snippet_exit(status: int) -> NoReturn:
            """The snippet's ``os._exit(n)`` ends the check with status n, as it ends a script; the
            outcome goes first, so such an exit is told from an exec or a crash that sends none."""
            status = operator.index(status)
            restore()
            if os.getpid() != me:
                _exit(status)
            outcome["exit_code"] = status  # an atexit callback's os._exit keeps what the main code raised
            _report(result, identity, outcome, caught)

        os._exit = snippet_exit
        try:
            exec(compile(spec["code"], spec["filename"], "exec"), main.__dict__)
        except SystemExit as exc:
            restore()
            outcome["exit_code"] = _exit_status(exc.code)
        except BaseException as exc:
            restore()
            _drop_own_frame(exc)
            text = _traceback_text(exc)
            # The snippet may have closed or broken its stderr: what it raised still decides.
            with contextlib.suppress(Exception):
                sys.stderr.write(text)
            if os.getpid() != me:  # a forked copy of the snippet: its exit is its own business
                _flush_and_close(close=False)
                _exit(1)
            outcome["raised"] = {
                "type": _class_name(type(exc)),
                "mro": _mro_names(type(exc)),
                "message": _cap(_message(exc)),
                "traceback": _cap(text),
            }
            if spec["memory_bytes"] and _refused_memory(exc):
                outcome["raised"][MEMORY_LIMIT_KEY] = spec["memory_bytes"]
            outcome["exit_code"] = 1
            # What it raised is evidence now: an exit that then hangs (threads, atexit) must not hide it.
            with contextlib.suppress(Exception):  # a broken pickler: the outcome at the exit tells kb so
                _deliver(result, identity, {**outcome, EARLY_KEY: True})
        restore()
        if os.getpid() == me:
            _finish_like_a_script()
    restore()  # an atexit callback may have rebound names too
    if os.getpid() != me:
        _flush_and_close(close=False)
        _exit(outcome["exit_code"] & 0xFF)
    _report(result, identity, outcome, caught)
