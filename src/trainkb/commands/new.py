"""`kb new --from crash.log`: start a record from a failure's output (or `kb new ID` for a blank one)."""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import os
import sys
import tempfile
from pathlib import Path

from .._tail import PIPE_TAIL_BYTES, decode_log
from ..catalogue import bundled_folder, find_catalogues, record_files
from ._common import open_catalogue, refuse_device_path
from ._exit import Exit, UsageError
from .search import _read_stdin


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "id",
        nargs="?",
        default=None,
        metavar="ID",
        help="start a blank record with this id (or give the id of the record --from writes)",
    )
    parser.add_argument(
        "--from",
        dest="source",
        metavar="FILE",
        help="the failure's output: a log or traceback ('-' reads stdin; piped stdin is read too)",
    )
    parser.add_argument("--area", help="area of the record (default: the area of the entry search ranks first)")
    parser.add_argument("--section", help="section of the area (default: that of the nearest entry, else the first)")
    parser.add_argument("--id", dest="entry_id", metavar="ID", help="the record's id (default: the next free one)")
    parser.add_argument("--dry-run", action="store_true", help="print the record instead of writing it")
    parser.add_argument(
        "--json", action="store_true", help="print {path, id, area, ...} as JSON (and the record on --dry-run)"
    )


def _read(source: str | None, blank: bool) -> str | None:
    """The failure's output: --from FILE, '-' or piped stdin (not read for a blank record, `kb new ID`).

    Only the tail is kept, as `kb search` keeps it; a FIFO is read to its end, a device is refused
    (as `kb triage` refuses it).
    """
    try:
        if source == "-" or (source is None and not blank and not sys.stdin.isatty()):
            return _read_stdin().text
        if source is None:
            return None
        path = Path(source)
        if path.is_dir():
            raise ValueError(f"{source} is a folder; give the log file")
        refuse_device_path(path, source)
        with path.open("rb") as handle:
            size = path.stat().st_size
            if size > PIPE_TAIL_BYTES:
                handle.seek(size - PIPE_TAIL_BYTES)
            data = handle.read(PIPE_TAIL_BYTES)
    except OSError as exc:
        raise ValueError(f"cannot read {source}: {exc.strerror or exc}") from None
    return decode_log(data)


def run(args: argparse.Namespace) -> int:
    from .._newrecord import DraftError, draft_record, render_record

    if args.id and args.entry_id and args.id.upper() != args.entry_id.upper():
        raise UsageError(f"two different ids given: {args.id} and --id {args.entry_id}")
    try:
        text = _read(args.source, blank=args.id is not None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    wanted = args.entry_id or args.id
    if text is not None and not text.strip():
        raise UsageError("the failure's output is empty")
    if text is None and wanted is None:
        raise UsageError("give the failure's output (--from FILE, or pipe it in), or an id for a blank record")
    cat = open_catalogue(args)
    response = None
    if text is not None:
        from ..search import search

        response = search(text, top=5, catalogue=find_catalogues(args.catalogue))
    try:
        draft = draft_record(cat, text, response, area=args.area, section=args.section, entry_id=wanted)
    except DraftError as exc:
        raise UsageError(str(exc)) from None
    record = render_record(draft)
    layer = find_catalogues(args.catalogue)[-1]
    if layer.resolve() == bundled_folder("catalogue").resolve() and not args.dry_run:
        raise UsageError(
            "the catalogue bundled with trainkb is read-only; give --catalogue DIR "
            "(a folder with catalogue.yaml holds your own records)"
        )
    path = layer / draft.area / f"{draft.id}-{draft.slug}.yaml"
    summary = {
        "path": str(path),
        "id": draft.id,
        "area": draft.area,
        "section": draft.section,
        "title": draft.title,
        "signatures": len(draft.signatures),
        "also_matches": draft.also_matches,
        "written": not args.dry_run,
    }
    if args.dry_run:
        if args.json:  # a script that asked for JSON gets JSON, the record inside it
            print(json.dumps({**summary, "record": record}, indent=2))
        else:
            sys.stdout.write(record)
        return Exit.SUCCESS
    taken = [p for p in record_files(layer) if p.parent.name == draft.area and p.name.startswith(f"{draft.id}-")]
    if taken:
        raise UsageError(f"{taken[0]} already exists; not overwriting it")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _create_whole(path, record)
    except FileExistsError:
        raise UsageError(f"{path} already exists; not overwriting it") from None
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"wrote {path}")
        print(
            f"next: write the TODOs (`kb lint` lists them), then `kb check {draft.id}`, and confirm "
            f"`kb search` ranks {draft.id} first for the failure"
        )
    return Exit.SUCCESS


def _create_whole(path: Path, text: str) -> None:
    """Create ``path`` holding ``text``, or nothing at all: written beside it under a hidden temporary
    name, then linked into place, which fails rather than overwrite a record made meanwhile. A full
    disk or a file size limit leaves no truncated record to block the rerun."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(stream.fileno(), 0o666 & ~umask)  # as a plain open would make it
            os.fsync(stream.fileno())
        try:
            os.link(temp, path)
        except FileExistsError:
            raise
        except OSError:  # a file system without hard links: rename, having looked first
            if os.path.lexists(path):
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
            os.rename(temp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
