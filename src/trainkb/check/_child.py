"""What runs inside a check's process: contain it, run the snippet, report the outcome.

This module is imported by the warm forkserver, so it must stay import-light; torch is
already in ``sys.modules`` there (see ``_warm``).
"""

from __future__ import annotations

import linecache
import multiprocessing
import os
import resource
import sys
import traceback
import types
import warnings
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["run_snippet"]

_MAX_TEXT = 64 * 1024


def _contain(spec: dict[str, Any], stdout: Connection, stderr: Connection) -> None:
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
    if spec.get("memory_bytes"):
        limit = int(spec["memory_bytes"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if spec.get("cpu_seconds"):
        soft = int(spec["cpu_seconds"])
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))
    os.chdir(spec["cwd"])
    # Children of a forkserver would inherit "forkserver" as their start method; a check's
    # DataLoader workers must behave as they would in a plain script.
    multiprocessing.set_start_method(spec.get("start_method") or None, force=True)
    import torch  # already imported by the warm server; this is a dictionary lookup

    torch.set_num_threads(int(spec.get("threads", 1)))


def _mro_names(cls: type) -> list[str]:
    return [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__ if c is not object]


def _cap(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT // 2] + "\n[...]\n" + text[-_MAX_TEXT // 2 :]


def run_snippet(spec: dict[str, Any], result: Connection, stdout: Connection, stderr: Connection) -> None:
    """Process target: run ``spec['code']`` as __main__ and send one outcome dict."""
    _contain(spec, stdout, stderr)
    outcome: dict[str, Any] = {"raised": None, "warnings": [], "exit_code": 0}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # A real module registered as __main__, so classes the snippet defines can be pickled
        # (torch.save, DataLoader workers) exactly as in a script run with `python check.py`.
        main = types.ModuleType("__main__")
        main.__file__ = spec["filename"]
        sys.modules["__main__"] = main
        lines = spec["code"].splitlines(keepends=True)
        linecache.cache[spec["filename"]] = (len(spec["code"]), None, lines, spec["filename"])
        try:
            exec(compile(spec["code"], spec["filename"], "exec"), main.__dict__)
        except SystemExit as exc:
            code = exc.code
            outcome["exit_code"] = code if isinstance(code, int) else (0 if code is None else 1)
        except BaseException as exc:
            text = "".join(traceback.format_exception(exc))
            sys.stderr.write(text)
            outcome["raised"] = {
                "type": f"{type(exc).__module__}.{type(exc).__qualname__}",
                "mro": _mro_names(type(exc)),
                "message": _cap(str(exc)),
                "traceback": _cap(text),
            }
            outcome["exit_code"] = 1
    for item in caught:
        outcome["warnings"].append(
            {
                "category": f"{item.category.__module__}.{item.category.__qualname__}",
                "mro": _mro_names(item.category),
                "message": _cap(str(item.message)),
                "text": _cap(warnings.formatwarning(item.message, item.category, item.filename, item.lineno)),
            }
        )
    sys.stdout.flush()
    sys.stderr.flush()
    # Output first, outcome last: once `kb check` has the outcome it needs nothing more from us.
    os.close(1)
    os.close(2)
    try:
        result.send(outcome)
    finally:
        os._exit(outcome["exit_code"] & 0xFF)
