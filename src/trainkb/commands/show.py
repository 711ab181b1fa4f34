"""`kb show ID`: one entry rendered as Markdown in the terminal, or as JSON."""

from __future__ import annotations

import argparse

from .._terminal import emit, json_text
from ._common import closest_ids, open_catalogue
from ._exit import Exit, UsageError


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="entry id, e.g. D8")
    parser.add_argument("--json", action="store_true", help="print the record as JSON")


def run(args: argparse.Namespace) -> int:
    cat = open_catalogue(args)
    wanted = {i.upper(): i for i in cat.entries}.get(args.id.upper())
    if wanted is None:
        hint = closest_ids(cat, args.id)
        suffix = f"; did you mean {', '.join(hint)}?" if hint else ""
        raise UsageError(f"unknown entry {args.id!r}{suffix}")
    entry = cat.entries[wanted]
    if args.json:
        data = entry.model_dump(mode="json")
        data["path"] = cat.display_path(entry.id)
        data["layer"] = cat.origin.get(entry.id)  # null for an entry of the base catalogue
        data["backlinks"] = [vars(b) for b in cat.backlinks.get(entry.id, [])]
        # json_text: C1 controls and bidirectional overrides escaped too, as kb search --json does
        return Exit.SUCCESS if emit(json_text(data) + "\n") else Exit.USAGE
    from rich.console import Console
    from rich.markdown import Markdown

    from .._markdown import entry_markdown
    from .._terminal import printable

    Console().print(Markdown(printable(entry_markdown(entry, cat)), code_theme="monokai"))
    return Exit.SUCCESS
