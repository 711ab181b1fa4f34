"""`kb report merge A.json B.json -o all.json`: one verification matrix from several runs."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._exit import Exit, UsageError
from ._output import checked_output, write_atomic


def add_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = sub.add_parser(
        "merge", help="merge JSON reports (shards, environments); later files win per check and environment"
    )
    merge.add_argument("reports", nargs="+", type=Path, metavar="REPORT")
    merge.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")


def run(args: argparse.Namespace) -> int:
    from ..check import load_report, merge_reports

    target = checked_output(args.output, "-o") if args.output else None
    try:
        reports = [load_report(path) for path in args.reports]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot read {exc.filename}: {exc.strerror or exc}") from None
    text = json.dumps(merge_reports(reports), indent=2) + "\n"
    if target is not None:
        write_atomic(target, text)  # the old file stays whole if this fails: it may be one of the inputs
    else:
        sys.stdout.write(text)
    return Exit.SUCCESS
