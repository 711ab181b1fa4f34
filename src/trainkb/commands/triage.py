"""`kb triage [FILE|DIR|-]`: which rank of a distributed job broke first, and which are only victims.

Reads a combined log (pasted, piped or a file), an elastic error.json, or a `torchrun --log-dir`
folder. Exit status: 0 when a single culprit is named, 1 when the output does not single one out
(several suspects, or no rank with an error of its own), 2 on usage errors (nothing to read,
not multi-rank output, a path that does not exist). Imports only the standard library and the
search package, like `kb search`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .._terminal import emit, json_text, say
from ._common import catalogue_roots, refuse_device_path, refuse_device_stdin
from ._exit import Exit, UsageError


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        nargs="?",
        default=None,
        metavar="FILE|DIR|-",
        help="a combined log, an error.json, a torchrun --log-dir folder, or '-' for stdin",
    )
    parser.add_argument("--json", action="store_true", help="print the triage as JSON (see docs/json.md)")
    parser.add_argument(
        "--no-match", action="store_true", help="do not look up the catalogue entry for the culprit's error"
    )


def run(args: argparse.Namespace) -> int:
    from ..triage import read_chunks, stream_chunks, to_json, to_text, triage_path, triage_text

    def warn(message: str) -> None:
        say(f"kb: warning: {message}\n")

    catalogue = None if args.no_match else catalogue_roots(args)
    match = catalogue is not None
    source = args.source
    if source is None and sys.stdin.isatty():
        raise UsageError("give a log file, a torchrun --log-dir folder, or pipe the output in (kb triage - < log)")
    try:
        if source in (None, "-"):
            refuse_device_stdin()
            stream = getattr(sys.stdin, "buffer", None)
            chunks = stream_chunks(stream, "stdin", warn) if stream else iter([sys.stdin.read()])
            triage = triage_text(chunks, catalogue=catalogue, match=match)
        else:
            path = Path(source)
            if not path.exists():
                raise UsageError(f"no such file or folder: {source}")
            refuse_device_path(path, source)
            triage = (
                triage_path(path, catalogue=catalogue, match=match, warn=warn)
                if path.is_dir() or path.suffix == ".json"
                else triage_text(read_chunks(path, warn), catalogue=catalogue, match=match)
            )
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror or exc}") from None
    if triage is None:
        if args.json and not emit(json.dumps({"triage": None}) + "\n"):
            return Exit.USAGE
        print(
            "kb triage: this is not the output of two or more ranks (no [rankN]: / [defaultN]: prefixes, "
            "torchrun summary or per-rank logs)",
            file=sys.stderr,
        )
        return Exit.USAGE
    if not emit(json_text({"triage": to_json(triage)}) + "\n" if args.json else to_text(triage)):
        return Exit.USAGE
    return Exit.SUCCESS if triage.sole_culprit is not None else Exit.FINDINGS
