"""Helpers shared by subcommands: loading the catalogue and suggesting entry ids."""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
import sys
from pathlib import Path

from ..catalogue import find_catalogues
from ._exit import UsageError

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:  # loading records needs pydantic; `kb search` and `kb --help` must not pay for it
    from ..catalogue import Catalogue

__all__ = [
    "catalogue_roots",
    "closest_ids",
    "open_catalogue",
    "refuse_device_path",
    "refuse_device_stdin",
    "seconds",
]

MAX_SECONDS = 7 * 24 * 3600.0  # a time option beyond a week is a typo, not a plan


def seconds(text: str) -> float:
    """An argparse type for a duration: a finite number of seconds above 0, at most a week."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"expected seconds more than 0 and at most {MAX_SECONDS:g} (a week), got {text!r}"
        )
    return value


def refuse_device_stdin() -> None:
    """A usage error when stdin is a device other than a terminal or /dev/null: `kb search - < /dev/zero`
    would be read for ever, as `kb triage /dev/zero` would."""
    try:
        info = os.fstat(sys.stdin.fileno())
    except (AttributeError, OSError, ValueError):  # closed or not a real descriptor: the reader says so
        return
    if not stat.S_ISCHR(info.st_mode) or sys.stdin.isatty() or info.st_rdev == os.stat(os.devnull).st_rdev:
        return
    raise UsageError(
        "standard input is a device, not a log file or a pipe; redirect the log (< log.txt) or pipe the output in"
    )


def refuse_device_path(path: Path, source: str) -> None:
    """A usage error unless the log named is a file, a folder or a pipe (`<(…)` is read to its end, as
    stdin is): a device such as /dev/zero, or a socket, would be read for ever or not at all."""
    mode = path.stat().st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISFIFO(mode)):
        raise UsageError(f"not a log file or folder (a device or socket): {source}; pipe the output in with '-'")


def catalogue_roots(args: argparse.Namespace) -> list[Path]:
    """The catalogue's folders, base first, as every command finds them: ``--catalogue`` (before or after
    the command, repeated or a path list), else $TRAINKB_CATALOGUE, else the default; a usage error when a
    folder named is missing, before any work starts."""
    roots = find_catalogues(getattr(args, "catalogue", None))
    for root in roots:
        if not root.is_dir():
            raise UsageError(f"catalogue folder not found: {root}")
    return roots


def open_catalogue(args: argparse.Namespace) -> Catalogue:
    """Load the catalogue (and the layers over it); a usage error when a folder named is missing."""
    from .._status import status
    from ..catalogue import load_layers

    roots = catalogue_roots(args)
    with status("kb: reading the catalogue"):
        return load_layers(roots)


_ID = re.compile(r"^([A-Z]+)(\d+)$")


def closest_ids(cat: Catalogue, wanted: str, limit: int = 3) -> list[str]:
    """Nearest ids for an unknown one: same prefix by numeric distance, else by spelling."""
    import difflib  # only for an unknown id: `kb search`, which shares this module, never needs it

    match = _ID.match(wanted.strip().upper())
    if match:
        prefix, number = match[1], int(match[2])
        same = [(abs(int(m[2]) - number), i) for i in cat.entries if (m := _ID.match(i)) and m[1] == prefix]
        if same:
            return [i for _, i in sorted(same)[:limit]]
    by_upper = {i.upper(): i for i in cat.entries}
    close = difflib.get_close_matches(wanted.upper(), list(by_upper), n=limit, cutoff=0.5)
    return [by_upper[c] for c in close]
