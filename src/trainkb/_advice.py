"""The few lines trainkb prints when a run fails: top matches with a one-line fix each."""

from __future__ import annotations

from .catalogue import PathList

__all__ = ["advice_block"]


def advice_block(
    text: str,
    top: int = 3,
    catalogue: PathList | None = None,
    heading: str = "kb",
    explain_abstention: bool = False,
    output: str | None = None,
    ending: str | None = None,
    first_line: int = 1,
) -> str:
    """What a failed run's output means, as plain text: the answer, or the differential with what decides.

    ``heading`` begins with "kb": the block is then marked as kb's own (trainkb._ownoutput), and a log
    that holds it is searched without it.

    Each match carries its record's ``fix_summary`` in the search index, so no record is loaded.
    ``output`` is everything the run printed, when the caller holds it (tells read all of it, and
    the advice never asks for more). An unknown failure gives '' or, with ``explain_abstention``,
    what would help and the closest entries, marked as unconfirmed. ``ending`` is a sentence on how the run
    ended (the signal that killed it), added to the advice where there is advice. ``first_line`` is the
    number of ``text``'s first line in the output it is the end of.
    """
    from dataclasses import replace

    from ._present import block
    from .search import search

    response = search(text, top=top, catalogue=catalogue, first_line=first_line, output=output)
    if response.status == "unknown" and not explain_abstention:
        return ""
    if ending and response.advice:
        response = replace(response, advice=f"{response.advice} {ending}")
    return block(response, heading)
