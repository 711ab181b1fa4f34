"""How a search response reads to a person: the one view `kb search`, `kb run`, the hook, the TUI and the site share.

``view(response)`` decides, once, what each status says and shows: its headline, what each result is
(the answer's confidence, a candidate, or only the closest: a bare score never stands next to "low"),
which results show their fix (the answer's and each candidate's; a guess's fix would read as advice)
and the advice line. The surfaces differ in layout only; the site reads the same words and rules from
its index (``present_contract``, applied by site/static/present.js).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ._terminal import printable

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any, Literal

    from .search import SearchResponse, SearchResult

__all__ = [
    "ADVICE_LEAD",
    "ALSO_RANKED",
    "BANNERS",
    "DIAGNOSIS",
    "HEADLINES",
    "LABELS",
    "TITLES",
    "Kind",
    "Label",
    "Row",
    "View",
    "block",
    "diagnosis",
    "entry_diagnosis",
    "present_contract",
    "response_lines",
    "view",
]

if TYPE_CHECKING:  # annotations only
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

# the Markdown a "copy diagnosis" puts on the clipboard, for an issue tracker or a chat (present.js fills in the same)
DIAGNOSIS: dict[str, str] = {
    "answer": "trainkb answer, {label} confidence",
    "answer_status": "answer, {label}",
    "lead": "trainkb: {headline}",
    "evidence": "Evidence, line {line}:",
    "seen": "In the paste:",
    "look": "Look for:",
    "fix": "Fix:",
    "entry": "Entry:",
    "unlinked": "{id} in the trainkb catalogue (`kb show {id}`)",
    "alone": "read on its own, not matched against a paste",
}
MD_CODE_CHARS = 200  # of a quoted line in a diagnosis

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
        "diagnosis": dict(DIAGNOSIS),
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


Link = Callable[[str], str | None]  # an entry's page a reader elsewhere can open (http or https), or None


def _md_code(text: str) -> str:
    """One quoted line as Markdown inline code, cut to a glance, whatever backticks it holds."""
    cut = text if len(text) <= MD_CODE_CHARS else text[:MD_CODE_CHARS] + "…"
    longest = max((len(run) for run in re.findall("`+", cut)), default=0)
    pad = " " if longest else ""
    return f"{'`' * (longest + 1)}{pad}{cut}{pad}{'`' * (longest + 1)}"


def _md_line(text: str) -> str:
    return printable(text, newlines=False)


def _md_evidence(result: SearchResult) -> str | None:
    """The line a signature matched (else the first evidence), as the diagnosis quotes it."""
    lines = [e for e in result.evidence if e.via == "signature"] or result.evidence
    if not lines:
        return None
    return f"- {DIAGNOSIS['evidence'].format(line=lines[0].line)} {_md_code(_md_line(lines[0].text.strip()))}"


def _md_entry(entry_id: str, title: str, status: str) -> str:
    return f"**{entry_id}: {_md_line(title)}** ({status})"


def _md_link(entry_id: str, link: Link) -> str:
    return f"- {DIAGNOSIS['entry']} {link(entry_id) or DIAGNOSIS['unlinked'].format(id=entry_id)}"


def _md_row(row: Row, link: Link, evidence: bool, said: str = "") -> str:
    """One result: its id and title with what it is, the evidence line, its sign (unless ``said``, the answer's
    why above it, already quotes it), its fix and its page."""
    result = row.result
    status = (
        DIAGNOSIS["answer_status"].format(label=row.label_text) if row.label in ("high", "medium") else row.label_text
    )
    lines = [_md_entry(result.id, result.title, status)]
    quoted = _md_evidence(result) if evidence else None
    if quoted:
        lines.append(quoted)
    if result.tell and not (result.tell.fired and result.tell.says in said):
        lines.append(f"- {DIAGNOSIS['seen' if result.tell.fired else 'look']} {_md_line(result.tell.says)}")
    if row.shows_fix:
        lines.append(f"- {DIAGNOSIS['fix']} {_md_line(result.fix_summary)}")
    lines.append(_md_link(result.id, link))
    return "\n".join(lines)


def diagnosis(response: SearchResponse, link: Link, also: str | None = None) -> str:
    """The response as Markdown for an issue tracker or a chat: the answer, or a differential's evidence line
    and every candidate (its sign, fix and page), or the closest entry; then the advice. ``also``: a result
    the reader opened that the summary would not list (one ranked after the candidates)."""
    shown = view(response)
    differential = shown.kind == "differential"
    if shown.kind == "answer":
        head = [DIAGNOSIS["answer"].format(label=shown.rows[0].label_text)]
        head[0] += f": {_md_line(response.why)}" if response.why else ""
    else:
        head = [DIAGNOSIS["lead"].format(headline=shown.headline)]
    listed = shown.rows[: shown.leads] if shown.leads else shown.rows[:1]
    listed += [row for row in shown.rows if row.result.id == also and row not in listed]
    quoted = _md_evidence(listed[0].result) if differential else None
    if quoted:  # the line the candidates share, once
        head.append(quoted)
    said = (response.why or "") if shown.kind == "answer" else ""  # the answer's why, which may quote its sign
    rows = (_md_row(row, link, not differential, said if i == 0 else "") for i, row in enumerate(listed))
    parts = ["\n".join(head), *rows]
    if shown.advice:
        parts.append(_md_line(shown.advice))
    return "\n\n".join(parts) + "\n"


def entry_diagnosis(entry_id: str, title: str, fix_summary: str, link: Link) -> str:
    """An entry read on its own (opened by id, followed from another): what it is, its fix and its page."""
    lines = [_md_entry(entry_id, title, DIAGNOSIS["alone"])]
    lines += [f"- {DIAGNOSIS['fix']} {_md_line(fix_summary)}", _md_link(entry_id, link)]
    return "\n".join(lines) + "\n"
