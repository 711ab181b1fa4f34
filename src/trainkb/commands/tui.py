"""`kb tui [--file LOG]` (or plain `kb` in a terminal): the interactive search UI."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._tail import PIPE_TAIL_BYTES, decode_log, read_tail
from ._common import catalogue_roots
from ._exit import Exit, UsageError

if TYPE_CHECKING:
    from ..tui import TrainKBApp

STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # leave the alternate screen and restore the terminal first


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", type=Path, help="start with this log or traceback pasted")


def _read_piped_stdin() -> str:
    """`python train.py 2>&1 | kb tui`: read the pipe to its end (its tail kept, so the writer never
    blocks or dies of a broken pipe), then read keys from the terminal."""
    tail = read_tail(sys.stdin.buffer).data
    tty = os.open("/dev/tty", os.O_RDONLY)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    return decode_log(tail)


def _read_file(path: Path) -> str:
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - PIPE_TAIL_BYTES))
        return decode_log(handle.read(PIPE_TAIL_BYTES))


def run_app(app: TrainKBApp) -> None:
    """Run ``app``; SIGTERM or SIGHUP exit it the way a key would, so the terminal is restored."""

    def stop(_signum: int, _frame: Any) -> None:
        # The handler runs while the event loop may sleep in select() with no timer due (focus on a list, no
        # blinking cursor): scheduling through the loop's self-pipe wakes it, a plain app.exit() would not.
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # before the loop starts or after it ends
            app.exit()
        else:
            loop.call_soon_threadsafe(app.exit)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        app.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(args: argparse.Namespace) -> int:
    roots = catalogue_roots(args)
    text = ""
    if args.file is not None:
        try:
            text = _read_file(args.file)
        except OSError as exc:
            raise UsageError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    elif not sys.stdin.isatty():
        try:
            text = _read_piped_stdin()
        except OSError:
            raise UsageError("stdin is piped and there is no terminal to run the UI on") from None
    if not sys.stdout.isatty():
        raise UsageError("kb tui needs a terminal; use `kb search` in scripts")
    from ..search import paste_tail
    from ..tui import KnowledgeBase, TrainKBApp

    kb = KnowledgeBase.load(roots)
    run_app(TrainKBApp(kb, paste_tail(text)[0]))
    return Exit.SUCCESS
