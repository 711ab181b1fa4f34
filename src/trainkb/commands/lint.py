"""`kb lint`: every record validated and cross-checked; exit 1 on any finding."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from .._terminal import printable
from ._common import open_catalogue
from ._exit import Exit

if TYPE_CHECKING:
    from ..catalogue import Catalogue


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=["text", "github"], default="text", help="github prints GitHub Actions annotations"
    )
    parser.add_argument("--json", action="store_true", help="print findings as a JSON array")
    parser.add_argument(
        "--families",
        action="store_true",
        help="list the symptom families (entries printing the same line) and each member's tells",
    )


def _family_rows(cat: Catalogue) -> list[list[dict[str, object]]]:
    """The symptom families as `kb lint --families --json` gives them: each member's id and its tells' sentences."""
    from ..lint import symptom_family_ids

    return [
        [{"id": m, "tells": [t.says for t in cat.entries[m].tells]} for m in family]
        for family in symptom_family_ids(cat)
    ]


def _families(cat: Catalogue) -> None:
    from ..lint import symptom_family_ids

    families = symptom_family_ids(cat)
    for family in families:
        print(" · ".join(family))
        for member in family:
            says = [t.says for t in cat.entries[member].tells] or ["(no tell: search can only list it as a candidate)"]
            for text in says:
                print(printable(f"  {member}: {text}", newlines=False))
    print(f"kb lint: {len(families)} symptom families")


def run(args: argparse.Namespace) -> int:
    cat = open_catalogue(args)
    from ..lint import lint_catalogue

    if args.families and not args.json:
        _families(cat)
    findings = lint_catalogue(cat)
    if args.json:  # one JSON document: with --families, an object holding both lists (two documents parsed as none)
        rows = [f.as_dict() for f in findings]
        print(json.dumps({"families": _family_rows(cat), "findings": rows} if args.families else rows, indent=2))
    else:
        for finding in findings:
            if args.format == "github":
                print(finding.github(finding.from_here()))
            else:
                print(printable(finding.located(finding.from_here()), newlines=False))
        entries = len(cat.entries)
        print(f"kb lint: {entries} entries, {len(findings)} finding(s)")
    return Exit.FINDINGS if findings else Exit.SUCCESS
