"""`kb schema`: the JSON Schema of a record, for editors (catalogue/schema.json)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._exit import Exit


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")


def run(args: argparse.Namespace) -> int:
    from ..catalogue import render_schema

    text = render_schema()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return Exit.SUCCESS
