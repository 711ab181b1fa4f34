"""`kb lint`: every record validated and cross-checked; exit 1 on any finding."""

from __future__ import annotations

import argparse
import json

from .._terminal import printable
from ._common import open_catalogue
from ._exit import Exit


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=["text", "github"], default="text", help="github prints GitHub Actions annotations"
    )
    parser.add_argument("--json", action="store_true", help="print findings as a JSON array")


def run(args: argparse.Namespace) -> int:
    cat = open_catalogue(args)
    from ..catalogue import lint_catalogue

    findings = lint_catalogue(cat)
    if args.json:
        print(json.dumps([f.as_dict() for f in findings], indent=2))
    else:
        for finding in findings:
            print(finding.github() if args.format == "github" else printable(str(finding), newlines=False))
        entries = len(cat.entries)
        print(f"kb lint: {entries} entries, {len(findings)} finding(s)")
    return Exit.FINDINGS if findings else Exit.SUCCESS
