"""How a search response reads to a person: the one view `kb search`, `kb run`, the hook, the TUI and the site share.

``view(response)`` decides, once, what each status says and shows: its headline, what each result is
(the answer's confidence, a candidate, or only the closest: a bare score never stands next to "low"),
which results show their fix (the answer's and each candidate's; a guess's fix would read as advice)
and the advice line. The surfaces differ in layout only; the site reads the same words and rules from
its index (``present_contract``, applied by site/static/present.js).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ._terminal import printable

if TYPE_CHECKING:
    from .search import SearchResponse, SearchResult

__all__ = [
    "ADVICE_LEAD",
    "ALSO_RANKED",
    "BANNERS",
    "HEADLINES",
    "LABELS",
    "TITLES",
    "Kind",
    "Label",
    "Row",
    "View",
    "block",
    "present_contract",
    "response_lines",
    "view",
]

# answer: one entry explains it; differential: candidates for a line several causes print; closest: nothing
# recognised, the nearest entries listed; foreign: another stack's error; empty: no entry shares anything
Kind = Literal["answer", "differential", "closest", "foreign", "empty"]
# what a result's place rests on: the answer's confidence, a differential's candidate, or nearness alone
Label = Literal["high", "medium", "candidate", "closest"]

# the frame of a block kb prints into a terminal or a log: "── kb search: <banner> ──"
BANNERS: dict[Kind, str] = {
    "answer": "this failure matches",
    "differential": "several causes print this failure",
    "closest": "no catalogue entry matches this output confidently",
    "foreign": "no catalogue entry matches this output confidently",
    "empty": "no catalogue entry matches this output confidently",
}
# the line over the results; an answer needs none, its entry comes first
HEADLINES: dict[Kind, str | None] = {
    "answer": None,
    "differential": "Several causes print this line — what decides between them:",
    "closest": "No confident match — closest entries, unconfirmed:",
    "foreign": "No entry matches: the catalogue covers training failures only.",
    "empty": "No entry matches.",
}
# a pane or card title naming the status in a word or two
TITLES: dict[Kind, str] = {
    "answer": "Answer",
    "differential": "Differential",
    "closest": "No confident match",
    "foreign": "No confident match",
    "empty": "No confident match",
}
LABELS: dict[Label, str] = {
    "high": "high",
    "medium": "medium",
    "candidate": "candidate",
    "closest": "closest, unconfirmed",
}
ALSO_RANKED = "Also ranked, unconfirmed"  # the results after the answer or the candidates
ADVICE_LEAD = "What would help:"
FOREIGN_MARK = "This traceback comes from `"  # how search's advice for another stack's error begins

TITLE_CHARS = 90  # a title cut to this in tables, so a row fits a terminal
EVIDENCE_CHARS = 110


@dataclass(frozen=True)
class Row:
    """One result as shown: what it is, and whether its fix is shown."""

    result: SearchResult
    label: Label
    shows_fix: bool

    @property
    def label_text(self) -> str:
        return LABELS[self.label]


@dataclass(frozen=True)
class View:
    """A response as every surface shows it: the status, its words, the rows and the advice."""

    kind: Kind
    rows: list[Row]
    leads: int  # the first rows that are the answer or the candidates; the rest are also ranked, unconfirmed
    advice: str | None  # the advice line, lead included

    @property
    def banner(self) -> str:
        return BANNERS[self.kind]

    @property
    def headline(self) -> str | None:
        return HEADLINES[self.kind]

    @property
    def title(self) -> str:
        return TITLES[self.kind]


def _kind(response: SearchResponse) -> Kind:
    if response.status == "answered" and response.results:
        return "answer"
    if response.status == "differential" and response.candidates:
        return "differential"
    if response.results:
        return "closest"
    return "foreign" if (response.advice or "").startswith(FOREIGN_MARK) else "empty"


def _label(kind: Kind, response: SearchResponse, position: int) -> Label:
    """Only the answer carries its confidence: a runner-up to it is as unconfirmed as the closest entries."""
    result = response.results[position]
    if kind == "answer" and position == 0 and result.confidence != "low":
        return result.confidence
    if kind == "differential" and position < response.candidates:
        return "candidate"
    return "closest"


def view(response: SearchResponse) -> View:
    """What ``response`` shows, on every surface."""
    kind = _kind(response)
    rows = []
    for position, result in enumerate(response.results):
        label = _label(kind, response, position)
        rows.append(Row(result, label, label != "closest" and bool(result.fix_summary)))
    leads = 1 if kind == "answer" else response.candidates if kind == "differential" else 0
    advice = f"{ADVICE_LEAD} {response.advice}" if response.advice else None
    return View(kind, rows, leads, advice)


def present_contract() -> dict[str, Any]:
    """The view's words for the site's index: site/static/present.js applies the same rules with them."""
    return {
        "headlines": dict(HEADLINES),
        "titles": dict(TITLES),
        "labels": dict(LABELS),
        "also_ranked": ALSO_RANKED,
        "advice_lead": ADVICE_LEAD,
        "foreign_mark": FOREIGN_MARK,
    }


def _cut(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def _evidence(result: SearchResult) -> list[str]:
    """The line that decided, once: the strongest piece of evidence and what it matched."""
    if not result.evidence:
        return []
    ev = result.evidence[0]
    return [f"      line {ev.line}: {_cut(ev.text.strip(), EVIDENCE_CHARS)}"]


def _also_ranked(shown: View) -> list[str]:
    others = [row.result.id for row in shown.rows[shown.leads :]]
    return [f"{ALSO_RANKED}: {' '.join(others)}"] if others else []


def _answer(shown: View, response: SearchResponse) -> list[str]:
    row = shown.rows[0]
    first = row.result
    layer = f"  [{first.layer}]" if first.layer else ""
    lines = [
        f"{first.id}  {first.title}{layer}",
        f"      {row.label_text}: {response.why or 'its signature matched'}",
    ]
    if row.shows_fix:
        lines.append(f"      fix: {first.fix_summary}")
    lines += _evidence(first)
    lines.append(f"      more: kb show {first.id}")
    return lines + _also_ranked(shown)


def _differential(shown: View, response: SearchResponse) -> list[str]:
    candidates = shown.rows[: shown.leads]
    first = candidates[0].result
    where = f"line {first.evidence[0].line}" if first.evidence else "the line"
    lines = [str(shown.headline), f"  {where}: {_cut(response.symptom or '', EVIDENCE_CHARS)}"]
    for row in candidates:
        result = row.result
        sign = result.tell.says if result.tell else "no sign of its own in the output: compare its symptom"
        mark = "seen in the output: " if result.tell and result.tell.fired else "look for: "
        lines.append(f"  {result.id:<5} {_cut(result.title, TITLE_CHARS)}")
        lines.append(f"        {mark}{sign}")
        if row.shows_fix:
            lines.append(f"        fix: {result.fix_summary}")
    return lines + _also_ranked(shown)


def _closest(shown: View) -> list[str]:
    lines = [str(shown.headline)]
    if not shown.rows:
        return lines
    for row in shown.rows:
        layer = f"  [{row.result.layer}]" if row.result.layer else ""
        lines.append(f"  {row.result.id:<5} {_cut(row.result.title, TITLE_CHARS)}{layer}")
    return lines + _evidence(shown.rows[0].result)


def response_lines(response: SearchResponse) -> list[str]:
    """The response as terminal-safe lines: the answer, the differential, or the closest entries and advice."""
    shown = view(response)
    if shown.kind == "answer":
        lines = _answer(shown, response)
    elif shown.kind == "differential":
        lines = _differential(shown, response)
    else:
        lines = _closest(shown)
    if shown.advice:
        lines += ["", shown.advice]
    return [printable(line, newlines=False) for line in lines]


def block(response: SearchResponse, heading: str) -> str:
    """The response as a block framed as kb's own (trainkb._ownoutput), so a saved copy is not read back as
    the failure: ``heading`` begins with "kb"."""
    lines = [f"── {heading}: {BANNERS[_kind(response)]} ──"]
    lines += [f"  {line}" if line else "" for line in response_lines(response)]
    return "\n".join(lines) + "\n"
