"""`kb doctor [PATH …]`: which catalogue conditions hold in this environment (and these sources)."""

from __future__ import annotations

import argparse
import json
import os
import signal
from pathlib import Path

from .._terminal import printable, say
from ._common import open_catalogue, seconds
from ._exit import Exit, UsageError

_MARK = {"error": "FAIL", "warn": "WARN", "ok": "ok", "info": "info", "n/a": "n/a"}


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="training scripts or folders to scan too (e.g. for torch.cuda.amp, RANK as device)",
    )
    parser.add_argument("--json", action="store_true", help="print findings as JSON")
    parser.add_argument(
        "--import-timeout",
        type=seconds,
        default=None,
        metavar="S",
        help="how long importing torch may take before it counts as hung (default 120)",
    )


def run(args: argparse.Namespace) -> int:
    from .._doctor import IMPORT_TIMEOUT, Context, import_torch, run_probes
    from .._status import status

    missing = [path for path in args.paths if not path.exists()]
    if missing:
        raise UsageError(f"no such file or folder: {missing[0]}")
    try:
        with status("kb doctor") as step:
            step("importing torch")
            torch = import_torch(args.import_timeout or IMPORT_TIMEOUT)
            step("probing this environment")
            ctx = Context(
                environ=os.environ, torch=torch.module, sources=tuple(args.paths), torch_problem=torch.problem
            )
            findings = run_probes(ctx=ctx)
    except KeyboardInterrupt:  # the trial import and what it started are gone by now
        say("kb doctor: stopped by SIGINT; nothing it started is left running\n")
        return 128 + signal.SIGINT
    cat = open_catalogue(args)
    titles = {e.id: e.title for e in cat.entries.values()} if cat else {}
    if args.json:
        rows = [f.as_dict() | {"title": titles.get(f.entry, "")} for f in findings]
        print(json.dumps(rows, indent=2))
    else:
        for f in findings:
            print(printable(f"[{_MARK[f.status]:>4}] {f.entry:<5} {f.probe:<20} {f.observed}", newlines=False))
            if f.message and f.status in {"error", "warn", "info"}:
                print(printable(f"{'':14}{f.message}", newlines=False))
            if f.status == "warn" and f.entry in titles:
                print(printable(f"{'':14}→ kb show {f.entry}  ({titles[f.entry]})", newlines=False))
    return Exit.FINDINGS if any(f.status in ("warn", "error") for f in findings) else Exit.SUCCESS
