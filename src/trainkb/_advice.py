"""The few lines trainkb prints when a run fails: top matches with a one-line fix each."""

from __future__ import annotations

import os
import re

__all__ = ["advise", "one_line_fix"]

_MARKUP = re.compile(r"[*_`#>]+")


def one_line_fix(markdown: str, limit: int = 110) -> str:
    """The first prose sentence of a fix, without Markdown, code or list markers."""
    in_code = False
    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            in_code = not in_code
            continue
        if in_code or not line:
            continue
        line = _MARKUP.sub("", re.sub(r"^(?:[-+]|\d+[.)])\s+", "", line)).strip()
        if not line:
            continue
        sentence = re.split(r"(?<=[.!?])\s", line, maxsplit=1)[0]
        return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"
    return ""


def advise(text: str, top: int = 3, catalogue: str | os.PathLike[str] | None = None,
           heading: str = "trainkb") -> str:
    """Matches for a failure's output as plain text, or '' when nothing is credible."""
    from ._catalogue import load_catalogue
    from ._locate import find_catalogue
    from .search import search

    response = search(text, top=top, catalogue=catalogue)
    if response.abstained or not response.results:
        return ""
    cat = load_catalogue(find_catalogue(catalogue))
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
