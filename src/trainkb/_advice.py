"""The few lines trainkb prints when a run fails: top matches with a one-line fix each."""

from __future__ import annotations

import re

from ._locate import PathList

__all__ = ["advise", "one_line_fix"]

_MARKUP = re.compile(r"`|\*\*|__|^#+\s*|^>\s*")
_LIST = re.compile(r"^(?:[-+*]|\d+[.)])\s+")


def _paragraphs(markdown: str) -> list[str]:
    """Prose paragraphs (code fences dropped), each list item its own paragraph, lines joined."""
    out: list[list[str]] = [[]]
    in_code = False
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            out.append([])
            continue
        if in_code or not line:
            out.append([])
            continue
        if _LIST.match(line):
            out.append([])
            line = _LIST.sub("", line)
        out[-1].append(_MARKUP.sub("", line))
    return [" ".join(p).strip() for p in out if p]


def one_line_fix(markdown: str, limit: int = 110) -> str:
    """The first prose sentence of a fix, skipping a lead-in such as "Work through these in order:"."""
    lead_in = ""
    for paragraph in _paragraphs(markdown):
        sentence = re.split(r"(?<=[.!?])\s", paragraph, maxsplit=1)[0]
        if sentence.endswith(":") and len(sentence) < 50:  # "Work through these in order:"
            lead_in = lead_in or sentence
            continue
        return _clip(sentence.removesuffix(":"), limit)
    return _clip(lead_in, limit)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def advise(text: str, top: int = 3, catalogue: PathList | None = None,
           heading: str = "trainkb") -> str:
    """Matches for a failure's output as plain text, or '' when nothing is credible."""
    from ._layers import load_layers
    from ._locate import find_catalogues
    from .search import search

    response = search(text, top=top, catalogue=catalogue)
    if response.abstained or not response.results:
        return ""
    cat = load_layers(find_catalogues(catalogue))
    lines = [f"── {heading}: this failure matches ──"]
    for result in response.results:
        if result.confidence == "low":
            continue
        entry = cat.entries.get(result.id)
        lines.append(f"  {result.id}  {result.title}  [{result.confidence}, {result.score:.0f}]")
        fix = one_line_fix(entry.fix) if entry else ""
        if fix:
            lines.append(f"      fix: {fix}")
        lines.append(f"      more: kb show {result.id}")
    return "\n".join(lines) + "\n"
