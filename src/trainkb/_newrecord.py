"""A record skeleton from a failure's output: what `kb new` proposes before a person writes.

The failure lines come from the search parser, so a proposed signature is a line search
already treats as the failure. Variable parts are found with the very masks search applies
(numbers, shapes, paths, addresses…) and become regex classes; a line with none stays a
literal. Prose, the check's code and the fix are left as TODO markers for `kb lint` to report.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ._terminal import escaped, printable
from .catalogue import MODELINE, TODO
from .search import FAILURE_WEIGHT, MASKS, normalize, parse

if TYPE_CHECKING:
    from .catalogue import Catalogue
    from .search import SearchResponse

__all__ = ["Draft", "DraftError", "ProposedSignature", "draft_record", "mask_line", "render_record"]

MAX_SIGNATURES = 3
MAX_SIGNATURE_CHARS = 160  # a longer message is cut at a word: its head names the failure
MAX_TITLE_CHARS = 110
SLUG_WORDS = 6
_ID = re.compile(r"^([A-Z]+)([1-9][0-9]*)$")
_WORD = re.compile(r"[a-z0-9]+")
# What each mask's placeholder becomes in a proposed regex: wide enough for other values, no nesting.
_PLACEHOLDER_REGEX = {
    "<url>": r"\S+",
    "<path>": r"[^\s'\"]+",
    "<addr>": r"[\w.:\[\]]+",
    "<hex>": r"(?:0x)?[0-9a-fA-F]+",
    "<size>": r"[0-9.]+ ?[A-Za-z]+",
    "<time>": r"[0-9][0-9:.,/T -]*[0-9]",
    "<num>": r"-?[0-9][0-9.e+-]*",
}
_NOT_CLASSES = frozenset({"NCCLError"})  # the parser's name for torch's "NCCL error in:" log line
_SHAPE_REGEX = {"t": r"torch\.Size\(\[[0-9, ]*\]\)", "[": r"\[[0-9, ]+\]", "(": r"\([0-9, ]+,?\s*\)"}


class DraftError(ValueError):
    """Why no skeleton can be written (a usage error for `kb new`)."""


@dataclass(frozen=True)
class ProposedSignature:
    literal: str | None
    regex: str | None
    type: str | None
    kind: str
    example: str


@dataclass
class Draft:
    id: str
    area: str
    section: str
    title: str
    slug: str
    signatures: list[ProposedSignature] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    expect: tuple[str, str, str] | None = None  # (raises|warns, class name, match)
    also_matches: list[str] = field(default_factory=list)
    candidates: list[tuple[str, str, str]] = field(default_factory=list)  # (id, confidence, title)
    family: list[str] = field(default_factory=list)  # entries that print the same symptom line (they need tells)


def _escape(text: str) -> str:
    return re.escape(text).replace("\\ ", " ")


def mask_line(text: str) -> tuple[str, bool]:
    """``(pattern, exact)``: the regex of ``text`` with search's masked parts generalised.

    ``exact`` is true when no mask touched the line: it is then best kept as a literal.
    """
    parts: list[tuple[str, str | None]] = [(text, None)]  # (text, placeholder or None)
    for placeholder, pattern in MASKS:
        out: list[tuple[str, str | None]] = []
        for piece, masked in parts:
            if masked is not None:
                out.append((piece, masked))
                continue
            at = 0
            for match in pattern.finditer(piece):
                if match.start() > at:
                    out.append((piece[at : match.start()], None))
                out.append((match.group(0), placeholder))
                at = match.end()
            if at < len(piece):
                out.append((piece[at:], None))
        parts = out
    regex = "".join(_piece_regex(piece, masked) for piece, masked in parts)
    return regex, all(masked is None for _piece, masked in parts)


def _piece_regex(piece: str, placeholder: str | None) -> str:
    if placeholder is None:
        return _escape(piece)
    if placeholder == "<shape>":
        return _SHAPE_REGEX[piece[0]]
    if placeholder.endswith(" <num>"):  # "rank 3", "pid=12", "port: 29500": keep the word
        return _escape(piece.rstrip("0123456789")) + "[0-9]+"
    return _PLACEHOLDER_REGEX[placeholder]


def _clip_words(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return text[: cut if cut > limit // 2 else limit].rstrip(" ,;:(")


def _message_of(line: str, type_name: str | None) -> str:
    """The message part of an exception line (after ``Type:``), else the whole line."""
    if type_name and f"{type_name}:" in line:
        line = line.split(f"{type_name}:", 1)[1]
    return line.strip().rstrip("`'\"").strip()


def _kind(type_name: str | None) -> str:
    if type_name is None:
        return "log"
    return "warning" if type_name.endswith("Warning") else "exception"


def propose_signatures(text: str) -> list[ProposedSignature]:
    """A signature for each failure line the parser found, most telling first, none twice."""
    query = parse(text)
    failures = [m for m in query.messages if m.weight >= FAILURE_WEIGHT] or list(query.messages)
    out: list[ProposedSignature] = []
    seen: set[str] = set()
    for message in reversed(failures):  # the last exception of a chain is the failure itself
        line = query.lines[message.line_index].text.strip()
        body = _clip_words(_message_of(line, message.type), MAX_SIGNATURE_CHARS)
        type_name = None if message.type in _NOT_CLASSES else message.type
        if len(body) < 3 or normalize(body) in seen:
            continue
        seen.add(normalize(body))
        pattern, exact = mask_line(body)
        if exact:
            out.append(ProposedSignature(body, None, type_name, _kind(type_name), line))
        else:
            out.append(ProposedSignature(None, pattern, type_name, _kind(type_name), line))
        if len(out) >= MAX_SIGNATURES:
            break
    return out


def _slug(text: str) -> str:
    words = [w for w in _WORD.findall(text.lower()) if not w.isdigit()][:SLUG_WORDS]
    slug = "-".join(words)[:60].strip("-")
    return slug or "new-entry"


def _tag(type_name: str) -> str:
    """'DistBackendError' -> 'dist-backend-error': a slug readers may search by."""
    short = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", type_name.rsplit(".", 1)[-1]).lower()
    return re.sub(r"[^a-z0-9]+", "-", short).strip("-")


def prefix_for(cat: Catalogue, area: str, section: str) -> str:
    """The id prefix this area (section) uses, read from its records."""

    def prefixes(entries: list[str]) -> Counter[str]:
        return Counter(m[1] for i in entries if (m := _ID.match(i)))

    in_section = prefixes([e.id for e in cat.entries.values() if e.area == area and e.section == section])
    in_area = prefixes([e.id for e in cat.entries.values() if e.area == area])
    for counts in (in_section, in_area):
        if len(counts) == 1:
            return next(iter(counts))
    if in_section:
        return in_section.most_common(1)[0][0]
    if in_area:
        raise DraftError(f"area {area!r} uses the id prefixes {', '.join(sorted(in_area))}: give --section or --id")
    raise DraftError(f"area {area!r} has no records to take an id prefix from: give --id (e.g. --id Q1)")


def next_id(cat: Catalogue, prefix: str) -> str:
    numbers = [int(m[2]) for i in cat.entries if (m := _ID.match(i)) and m[1] == prefix]
    return f"{prefix}{max(numbers, default=0) + 1}"


def _area_of_prefix(cat: Catalogue, prefix: str) -> str | None:
    areas = {e.area for e in cat.entries.values() if (m := _ID.match(e.id)) and m[1] == prefix}
    return next(iter(areas)) if len(areas) == 1 else None


def draft_record(
    cat: Catalogue,
    text: str | None,
    response: SearchResponse | None,
    area: str | None = None,
    section: str | None = None,
    entry_id: str | None = None,
) -> Draft:
    """Everything `kb new` proposes for a paste (``text``), or a blank draft when there is none."""
    signatures = propose_signatures(text) if text else []
    ranked = [r for r in response.results if r.id in cat.entries] if response else []
    if entry_id is not None:
        typed, entry_id = entry_id, entry_id.strip().upper()
        id_match = _ID.match(entry_id)
        if id_match is None:  # quoted as typed: the upper-cased form is not what the user wrote
            raise DraftError(f"{typed!r} is not an entry id (capitals then a number, e.g. Q1)")
        if entry_id in cat.entries:
            raise DraftError(f"id {entry_id} is already used by {cat.display_path(entry_id)}")
        area = area or _area_of_prefix(cat, id_match[1])
    area = area or (cat.entries[ranked[0].id].area if ranked else None)
    if area is None:
        raise DraftError("give --area: nothing in the catalogue resembles this failure to take it from")
    found = cat.area(area)
    if found is None:
        raise DraftError(f"unknown area {area!r}; known: {', '.join(a.id for a in cat.areas)}")
    sections = [s.id for s in found.sections]
    if section is None:
        near = [cat.entries[r.id].section for r in ranked if cat.entries[r.id].area == area]
        section = near[0] if near else sections[0]
    elif section not in sections:
        raise DraftError(f"unknown section {section!r} of area {area!r}; known: {', '.join(sections)}")
    entry_id = entry_id or next_id(cat, prefix_for(cat, area, section))
    lead = signatures[0] if signatures else None
    message = _message_of(lead.example, lead.type) if lead else ""
    title = f"{lead.type.rsplit('.', 1)[-1]}: {message}" if lead and lead.type else message
    title = _clip_words(title, MAX_TITLE_CHARS) if len(title) >= 8 else f"{TODO}: name the failure in a few words"
    draft = Draft(
        entry_id,
        area,
        section,
        title,
        _slug(message or area),
        signatures,
        tags=[(_tag(lead.type) if lead and lead.type else "") or area],
    )
    if lead is not None and lead.type:
        kind = "warns" if lead.kind == "warning" else "raises"
        draft.expect = (kind, lead.type.rsplit(".", 1)[-1], lead.regex or _escape(lead.literal or ""))
    credible = response is not None and not response.abstained
    draft.also_matches = [r.id for r in ranked if credible and r.confidence in {"high", "medium"}]
    draft.candidates = [(r.id, r.confidence, r.title) for r in ranked[:3]]
    draft.family = _family(cat, signatures)
    return draft


def _family(cat: Catalogue, signatures: list[ProposedSignature]) -> list[str]:
    """Entries the draft would share a symptom line with: their examples match its (symptom) signatures, or
    their symptom signatures match its examples (the rule of ``trainkb.search.symptom_families``)."""
    from .search import compile_signature, signature_pattern, utf8

    mine = [compile_signature(signature_pattern(sig)) for sig in signatures]
    examples = [utf8(sig.example) for sig in signatures]
    found = []
    for entry in cat.ordered():
        theirs = [compile_signature(signature_pattern(s)) for s in entry.signatures if s.names_cause is False]
        if any(m is not None and m.search(utf8(s.example)) for m in mine for s in entry.signatures) or any(
            t is not None and t.search(example) for t in theirs for example in examples
        ):
            found.append(entry.id)
    return found


# what YAML refuses in a stream (C1 controls, surrogates, non-characters), what a terminal obeys (DEL,
# C1) and the bidirectional overrides: escaped in a double-quoted scalar, which reads back the same
_UNSAFE_IN_YAML = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def _q(text: str) -> str:
    """A YAML scalar that reads back as ``text`` exactly, with no control character in the file."""
    if text.isprintable():
        return "'" + text.replace("'", "''") + "'"
    quoted = json.dumps(text, ensure_ascii=False)  # escapes C0 controls, quotes and backslashes
    return escaped(quoted, _UNSAFE_IN_YAML)


def _block(name: str, text: str, indent: str = "") -> list[str]:
    return [f"{indent}{name}: |", *(f"{indent}  {line}" for line in text.splitlines())]


def render_record(draft: Draft) -> str:
    """The record as YAML text, with comments where a person decides."""
    lines = [
        MODELINE,
        f"id: {draft.id}",
        f"title: {_q(draft.title)}  # proposed from the exception; make it say what goes wrong",
        f"area: {draft.area}",
        f"section: {draft.section}",
        f"tags: [{', '.join(draft.tags)}]  # add the topic words readers search for",
        f"fix_summary: '{TODO}: one imperative line a reader can act on at once'",
    ]
    lines += _block("symptom", f"{TODO}: what the reader sees, and when (which call, which step, which setup).")
    lines += _block("root_cause", f"{TODO}: why it happens, in your own words.")
    lines += _block("fix", f"{TODO}: what to change, with the code in a fenced block.")
    if draft.signatures:
        lines.append("signatures:  # proposed from the failure lines; masked parts became regex classes")
        for sig in draft.signatures:
            matcher = f"literal: {_q(sig.literal)}" if sig.literal is not None else f"regex: {_q(sig.regex or '')}"
            lines.append(f"  - {matcher}")
            if sig.type:
                lines.append(f"    type: {sig.type}")
            lines += [
                f"    kind: {sig.kind}",
                f"    example: {_q(sig.example)}",
                "    names_cause: false  # true only when whoever prints this message has this entry's cause",
            ]
    else:
        lines += [
            "signatures:",
            f"  - literal: {TODO}",
            f"    example: '{TODO}: a line copied from the real output'",
            "    names_cause: false  # true only when whoever prints this message has this entry's cause",
        ]
    if draft.family:
        lines += [
            f"tells:  # {', '.join(draft.family)} print the same line: say what singles out this cause",
            f"  - says: '{TODO}: the sign in the rest of the output that singles out this cause'",
            "    when:",
            f"      - line: '{TODO}'",
            f"    source: '{TODO}: the thread URL, or check:<name>, whose real output shows it'",
            f"    example: '{TODO}: a real line the tell fires on'",
        ]
    if draft.candidates:
        lines.append("# search ranks these for the paste now; link the ones a reader should also see:")
        lines += [  # a title of another layer may hold anything: a comment shows it spelled out
            f"#   {i} ({confidence}): {printable(title, newlines=False)}" for i, confidence, title in draft.candidates
        ]
    lines.append("links: []")
    lines.append("references: []  # the public thread or docs page the wording comes from")
    kind, type_name, match = draft.expect or ("raises", TODO, TODO)
    spec = "category" if kind == "warns" else "type"
    lines += [
        "checks:",
        "  - name: reproduces-failure",
        f"    claim: '{TODO}: one sentence: what this check proves'",
        "    demonstrates: failure",
        "    code: |",
        f"      # {TODO}: the smallest program that prints this failure (runs as __main__ in a fresh folder)",
        "    expect:",
        f"      {kind}:",
        f"        {spec}: {_q(type_name)}",
        f"        match: {_q(match)}",
        f"    also_matches: [{', '.join(draft.also_matches)}]  # entries search may rank first for this output",
    ]
    return "\n".join(lines) + "\n"
