"""`kb doctor [PATH …]`: which catalogue conditions hold in this environment (and these sources)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from .._terminal import printable
from ._common import open_catalogue
from ._exit import Exit

_MARK = {"warn": "WARN", "ok": "ok", "info": "info", "n/a": "n/a"}


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="training scripts or folders to scan too (e.g. for torch.cuda.amp, RANK as device)",
    )
    parser.add_argument("--json", action="store_true", help="print findings as JSON")


def run(args: argparse.Namespace) -> int:
    from .._doctor import Context, import_torch, run_probes
    from .._status import status

    with status("kb doctor") as say:
        say("importing torch")
        torch = import_torch()
        say("probing this environment")
        findings = run_probes(ctx=Context(environ=os.environ, torch=torch, sources=tuple(args.paths)))
    cat = open_catalogue(args)
    titles = {e.id: e.title for e in cat.entries.values()} if cat else {}
    if args.json:
        rows = [f.as_dict() | {"title": titles.get(f.entry, "")} for f in findings]
        print(json.dumps(rows, indent=2))
    else:
        for f in findings:
            print(f"[{_MARK[f.status]:>4}] {f.entry:<5} {f.probe:<20} {f.observed}")
            if f.message and f.status in {"warn", "info"}:
                print(f"{'':14}{f.message}")
            if f.status == "warn" and f.entry in titles:
                print(printable(f"{'':14}→ kb show {f.entry}  ({titles[f.entry]})", newlines=False))
    return Exit.FINDINGS if any(f.status == "warn" for f in findings) else Exit.SUCCESS
