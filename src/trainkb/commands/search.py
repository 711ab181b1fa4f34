"""`kb search`: find the entries that explain a pasted traceback, log or symptom.

Imports only the search package (no pydantic, YAML, torch, textual or jinja2 on a warm
cache), so that pasting into a terminal answers at once.
"""

from __future__ import annotations

import argparse
import gc
import os
import stat
import sys
from dataclasses import dataclass, replace

from .._tail import PIPE_TAIL_BYTES, decode_log, piped_stdin, read_tail, skip_to_tail
from .._terminal import emit, json_text, say
from ..catalogue import AREA_FILE
from ._common import catalogue_roots, refuse_device_stdin
from ._exit import Exit, UsageError

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypedDict

    from ..ranklog import Triage
    from ..search import SearchResponse

    class Searched(TypedDict):
        """The `input` field of the JSON (docs/json.md)."""

        bytes: int
        searched_from_line: int
        searched_chars: int
        cut: bool


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "text",
        nargs="*",
        metavar="TEXT [CATALOGUE]",
        help="the traceback, log or description (unquoted words are searched as one text); '-' or nothing with "
        "piped input reads stdin; a last word that names a folder is the catalogue (as --catalogue)",
    )
    parser.add_argument("--json", action="store_true", help="print the JSON contract (see docs/json.md)")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="how many entries to show (default 5)")


def _words(args: argparse.Namespace) -> None:
    """Split the words typed into the text and the CATALOGUE folder: `kb search CUDA out of memory` is one text
    (it read "of memory" as a catalogue), `kb search "$log" ./team` names a catalogue, as it always did."""
    words = list(args.text)
    args.search_catalogue = words.pop() if len(words) > 1 and os.path.isdir(words[-1]) else None
    args.text = " ".join(words) if words else None


@dataclass(frozen=True)
class Input:
    """The text to search, and what it is the end of."""

    text: str
    first_line: int  # the number of the text's first line in the input
    size: int  # bytes of the input: read, or passed over to reach its tail
    kept: int  # bytes of it kept in ``text``
    skipped: int = 0  # bytes of a large file passed over by seeking: line numbers count from there


def _read_stdin() -> Input:
    """The tail of stdin and the number of its first line (`train.py 2>&1 | kb search` may pipe gigabytes;
    a large file as stdin is read from its tail, its first line then numbered 1, as kb says)."""
    refuse_device_stdin()
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        text = sys.stdin.read()
        return Input(text, 1, len(text.encode()), len(text.encode()))
    skipped = skip_to_tail(stream, PIPE_TAIL_BYTES)
    tail = read_tail(stream)
    return Input(decode_log(tail.data), tail.dropped + 1, skipped + tail.size, len(tail.data), skipped)


def _file_note(text: str) -> str | None:
    """Advice when the text searched is the name of a file here (`kb search crash.log`): the words of the
    name match nothing, and the user meant what the file holds. The file is not opened."""
    if "\n" in text:
        return None
    try:
        mode = os.stat(text).st_mode  # follows links: /dev/stdin names what the shell gave as input
    except (OSError, ValueError):
        return None
    import shlex  # only here: a paste is seldom the name of a file

    name = shlex.quote(text)
    if stat.S_ISREG(mode):
        return f"`{name}` is a file here; to search what it holds: `kb search - < {name}`."
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode):  # a pipe, /dev/stdin, a terminal
        return f"`{name}` is a pipe or device here, not a text; to search what it gives: `kb search - < {name}`."
    return None


def _query(args: argparse.Namespace) -> Input | None:
    """The text to search and what it is the end of."""
    if args.text is not None and args.text != "-":
        # bytes of the argument that are not UTF-8 reach Python as lone surrogates, which JSON cannot carry:
        # read them as stdin is read, each bad byte U+FFFD
        raw = args.text.encode("utf-8", "surrogateescape")
        return Input(raw.decode("utf-8", "replace"), 1, len(raw), len(raw))
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

    if args.top < 1:
        raise UsageError("--top must be at least 1")
    _words(args)
    given = _query(args)
    if given is not None and not given.text.strip() and args.text in (None, "-") and piped_stdin():
        raise UsageError("the input is empty (or only blank lines): nothing to search")
    if given is None or not given.text.strip():
        raise UsageError("give the text to search, or pipe it in (kb search - < log.txt)")
    text, first_line = given.text, given.first_line
    if args.search_catalogue and getattr(args, "catalogue", None):
        raise UsageError("name the catalogue once: the CATALOGUE argument or --catalogue, not both")
    if args.search_catalogue:
        args.catalogue = [args.search_catalogue]
    roots = catalogue_roots(args)
    if not (roots[0] / AREA_FILE).is_file():  # `kb search TEXT /etc`: no entries to search, not "no match"
        quote = " (to search the words, quote them)" if args.search_catalogue else ""
        raise UsageError(f"not a catalogue folder (no {AREA_FILE}): {roots[0]}{quote}")
    response = search(text, top=args.top, catalogue=roots, first_line=first_line)
    note = _file_note(text) if args.text is not None and args.text != "-" else None
    if note is not None:
        response = replace(response, advice=f"{note} {response.advice}" if response.advice else note)
    searched = _searched(given)
    if searched["cut"]:
        response = _told_of_the_cut(response, searched, given)
    triage = _triage(text, roots)
    if args.json:
        data = response.to_json()
        data["input"] = searched
        if triage is not None:
            from ..triage import to_json

            data["triage"] = to_json(triage, first_line)
        written = emit(json_text(data) + "\n")
    else:
        said = ""
        if triage is not None:
            from ..triage import to_text

            said = to_text(triage, first_line=first_line) + "\n"
        written = emit(said + block(response, "kb search"))
    if not written:
        return Exit.USAGE
    return Exit.SUCCESS if response.results and not response.abstained else Exit.FINDINGS


def _triage(text: str, roots: list[Path]) -> Triage | None:
    """The triage of a paste where two or more ranks speak; None otherwise. A paste that names no rank
    at all is not read for ranks (the rank log reader is not even imported)."""
    from ..ranklog import may_name_ranks

    if not may_name_ranks(text):
        return None
    from ..triage import triage_text

    return triage_text(text, catalogue=roots)


def _searched(given: Input) -> Searched:
    """How much of the input search read (the `input` field of the JSON): its size, the line it read from,
    the characters it read, and whether anything before them was left unread."""
    from ..search import searched_part

    dropped, chars = searched_part(given.text)
    cut = given.kept < given.size or chars < len(given.text.removeprefix("\ufeff"))
    return {"bytes": given.size, "searched_from_line": given.first_line + dropped, "searched_chars": chars, "cut": cut}


def _amount(size: int) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if size >= scale:
            return f"{size / scale:.1f} {prefix}B"
    return f"{size} bytes"


def _told_of_the_cut(response: SearchResponse, searched: Searched, given: Input) -> SearchResponse:
    """Say on stderr that search read the input's end only; where the advice asks for the error a
    description or a log lacks, say instead that the error may lie in the part left unread."""
    from ..search import ADVICE

    line = searched["searched_from_line"]
    began = f"kb began reading at byte {given.skipped:,} and line numbers count from there; " if given.skipped else ""
    # the first line itself was longer than what search reads: nothing lies above it, only earlier in it
    inside = line == 1 and not given.skipped
    where, before = (
        ("part of line 1, a line longer than that", "earlier in that line")
        if inside
        else (
            f"from line {line} on",
            "above that line",
        )
    )
    say(
        f"kb: the input holds {_amount(given.size)}; {began}search read its end only, the last "
        f"{searched['searched_chars']:,} characters, {where}: an error {before} is not seen\n"
    )
    if response.advice not in (ADVICE["prose"], ADVICE["log"]):
        return response
    return replace(
        response,
        advice=f"Search read the end of the input only, {where}, and it holds no error: the failure may lie "
        f"{before}. Search the lines around it alone, e.g. `grep -B5 -A40 Error train.log | kb search`.",
    )
