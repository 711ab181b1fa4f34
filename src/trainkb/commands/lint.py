"""`kb lint`: every record validated and cross-checked; exit 1 on any finding."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
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


def _families(cat: Catalogue, as_json: bool) -> None:
    from ..lint import symptom_family_ids

    families = symptom_family_ids(cat)
    if as_json:
        members = [[{"id": m, "tells": [t.says for t in cat.entries[m].tells]} for m in family] for family in families]
        print(json.dumps(members, indent=2))
        return
    for family in families:
        print(" · ".join(family))
        for member in family:
            says = [t.says for t in cat.entries[member].tells] or ["(no tell: search can only list it as a candidate)"]
            for text in says:
                print(printable(f"  {member}: {text}", newlines=False))
    print(f"kb lint: {len(families)} symptom families")


def _annotated_file(shown: str, cat: Catalogue) -> str:
    """The file a finding names, as a GitHub annotation needs it: relative to the working directory (the
    repository root in a workflow), else absolute. Findings show paths from a layer's parent folder,
    which is not the working directory for `--catalogue deep/kb/records`."""
    roots = [root for _name, root in reversed(cat.layers)] or [cat.root]  # a layer's own findings first
    candidates = [Path(shown)] if os.path.isabs(shown) else [root.parent / shown for root in roots]
    real = next((path for path in candidates if path.exists()), candidates[0])
    absolute = os.path.normpath(os.path.abspath(real))
    relative = os.path.relpath(absolute)
    return absolute if relative == os.pardir or relative.startswith(os.pardir + os.sep) else relative


def run(args: argparse.Namespace) -> int:
    cat = open_catalogue(args)
    from ..lint import lint_catalogue

    if args.families:
        _families(cat, args.json)
    findings = lint_catalogue(cat)
    if args.json:
        print(json.dumps([f.as_dict() for f in findings], indent=2))
    else:
        for finding in findings:
            if args.format == "github":
                print(finding.github(_annotated_file(finding.path, cat)))
            else:
                print(printable(str(finding), newlines=False))
        entries = len(cat.entries)
        print(f"kb lint: {entries} entries, {len(findings)} finding(s)")
    return Exit.FINDINGS if findings else Exit.SUCCESS
