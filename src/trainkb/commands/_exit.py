"""Exit statuses of `kb` and the one way a command reports a usage error."""

from __future__ import annotations

import enum
import sys

from .._terminal import printable

__all__ = ["Exit", "UsageError", "report_usage_error"]


class Exit(enum.IntEnum):
    """What every command returns; scripts and CI branch on these numbers."""

    SUCCESS = 0
    FINDINGS = 1  # the command worked and found something: lint findings, failed checks, no confident match
    USAGE = 2  # the command could not do its work as asked (argparse uses 2 for its own errors too)


class UsageError(Exception):
    """Raised by a command that was asked for something it cannot do; `kb` prints it and exits 2."""


def report_usage_error(error: UsageError) -> Exit:
    """Print ``kb: error: <message>`` on stderr (never a traceback) and give the usage status; a name
    in the message (an argument, a file in a log folder) has its control characters spelled out."""
    print(printable(f"kb: error: {error}", newlines=False), file=sys.stderr)
    return Exit.USAGE
