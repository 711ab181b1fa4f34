"""Exit statuses of `kb` and the one way a command reports a usage error."""

from __future__ import annotations

import enum

from .._terminal import printable, say

__all__ = ["Exit", "UsageError", "report_usage_error"]


class Exit(enum.IntEnum):
    """What every command returns; scripts and CI branch on these numbers."""

    SUCCESS = 0
    FINDINGS = 1  # the command worked and found something: lint findings, failed checks, no confident match
    USAGE = 2  # the command could not do its work as asked (argparse uses 2 for its own errors too)


class UsageError(Exception):
    """Raised by a command that was asked for something it cannot do; `kb` prints it and exits 2."""


def report_usage_error(error: UsageError) -> Exit:
    """Print ``kb: error: <message>`` on stderr (never a traceback) and give the usage status; what the
    message quotes as typed (an id, a path, a ref, a file in a log folder) has its control characters,
    line breaks included, spelled out."""
    say(printable(f"kb: error: {error}", newlines=False) + "\n")
    return Exit.USAGE
