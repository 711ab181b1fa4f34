"""`kb report merge A.json B.json -o all.json`: one verification matrix from several runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import open_catalogue
from ._exit import Exit, UsageError
from ._output import checked_output, write_atomic

if TYPE_CHECKING:
    from ..catalogue import CheckReport


def add_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = sub.add_parser(
        "merge", help="merge JSON reports (shards, environments); later files win per check and environment"
    )
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    merge.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    merge.add_argument(
        "--prune",
        action="store_true",
        help="drop the rows of checks the catalogue no longer has (renamed or removed), and name them on stderr",
    )


def run(args: argparse.Namespace) -> int:
    from ..check import load_report, merge_reports

    target = checked_output(args.output, "-o") if args.output else None
    try:
        reports = [load_report(path) for path in args.reports]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    if args.prune:
        reports = _pruned(args, reports)
    text = json.dumps(merge_reports(reports), indent=2) + "\n"
    if target is not None:
        write_atomic(target, text)  # the old file stays whole if this fails: it may be one of the inputs
    else:
        sys.stdout.write(text)
    return Exit.SUCCESS


def _pruned(args: argparse.Namespace, reports: list[CheckReport]) -> list[CheckReport]:
    """The reports without the rows of checks the catalogue (``--catalogue``) lacks; stderr names them."""
    from ..check import prune_report

    catalogue = open_catalogue(args)
    known = {(entry.id, check.name) for entry in catalogue.entries.values() for check in entry.checks}
    kept, dropped = [], set()
    for report in reports:
        pruned, gone = prune_report(report, known)
        kept.append(pruned)
        dropped.update(gone)
    if dropped:
        names = sorted(dropped)
        shown = ", ".join(names[:_SHOWN]) + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")
        print(f"kb: dropped the rows of {len(names)} check(s) the catalogue no longer has: {shown}", file=sys.stderr)
    return kept


_SHOWN = 10  # checks named on stderr; the rest are counted
