"""A status line on stderr while a slow step runs (building the index, importing torch, rendering a site).

For a person at a terminal only: nothing is written when stderr is not a terminal (a pipe, a log
file, CI) or is a dumb one (TERM=dumb cannot erase a line), so output that scripts read stays as it
was. The line is rewritten for each step and erased when the work is done; what the command prints
afterwards says how it went.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from typing import TextIO

__all__ = ["rewrites_lines", "status"]


def rewrites_lines(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal that can erase and rewrite a line (``\\r\\x1b[2K``)."""
    try:
        return stream is not None and stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError, OSError):  # a replaced or closed stream
        return False


@contextlib.contextmanager
def status(what: str) -> Iterator[Callable[[str], None]]:
    """Show ``what…`` at once; the yielded function shows ``what: step…`` instead."""
    stream = sys.stderr
    shown = rewrites_lines(stream)

    def say(step: str = "") -> None:
        if shown:
            stream.write(f"\r\x1b[2K{what}{': ' + step if step else ''}…")
            stream.flush()

    say()
    try:
        yield say
    finally:
        if shown:
            with contextlib.suppress(OSError, ValueError):
                stream.write("\r\x1b[2K")
                stream.flush()
