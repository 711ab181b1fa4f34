"""How a search response reads to a person, in one place for `kb search`, `kb run` and the hook.

Each status reads differently: an answer gives one entry, why it and not its siblings, and its
fix; a differential gives the candidates as a table of what decides between them and each fix;
an unknown failure gives the advice and the closest entries, marked unconfirmed and without a
fix (a guess's fix would read as advice). A bare score never stands next to "low": a row says
what it is (answer, candidate, closest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._terminal import printable

if TYPE_CHECKING:
    from .search import SearchResponse, SearchResult

__all__ = ["label", "response_lines"]

TITLE_CHARS = 90  # a title cut to this in tables, so a row fits a terminal
EVIDENCE_CHARS = 110


def label(response: SearchResponse, position: int) -> str:
    """What the result at ``position`` is: the answer's confidence, a candidate, or only the closest."""
    result = response.results[position]
    if response.status == "answered" and result.confidence != "low":
        return result.confidence
    if response.status == "differential" and position < response.candidates:
        return "candidate"
    return "closest"


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _evidence(result: SearchResult) -> list[str]:
    """The line that decided, once: the strongest piece of evidence and what it matched."""
    if not result.evidence:
        return []
    ev = result.evidence[0]
    return [f"      line {ev.line}: {_cut(ev.text.strip(), EVIDENCE_CHARS)}"]


def _answer(response: SearchResponse) -> list[str]:
    first = response.results[0]
    layer = f"  [{first.layer}]" if first.layer else ""
    lines = [
        f"{first.id}  {first.title}{layer}",
        f"      {first.confidence}: {response.why or 'its signature matched'}",
    ]
    lines.append(f"      fix: {first.fix_summary}")
    lines += _evidence(first)
    lines.append(f"      more: kb show {first.id}")
    others = [r.id for r in response.results[1:]]
    if others:
        lines.append(f"Also ranked, unconfirmed: {' '.join(others)}")
    return lines


def _differential(response: SearchResponse) -> list[str]:
    candidates = response.results[: response.candidates]
    where = f"line {candidates[0].evidence[0].line}" if candidates[0].evidence else "this line"
    lines = [f"Several causes print {where}: {_cut(response.symptom or '', EVIDENCE_CHARS)}"]
    lines.append("What decides between them:")
    for result in candidates:
        sign = result.tell.says if result.tell else "no sign of its own in the output: compare its symptom"
        mark = "seen in the output: " if result.tell and result.tell.fired else "look for: "
        lines.append(f"  {result.id:<5} {_cut(result.title, TITLE_CHARS)}")
        lines.append(f"        {mark}{sign}")
        lines.append(f"        fix: {result.fix_summary}")
    others = [r.id for r in response.results[response.candidates :]]
    if others:
        lines.append(f"Also ranked, unconfirmed: {' '.join(others)}")
    return lines


def _unknown(response: SearchResponse) -> list[str]:
    if not response.results:
        return ["No entry matches."]
    lines = ["No confident match — closest entries, unconfirmed:"]
    for result in response.results:
        layer = f"  [{result.layer}]" if result.layer else ""
        lines.append(f"  {result.id:<5} {_cut(result.title, TITLE_CHARS)}{layer}")
    lines += _evidence(response.results[0])
    return lines


def response_lines(response: SearchResponse) -> list[str]:
    """The response as terminal-safe lines: the answer, the differential, or the closest entries and advice."""
    if response.status == "answered" and response.results:
        lines = _answer(response)
    elif response.status == "differential" and response.candidates:
        lines = _differential(response)
    else:
        lines = _unknown(response)
    if response.advice:
        lines += ["", f"What would help: {response.advice}"]
    return [printable(line, newlines=False) for line in lines]
