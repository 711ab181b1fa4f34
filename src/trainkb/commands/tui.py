"""`kb tui [--file LOG]` (or plain `kb` in a terminal): the interactive search UI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ._common import EXIT_OK, usage_error

READ_LIMIT = 64 * 1024 * 1024


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--file", type=Path, help="start with this log or traceback pasted")


def _read_piped_stdin() -> str:
    """`python train.py 2>&1 | kb tui`: take the piped text, then read keys from the terminal."""
    text = sys.stdin.buffer.read(READ_LIMIT).decode("utf-8", "replace")
    tty = os.open("/dev/tty", os.O_RDONLY)
    os.dup2(tty, 0)
    os.close(tty)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    return text


def run(args: argparse.Namespace) -> int:
    text = ""
    if args.file is not None:
        try:
            with args.file.open("rb") as handle:
                handle.seek(max(0, args.file.stat().st_size - READ_LIMIT))
                text = handle.read().decode("utf-8", "replace")
        except OSError as exc:
            return usage_error(f"cannot read {args.file}: {exc.strerror or exc}")
    elif not sys.stdin.isatty():
        try:
            text = _read_piped_stdin()
        except OSError:
            return usage_error("stdin is piped and there is no terminal to run the UI on")
    if not sys.stdout.isatty():
        return usage_error("kb tui needs a terminal; use `kb search` in scripts")
    from ..tui import KnowledgeBase, TrainKBApp
    from ..tui._model import tail_for_paste

    kb = KnowledgeBase.load(args.catalogue)
    TrainKBApp(kb, tail_for_paste(text)).run()
    return EXIT_OK
