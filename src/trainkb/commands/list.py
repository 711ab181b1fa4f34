"""`kb list`: the entries, optionally of one area, as a table or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from .._terminal import printable
from ._common import open_catalogue
from ._exit import Exit, UsageError


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--area", help="only entries of this area id")
    parser.add_argument("--json", action="store_true", help="print a JSON array")


def run(args: argparse.Namespace) -> int:
    cat = open_catalogue(args)
    if args.area and cat.area(args.area) is None:
        raise UsageError(f"unknown area {args.area!r}; known: {', '.join(a.id for a in cat.areas)}")
    entries = [e for e in cat.ordered() if not args.area or e.area == args.area]
    if args.json:
        rows = [
            {
                "id": e.id,
                "title": e.title,
                "area": e.area,
                "section": e.section,
                "tags": e.tags,
                "checks": len(e.checks),
                "verification": e.verification.status if e.verification else "checked",
                "path": cat.display_path(e.id),
                "layer": cat.origin.get(e.id),
            }
            for e in entries
        ]
        print(json.dumps(rows, indent=2))
        for problem in cat.problems:  # the output stays an array of entries; what hid entries goes to stderr
            print(printable(f"kb: warning: {problem}", newlines=False), file=sys.stderr)
        return Exit.SUCCESS
    width = max((len(e.id) for e in entries), default=2)
    for e in entries:
        status = (
            f"{len(e.checks)} check{'s' if len(e.checks) != 1 else ''}"
            if e.checks
            else (e.verification.status if e.verification else "")
        )
        print(printable(f"{e.id:<{width}}  {e.area}/{e.section:<14} {e.title}  [{status}]", newlines=False))
    if cat.problems:
        print(f"({len(cat.problems)} file problem(s) hide entries; run `kb lint`)")
    return Exit.SUCCESS
