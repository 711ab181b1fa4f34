"""`kb schema`: the JSON Schema of a record, for editors (catalogue/schema.json)."""

from __future__ import annotations

import argparse
import sys

from ._exit import Exit
from ._output import checked_output, write_atomic


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    from ..catalogue import render_schema

    target = checked_output(args.output, "-o") if args.output else None
    text = render_schema()
    if target is not None:
        write_atomic(target, text)
    else:
        sys.stdout.write(text)
    return Exit.SUCCESS
