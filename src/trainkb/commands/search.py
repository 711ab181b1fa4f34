"""`kb search`: find the entries that explain a pasted traceback, log or symptom.

Imports only the search package (no pydantic, YAML, torch, textual or jinja2 on a warm
cache), so that pasting into a terminal answers at once.
"""

from __future__ import annotations

import argparse
import gc
import os
import shlex
import stat
import sys
from dataclasses import replace

from .._tail import PIPE_TAIL_BYTES, read_tail, skip_to_tail
from .._terminal import emit, json_text, say
from ..catalogue import AREA_FILE
from ._common import catalogue_roots, refuse_device_stdin
from ._exit import Exit, UsageError


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "text",
        nargs="?",
        default=None,
        help="the traceback, log or description; '-' or omitted with piped input reads stdin",
    )
    parser.add_argument("--json", action="store_true", help="print the JSON contract (see docs/json.md)")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="how many entries to show (default 5)")
    parser.add_argument(
        "search_catalogue",
        nargs="?",
        default=None,
        metavar="CATALOGUE",
        help="catalogue folder (same as the global --catalogue)",
    )


def _read_stdin() -> tuple[str, int]:
    """The tail of stdin and the number of its first line (`train.py 2>&1 | kb search` may pipe gigabytes;
    a large file as stdin is read from its tail, its first line then numbered 1, as kb says)."""
    refuse_device_stdin()
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        return sys.stdin.read(), 1
    skipped = skip_to_tail(stream, PIPE_TAIL_BYTES)
    tail, dropped = read_tail(stream)
    if skipped:
        say(f"kb: read the end of stdin only ({skipped} bytes skipped); line numbers count from there\n")
    return tail.decode("utf-8", errors="replace"), dropped + 1


def _file_note(text: str) -> str | None:
    """Advice when the text searched is the name of a file here (`kb search crash.log`): the words of the
    name match nothing, and the user meant what the file holds. The file is not opened."""
    if "\n" in text:
        return None
    try:
        if not stat.S_ISREG(os.stat(text).st_mode):
            return None
    except (OSError, ValueError):
        return None
    name = shlex.quote(text)
    return f"`{name}` is a file here; to search what it holds: `kb search - < {name}`."


def _query(args: argparse.Namespace) -> tuple[str, int] | None:
    """The text to search and the line number of its first line."""
    if args.text is not None and args.text != "-":
        return args.text, 1
    if args.text == "-" or not sys.stdin.isatty():
        return _read_stdin()
    return None


def run(args: argparse.Namespace) -> int:
    if getattr(args, "whole_process", False):
        # one paste, then exit: the cyclic collector would only walk the modules and the index just
        # loaded, which hold no garbage cycle, again and again while they load
        gc.disable()
    from .._present import block
    from ..search import search  # after argument parsing, so `kb --help` stays light
    from ..triage import to_json, to_text, triage_text

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    query = _query(args)
    if query is None or not query[0].strip():
        raise UsageError("give the text to search, or pipe it in (kb search - < log.txt)")
    text, first_line = query
    if args.search_catalogue and getattr(args, "catalogue", None):
        raise UsageError("name the catalogue once: the CATALOGUE argument or --catalogue, not both")
    if args.search_catalogue:
        args.catalogue = [args.search_catalogue]
    roots = catalogue_roots(args)
    if not (roots[0] / AREA_FILE).is_file():  # `kb search TEXT /etc`: no entries to search, not "no match"
        raise UsageError(f"not a catalogue folder (no {AREA_FILE}): {roots[0]}")
    response = search(text, top=args.top, catalogue=roots, first_line=first_line)
    note = _file_note(text) if args.text is not None and args.text != "-" else None
    if note is not None:
        response = replace(response, advice=f"{note} {response.advice}" if response.advice else note)
    triage = triage_text(text, catalogue=roots)  # None unless two or more ranks speak in the text
    if args.json:
        data = response.to_json()
        if triage is not None:
            data["triage"] = to_json(triage, first_line)
        written = emit(json_text(data) + "\n")
    else:
        written = emit(
            (to_text(triage, first_line=first_line) + "\n" if triage is not None else "") + block(response, "kb search")
        )
    if not written:
        return Exit.USAGE
    return Exit.SUCCESS if response.results and not response.abstained else Exit.FINDINGS
