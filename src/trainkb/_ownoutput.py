"""The blocks kb prints into a run's output, marked so that kb never reads them back as the failure.

`kb run`'s diagnosis and triage, the installed hook's advice and the text of `kb search` and
`kb triage` end up in saved logs beside the failure they explain. Each such block starts with a
heading line that begins with ``OWN.mark`` and goes on over the indented (or blank) lines under it. A rank prefix
in front of every line (torchrun's `[rank3]:`, `[default3]:`) does not hide a block, and lines of
other ranks may come between a block's lines. Search, triage and `kb new --from` leave these
blocks out. Standard library only: search and triage import it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["OWN", "OwnOutputRules", "closing_heading", "in_own_block", "own_lines"]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class OwnOutputRules:
    """What marks a block of kb's own in an output: the browser's search reads the same (the search contract)."""

    mark: str  # the start of every heading kb prints: "── kb run: python exited with status 1: ... ──"
    prefix: re.Pattern[str]  # the rank prefixes in front of a line, which name its speaker


OWN = OwnOutputRules(mark="── kb", prefix=re.compile(r"(?:\[(?:rank|default)\s*\d+\]\s*:\s?)*"))
MAX_BLOCK_LINES = (
    400  # lines looked back over for a block's heading (kb's are far shorter, other ranks' may interleave)
)


def _split(line: str) -> tuple[str, str]:
    """(whose line it is: its rank prefixes without spaces, the line after them)."""
    match = OWN.prefix.match(line)
    end = match.end() if match else 0
    return line[:end].replace(" ", ""), line[end:]


def _heading(body: str) -> bool:
    return body.startswith(OWN.mark) and body[len(OWN.mark) : len(OWN.mark) + 1] in (" ", ":")


def _continues(body: str) -> bool:
    return not body or body[:1] in (" ", "\t")


def own_lines(lines: Sequence[str]) -> set[int]:
    """The indexes of the lines that belong to a block kb printed."""
    own: set[int] = set()
    inside: dict[str, bool] = {}  # per speaker: whether its last line was in one of kb's blocks
    for index, line in enumerate(lines):
        speaker, body = _split(line.rstrip("\r"))
        if _heading(body) or (inside.get(speaker) and _continues(body)):
            inside[speaker] = True
            own.add(index)
        else:
            inside[speaker] = False
    return own


def in_own_block(text: str, start: int) -> bool:
    """Whether the line that begins at ``text[start]`` belongs to a block kb printed; only the text
    before it is looked at, so a reader can ask about one line of a large chunk."""
    end = text.find("\n", start)
    speaker, body = _split(text[start : end if end >= 0 else len(text)].rstrip("\r"))
    if _heading(body):
        return True
    if not _continues(body):
        return False
    pos, seen = start, 0
    while pos > 0 and seen < MAX_BLOCK_LINES:
        begin = text.rfind("\n", 0, pos - 1) + 1
        whose, before = _split(text[begin : pos - 1].rstrip("\r"))
        pos, seen = begin, seen + 1
        if whose != speaker:  # another rank's line between this block's lines
            continue
        if _heading(before):
            return True
        if not _continues(before):
            return False
    return False


def closing_heading(text: str) -> str | None:
    """The heading of the block of kb's that ``text`` ends with (blank lines aside), rank prefix removed; None
    when the text ends otherwise. A command run under `kb run` whose output ends so was diagnosed from inside
    (a `kb run` within it, the installed hook)."""
    lines = text.rstrip().split("\n")[-MAX_BLOCK_LINES:]
    if OWN.mark not in text or not lines:
        return None
    own = own_lines(lines)
    last = len(lines) - 1
    speaker = _split(lines[last].rstrip("\r"))[0]
    for index in range(last, -1, -1):
        whose, body = _split(lines[index].rstrip("\r"))
        if whose != speaker:  # another rank's line between this block's lines
            continue
        if index not in own:
            return None
        if _heading(body):
            return body
    return None
