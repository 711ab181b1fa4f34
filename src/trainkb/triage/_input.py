"""Feed the reader: a pasted or piped log, one file, or a `torchrun --log-dir` folder.

The folder layout is DIR/<run_id>/attempt_<n>/<local_rank>/{stdout.log,stderr.log,error.json};
the latest attempt of the newest run is read. Other text files in the folder (a combined log
saved next to it) are read as interleaved output.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .._tail import SEEK_ABOVE, log_encoding, skip_to_tail
from ..ranklog import CHUNK, Reader, Triage, decide, decide_text, is_multirank

if TYPE_CHECKING:
    from ..catalogue import PathList
    from ..search import Index

    Catalogue = PathList | Index | None  # where search finds the entries (see search.search)

__all__ = ["explain", "read_chunks", "stream_chunks", "triage_block", "triage_path", "triage_reader", "triage_text"]

TEXT_SUFFIXES = (".log", ".txt", ".out", ".err")
MAX_FILES = 4096  # a folder with more is not a torchrun log folder; read this many


def read_chunks(path: Path, warn: Callable[[str], None] | None = None) -> Iterator[str]:
    """A log's text in pieces; of a file over SEEK_ABOVE bytes, its last SEEK_ABOVE bytes (``warn`` hears so)."""
    with path.open("rb") as raw:
        yield from stream_chunks(raw, str(path), warn)


def stream_chunks(raw: BinaryIO, name: str, warn: Callable[[str], None] | None = None) -> Iterator[str]:
    """Text read from ``raw`` in pieces, from its tail when it is a long regular file (see read_chunks)."""
    skipped = skip_to_tail(raw, SEEK_ABOVE)
    if skipped and warn is not None:
        kept = SEEK_ABOVE >> 20
        warn(f"{name}: read its last {kept} MiB only ({skipped} bytes skipped); line numbers count from there")
    peek = getattr(raw, "peek", None)  # a log's first bytes say its encoding; a tail read past them is UTF-8
    head = peek(2)[:2] if peek is not None and not skipped else b""
    text = io.TextIOWrapper(raw, encoding=log_encoding(head), errors="replace", newline="")
    while chunk := text.read(CHUNK):
        yield chunk
    text.detach()  # the caller closes ``raw``


def explain(triage: Triage, reader: Reader, catalogue: Catalogue, whole: str | None = None) -> None:
    """Attach the catalogue entry that explains the sole culprit's own error (its lines only).

    With the ``whole`` paste, a rank that failed first with its own exception or signal gets search's
    first entry for that paste, which reads the culprit's failure without its peers' lines: the Ranks
    panel and the matches then name one entry.
    """
    verdict = triage.verdict()
    if verdict is None or verdict.how not in ("exception", "signal", "exited") or not verdict.error:
        return
    from ..search import own_failure, search  # light: no pydantic, YAML or torch

    state = reader.ranks[verdict.rank]
    text = "\n".join(state.tail) if state.tail else verdict.error
    if verdict.error not in text:
        text += "\n" + verdict.error
    if whole is not None and own_failure(triage):
        text = whole
    try:
        response = search(text, top=1, catalogue=catalogue)
    except (OSError, ValueError):  # no catalogue here: the triage stands without an entry
        return
    # a message several causes print still names its closest entry, marked low (unconfirmed)
    if response.results and (not response.abstained or response.symptom is not None):
        best = response.results[0]
        triage.entry = {"id": best.id, "title": best.title, "confidence": best.confidence, "score": best.score}


def triage_reader(
    reader: Reader, catalogue: Catalogue = None, match: bool = True, whole: str | None = None
) -> Triage | None:
    """Decide, and attach the culprit's entry; ``whole``: the text the reader read, when it read only that."""
    if not is_multirank(reader):
        return None
    triage = decide(reader)
    if match:
        explain(triage, reader, catalogue, whole)
    return triage


def triage_text(text: str | Iterable[str], catalogue: Catalogue = None, match: bool = True) -> Triage | None:
    """Triage interleaved output (a string, or chunks of one); None when it is not multi-rank."""
    decided = decide_text(text)
    if decided is None:
        return None
    triage, reader = decided
    if match:
        explain(triage, reader, catalogue, text if isinstance(text, str) else None)
    return triage


def _rank_dirs(root: Path) -> dict[int, Path]:
    """local_rank -> folder of the latest attempt of the newest run under ``root``."""
    found: dict[Path, dict[int, Path]] = {}
    for count, (folder, dirs, _files) in enumerate(os.walk(root)):
        if count >= MAX_FILES:
            break
        here = Path(folder)
        if here.name.isdigit() and here.parent.name.startswith("attempt_"):
            found.setdefault(here.parent, {})[int(here.name)] = here
            dirs.clear()
    if not found:
        return {}

    def key(attempt: Path) -> tuple[float, int]:
        number = attempt.name.removeprefix("attempt_")
        return (attempt.parent.stat().st_mtime, int(number) if number.isdigit() else -1)

    return found[max(found, key=key)]


def _feed_dir(reader: Reader, path: Path, warn: Callable[[str], None] | None) -> None:
    ranks = _rank_dirs(path)
    layout = {p for d in ranks.values() for p in d.iterdir()}
    for rank, folder in sorted(ranks.items()):
        for name in ("stdout.log", "stderr.log"):
            if (folder / name).is_file():
                reader.feed_chunks(read_chunks(folder / name, warn), rank, str(folder / name))
        if (folder / "error.json").is_file():
            reader.feed_error_file(
                (folder / "error.json").read_text(encoding="utf-8", errors="replace"), rank, str(folder / "error.json")
            )
    others = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in TEXT_SUFFIXES and p not in layout)
    for other in others[:MAX_FILES]:
        reader.feed_chunks(read_chunks(other, warn), None, str(other))


def triage_path(
    path: Path, catalogue: Catalogue = None, match: bool = True, warn: Callable[[str], None] | None = None
) -> Triage | None:
    """Triage a log file, an error.json, or a folder of per-rank logs; ``warn`` hears of each file left out."""
    reader = Reader()
    if path.is_dir():
        _feed_dir(reader, path, warn)
    elif path.suffix == ".json":
        rank = path.parent.name
        reader.feed_error_file(
            path.read_text(encoding="utf-8", errors="replace"), int(rank) if rank.isdigit() else 0, str(path)
        )
    else:
        reader.feed_chunks(read_chunks(path, warn))
    if warn is not None:
        for message in reader.skipped:
            warn(message)
    return triage_reader(reader, catalogue, match)


def log_dir_of(cmd: Sequence[str]) -> Path | None:
    """The folder a torchrun command line writes per-rank logs to (`--log-dir DIR`, `--log_dir=DIR`)."""
    for i, arg in enumerate(cmd):
        for flag in ("--log-dir", "--log_dir"):
            if arg == flag and i + 1 < len(cmd):
                return Path(cmd[i + 1])
            if arg.startswith(flag + "="):
                return Path(arg.split("=", 1)[1])
    return None


def triage_block(
    tail: str, catalogue: Catalogue = None, cmd: Sequence[str] = (), heading: str = "kb run: triage"
) -> str:
    """The text block for `kb run`: from the captured tail and, when the command had one, its --log-dir.

    Returns '' when the output is not multi-rank; never raises, so a diagnosis cannot fail the run.
    """
    from ._report import to_text

    log_dir = log_dir_of(cmd)
    try:
        reader = Reader()
        files = log_dir is not None and log_dir.is_dir()
        if log_dir is not None and files:
            _feed_dir(reader, log_dir, None)
        reader.feed(tail)
        # without per-rank files, the entry is search's for the same tail, as kb run's matches below it
        triage = triage_reader(reader, catalogue, whole=None if files else tail)
        return to_text(triage, heading) if triage is not None else ""
    except Exception as exc:  # a diagnosis must never change the outcome of the command it watches
        return f"── {heading}: could not read the ranks' output ({type(exc).__name__}) ──\n"
