"""Understand a paste: clean it, find the exception messages in it, and say what it is.

A paste is a Python traceback (possibly chained, possibly relayed by a launcher), a log
(NCCL, torchrun, the shell), or a prose description with an error quoted somewhere in
it. Search needs the lines with their original numbers (for evidence), the messages
weighted by how likely each is the real failure (the final exception of the last
traceback, or the root-cause rank of a torchrun failure), and the prose for the term
model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .._ownoutput import OWN, own_lines
from ._policy import PASTE

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Literal

__all__ = [
    "MAX_CHARS",
    "Line",
    "LineRole",
    "Message",
    "Query",
    "QueryKind",
    "clean_lines",
    "parse",
    "paste_tail",
    "searched_part",
    "unescaped",
]

# the paste limits and message weights other modules read by name
MAX_CHARS, FAILURE_WEIGHT = PASTE.max_chars, PASTE.failure_weight  # as the package has always exported them


if TYPE_CHECKING:  # annotations only
    # what a line is in a traceback or log: an exception or log message, a stack frame, a "Traceback" header,
    # a line that only sets the scene (context), or anything else
    LineRole = Literal["text", "frame", "header", "message", "context"]
    # what the paste as a whole looks like
    QueryKind = Literal["traceback", "log", "prose"]


@dataclass(frozen=True)
class Line:
    """One line of the paste, cleaned; ``number`` is 1-based in the original input."""

    number: int
    text: str
    rank: int | None = None
    role: LineRole = "text"


@dataclass(frozen=True)
class Message:
    """An exception or warning message, possibly spread over several lines."""

    type: str | None
    text: str
    line_index: int  # index into Query.lines of the line that carries the type (Evidence.line counts from 1)
    weight: float


@dataclass
class Query:
    """A paste read as search reads it: its kind, its cleaned lines, the messages among them and its prose."""

    kind: QueryKind
    lines: list[Line]
    messages: list[Message] = field(default_factory=list)
    prose: str = ""
    # the paste holds a launcher's failure summary (torchrun's ChildFailedError) and no exception of
    # the failing worker: the real error is above the summary, not in the paste
    launcher_only: bool = False
    # the paste stops inside a traceback, before its exception: the failure itself is not in it
    cut: bool = False


def paste_tail(text: str) -> tuple[str, int]:
    """The last ``MAX_CHARS`` characters of a paste, starting on a whole line when one starts just past
    the cut, and how many lines came before them."""
    if len(text) <= MAX_CHARS:
        return text, 0
    cut = len(text) - MAX_CHARS
    newline = text.find("\n", cut)
    cut = newline + 1 if 0 <= newline < cut + PASTE.newline_search else cut
    return text[cut:], text.count("\n", 0, cut)


def _cap(text: str) -> tuple[str, int]:
    """The tail of ``text`` within the limits, and how many lines were dropped before it."""
    text, dropped = paste_tail(text)
    if text.count("\n") >= PASTE.max_lines:
        parts = text.split("\n")
        dropped += len(parts) - PASTE.max_lines
        text = "\n".join(parts[-PASTE.max_lines :])
    return text, dropped


def searched_part(text: str) -> tuple[int, int]:
    """(lines of ``text`` before the part search reads, characters in that part): over the paste limits
    search reads a text's tail only, as ``parse`` cuts it."""
    kept, dropped = _cap(text.removeprefix("\ufeff"))
    return dropped, len(kept)


def _unescape(raw: str) -> str:
    """One line without its terminal escapes and control characters; a character that stands between
    words (``PASTE.between_words``) becomes a space, not a join."""
    return PASTE.control.sub("", PASTE.ansi.sub("", raw.replace(PASTE.between_words, " ")))


_LINE = re.compile(r"[^\r\n]+")


def unescaped(text: str) -> str:
    """``text`` cleaned of escapes line by line as search cleans a paste's lines (an unended OSC sequence ends
    with its line), its line breaks and tabs kept: what a paste box can show and search reads the same."""
    return _LINE.sub(lambda line: _unescape(line.group()), text)


def _clean(raw: str) -> tuple[str, int | None]:
    """Drop colour codes, progress-bar redraws, rank/quote prefixes and box drawing."""
    if "\r" in raw:
        segments = [s for s in raw.split("\r") if s.strip()]
        raw = segments[-1] if segments else ""
    raw = _unescape(raw[: PASTE.raw_line_chars])
    rank = None
    for _ in range(PASTE.max_prefixes):
        match = PASTE.prefix.match(raw)
        if not match or not match.group(0) or (match.group(2) is not None and not raw[match.end() :].strip()):
            break  # a progress bar alone on its line stays what it is
        if match.group(1) is not None:
            rank = int(match.group(1))
        raw = raw[match.end() :]
    return PASTE.box.sub("", raw)[: PASTE.max_line_chars].rstrip(), rank


def clean_lines(text: str) -> list[str]:
    """Every line of a whole output (its last ``PASTE.max_output_chars``), cleaned as a paste's lines are."""
    raws = text[-PASTE.max_output_chars :].split("\n")
    own = own_lines(raws) if OWN.mark in text else set()  # kb's own advice in a saved log: not the output
    return ["" if index in own else _clean(raw)[0] for index, raw in enumerate(raws)]


def _split(text: str | bytes, first_line: int, skip: frozenset[int] = frozenset()) -> list[Line]:
    """The paste's lines, numbered; kb's own blocks and the lines numbered in ``skip`` are left blank."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text, dropped = _cap(text.removeprefix("\ufeff"))  # a saved file's BOM is no part of its first line
    raws = text.split("\n")
    own = own_lines(raws) if OWN.mark in text else set()  # kb's own advice in a saved log: not the failure
    lines = []
    for offset, raw in enumerate(raws):
        number = first_line + dropped + offset
        cleaned, rank = _clean(raw) if offset not in own and number not in skip else ("", None)
        lines.append(Line(number, cleaned, rank))
    return lines


def _exception_at(text: str, in_traceback: bool) -> tuple[str, str] | None:
    """(type, message) when ``text`` is an exception or warning line."""
    stripped = text.strip().strip(PASTE.code_quotes)
    for pattern in (PASTE.warn_line, PASTE.exc_line):
        match = pattern.match(stripped)
        if match and (match.group("msg") or in_traceback or pattern is PASTE.warn_line or "." in match.group("type")):
            return match.group("type"), (match.group("msg") or "").strip()
    match = PASTE.what.match(stripped)
    if match:
        return PASTE.what_type, match.group("msg").strip()
    match = PASTE.exc_inline.search(stripped)
    if match:
        return match.group("type"), match.group("msg").strip().rstrip(PASTE.quotes)
    match = PASTE.nccl_line.search(stripped)
    if match:
        return PASTE.nccl_type, match.group("msg").strip().rstrip(PASTE.quotes)
    return None


def _is_structural(text: str) -> bool:
    return bool(not text.strip() or PASTE.tb_header.search(text) or PASTE.chain.search(text) or PASTE.frame.match(text))


def _collect(lines: list[Line]) -> tuple[list[Line], list[tuple[str, str, int, int]]]:
    """Mark roles and find (type, message, line index, traceback block) of every exception."""
    out: list[Line] = []
    found: list[tuple[str, str, int, int]] = []
    block, in_tb, i = 0, False, 0
    while i < len(lines):
        line = lines[i]
        text = line.text
        if PASTE.tb_header.search(text):
            in_tb = True
            out.append(Line(line.number, text, line.rank, "header"))
            i += 1
            continue
        if PASTE.chain.search(text):
            out.append(Line(line.number, text, line.rank, "header"))
            i += 1
            continue
        if PASTE.frame_start.match(text):  # a paste may begin mid-traceback, without its header
            in_tb = True
        if in_tb and PASTE.frame.match(text):
            out.append(Line(line.number, text, line.rank, "frame"))
            i += 1
            # the source line under a frame is code, not a message (pastes often lose its indent)
            if (
                i < len(lines)
                and lines[i].text.strip()
                and not _is_structural(lines[i].text)
                and _exception_at(lines[i].text, True) is None
            ):
                out.append(Line(lines[i].number, lines[i].text, lines[i].rank, "frame"))
                i += 1
            continue
        hit = _exception_at(text, in_tb)
        if hit is None:
            out.append(line)
            i += 1
            continue
        kind, message = hit
        out.append(Line(line.number, text, line.rank, "message"))
        at = len(out) - 1
        i += 1
        extra = 0
        runs_on = in_tb or not message or message.endswith(PASTE.runs_on)
        while (
            i < len(lines)
            and extra < PASTE.max_continuation
            and not _is_structural(lines[i].text)
            and (runs_on or lines[i].text[:1].isspace())
            and (not message or _exception_at(lines[i].text, False) is None)
        ):
            message = f"{message} {lines[i].text.strip()}".strip()
            out.append(Line(lines[i].number, lines[i].text, lines[i].rank, "message"))
            i += 1
            extra += 1
        found.append((kind, message, at, block))
        if in_tb:
            nxt = lines[i].text if i < len(lines) else ""
            if not PASTE.chain.search(nxt) and not (
                not nxt.strip() and i + 1 < len(lines) and PASTE.chain.search(lines[i + 1].text)
            ):
                block += 1
            in_tb = False
        else:  # a warning or error printed outside a traceback is not part of the next traceback's chain
            block += 1
    return out, found


def _root_cause(lines: list[Line]) -> tuple[int | None, list[tuple[str, int]]]:
    """The failing rank and its `traceback :` field from a torchrun ChildFailedError summary."""
    for index, line in enumerate(lines):
        if not PASTE.root_cause.search(line.text):
            continue
        rank, extra = None, []
        for j in range(index + 1, min(index + PASTE.root_cause_lines, len(lines))):
            match = PASTE.field.match(lines[j].text)
            if not match:
                continue
            if match.group(1) == "rank":
                digits = re.match(r"\d+", match.group(2))
                rank = int(digits.group(0)) if digits else None
            elif match.group(1) == "traceback" and PASTE.no_traceback not in match.group(2):
                extra.append((match.group(2).strip(), j))
        return rank, extra
    return None, []


def _is_context(text: str) -> bool:
    """A configuration dump, command line, environment listing or progress bar line."""
    if (
        PASTE.progress.search(text)
        or PASTE.command.search(text)
        or PASTE.setting.match(text)
        or PASTE.environment.match(text)
        or PASTE.dump_start.match(text)
    ):
        return True
    options = PASTE.option.findall(text)  # a command line's options, unless they are named inside a sentence
    return (
        len(options) >= PASTE.min_options
        and len(PASTE.sentence.findall(PASTE.option.sub(" ", text))) < PASTE.sentence_words
    )


def _prose_line(text: str) -> str:
    """A line for the prose model, without the items of a configuration or key list dumped into it."""
    return PASTE.dump_item.sub(" ", text) if len(PASTE.dump_item.findall(text)) >= PASTE.min_dump_items else text


def _prose_of(lines: list[Line]) -> str:
    """The text the prose model reads: text and message lines, without dumped configurations."""
    return "\n".join(_prose_line(line.text) for line in lines if line.role in ("text", "message"))


def _real(found: list[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    """The exceptions that are not a wrapper relaying another one."""
    return [f for f in found if f[0].rsplit(".", 1)[-1] not in PASTE.wrapper_types and not PASTE.wrapper.match(f[1])]


def _launcher_only(lines: list[Line], found: list[tuple[str, str, int, int]]) -> bool:
    """True when a launcher's failure summary is all the paste says about the failure."""
    summary = any(f[0].rsplit(".", 1)[-1] in PASTE.wrapper_types for f in found) or any(
        PASTE.root_cause.search(line.text) or PASTE.launcher_failed.search(line.text) for line in lines
    )
    return summary and not _real(found) and not _root_cause(lines)[1]


def _weigh(lines: list[Line], found: list[tuple[str, str, int, int]]) -> list[Message]:
    """Weight 1.0 for the failure itself: the last traceback block (root-cause rank first)."""
    root_rank, extra = _root_cause(lines)
    real = _real(found)
    if root_rank is not None and any(lines[f[2]].rank == root_rank for f in real):
        real = [f for f in real if lines[f[2]].rank == root_rank]
    last_block = real[-1][3] if real else -1
    genuine = {f[2] for f in real}
    messages = []
    for kind, text, at, block in found:
        if at not in genuine:
            weight = PASTE.wrapper_weight
        elif block == last_block:
            weight = FAILURE_WEIGHT
        else:
            weight = PASTE.other_weight
        messages.append(Message(kind, text, at, weight))
    messages += [Message(None, text, at, FAILURE_WEIGHT) for text, at in extra]
    return messages


def _kind(lines: list[Line], messages: list[Message]) -> QueryKind:
    if any(line.role in ("header", "frame") for line in lines) or any(
        (m.type or "").endswith(t) for m in messages for t in PASTE.wrapper_types
    ):
        return "traceback"
    loggy = sum(1 for line in lines if line.role == "message" or PASTE.loggy.search(line.text))
    wordy = sum(
        1
        for line in lines
        if line.role == "text"
        and len(PASTE.sentence.findall(line.text)) >= PASTE.sentence_words
        and not PASTE.loggy.search(line.text)
    )
    return "log" if loggy and loggy >= wordy else "prose"


def parse(text: str | bytes, first_line: int = 1, skip: frozenset[int] = frozenset()) -> Query:
    """Split, clean and classify ``text``; never raises on any input.

    ``first_line`` numbers the text's first line, for a caller that passes only the tail of
    a longer output and wants evidence to point into the whole of it. The lines numbered in
    ``skip`` are read as blank (another rank's teardown, see _ranks.py).
    """
    lines, found = _collect(_split(text, first_line, skip))
    lines = [
        Line(line.number, line.text, line.rank, "context") if line.role == "text" and _is_context(line.text) else line
        for line in lines
    ]
    messages = _weigh(lines, found)
    last = next((line.role for line in reversed(lines) if line.text.strip()), None)
    cut = last in ("header", "frame")
    return Query(_kind(lines, messages), lines, messages, _prose_of(lines), _launcher_only(lines, found), cut)
