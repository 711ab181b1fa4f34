"""The few lines trainkb prints when a run fails: top matches with a one-line fix each."""

from __future__ import annotations

from .catalogue import PathList

__all__ = ["advise"]


def advise(
    text: str,
    top: int = 3,
    catalogue: PathList | None = None,
    heading: str = "trainkb",
    explain_abstention: bool = False,
) -> str:
    """Matches for a failure's output as plain text.

    Each match carries its record's ``fix_summary`` in the search index, so no record is loaded.
    When nothing is credible: '' or, with ``explain_abstention``, what would help and the closest
    entries, marked as unconfirmed.
    """
    from ._terminal import printable
    from .search import search

    response = search(text, top=top, catalogue=catalogue)
    if response.abstained or not response.results:
        if not explain_abstention:
            return ""
        lines = [f"── {heading}: no catalogue entry matches this output confidently ──"]
        if response.advice:
            lines.append(f"  what would help: {response.advice}")
        lines += [f"  closest, unconfirmed: {r.id}  {r.title}" for r in response.results]
        return "\n".join(printable(line, newlines=False) for line in lines) + "\n"
    lines = [f"── {heading}: this failure matches ──"]
    for result in response.results:
        if result.confidence == "low":
            continue
        lines.append(f"  {result.id}  {result.title}  [{result.confidence}, {result.score:.0f}]")
        lines.append(f"      fix: {result.fix_summary}")
        lines.append(f"      more: kb show {result.id}")
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"
