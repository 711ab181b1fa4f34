"""What the TUI shows, computed without any widget: loaded once, shared by every screen."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TypeVar

from .._markdown import code_blocks, entry_header, entry_markdown
from .._terminal import printable
from ..catalogue import (
    Area,
    Catalogue,
    Entry,
    PathList,
    VerificationMatrix,
    find_catalogues,
    layer_reports,
    load_layers,
    load_verification,
)
from ..search import Index, SearchResponse, get_index, search
from ..triage import Triage, triage_text

__all__ = ["ENTRY_SCHEME", "KnowledgeBase", "fix_blocks", "fix_code", "link_ids", "plural"]

ENTRY_SCHEME = "entry:"


_Model = TypeVar("_Model", Entry, Area)


def _shown(model: _Model) -> _Model:
    """``model`` with every control character in its text spelled out (lint flags them; the terminal
    must never obey one). Unchanged, and not copied, when it holds none."""

    def clean(value: object) -> object:
        if isinstance(value, str):
            return printable(value)
        if isinstance(value, dict):
            return {key: clean(item) for key, item in value.items()}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    data = model.model_dump()
    cleaned = clean(data)
    return model if cleaned == data else type(model).model_validate(cleaned)


def _displayable(cat: Catalogue) -> Catalogue:
    """The catalogue as the TUI shows it: no record text can carry an escape sequence to the terminal."""
    cat.entries = {entry_id: _shown(entry) for entry_id, entry in cat.entries.items()}
    cat.areas = [_shown(area) for area in cat.areas]
    cat.origin = {entry_id: printable(name, newlines=False) for entry_id, name in cat.origin.items()}
    return cat


def fix_blocks(entry: Entry) -> list[str]:
    """Each code block of the fix on its own: `c` copies the first, a number key the n-th (a fix's blocks
    are often alternative remedies, never one snippet).

    markdown-it gives each block's content without the indentation of the list item it sits
    in, so the copy pastes into an editor or a REPL as it stands.
    """
    return [t.content.rstrip() + "\n" for t in code_blocks(entry.fix)]


def fix_code(entry: Entry) -> str:
    """Every code block of the fix, joined."""
    return "\n".join(fix_blocks(entry))


def _fence(text: str) -> str:
    """``text`` as a fenced block that shows it literally, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


_PRINTS = re.compile(r"^## What it prints\n\n.*?(?=^## |\Z)", re.S | re.M)
_SKIP = re.compile(r"(```.*?```|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|^#+ [^\n]*$)", re.S | re.M)


def link_ids(markdown: str, ids: set[str], link: str) -> tuple[str, list[str]]:
    """Every catalogue id named in prose made a link, ``link`` + id (ids that look like hardware names, M1 or
    T4, included), and the ids so linked in order; code, existing links and headings are left as they are."""
    if not ids:
        return markdown, []
    pattern = re.compile(
        r"(?<![\w/.-])(" + "|".join(sorted(map(re.escape, ids), key=len, reverse=True)) + r")(?![\w-])"
    )
    named: list[str] = []

    def linked(match: re.Match[str]) -> str:
        named.append(match[1])
        return f"[{match[1]}]({link}{match[1]})"

    out = []
    at = 0
    for skip in _SKIP.finditer(markdown):
        out += [pattern.sub(linked, markdown[at : skip.start()]), skip[0]]
        at = skip.end()
    out.append(pattern.sub(linked, markdown[at:]))
    return "".join(out), list(dict.fromkeys(named))


def plural(n: int, noun: str) -> str:
    """ "1 line", "3 lines"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _escape(text: str) -> str:
    """Record prose shown as one Markdown paragraph, its markers kept literal."""
    for char in "\\`*_[]<>#|":
        text = text.replace(char, "\\" + char)
    return text


@dataclass
class KnowledgeBase:
    catalogue: Catalogue
    index: Index
    verification: VerificationMatrix

    @classmethod
    def load(cls, catalogue: PathList | None = None) -> KnowledgeBase:
        roots = find_catalogues(catalogue)
        cat = _displayable(load_layers(roots))
        return cls(cat, get_index(roots), load_verification(layer_reports(cat)))

    def search(self, text: str, top: int = 10) -> SearchResponse:
        return search(text, top=top, catalogue=self.index)

    def triage(self, text: str) -> Triage | None:
        """Which rank broke first, when the paste holds two or more ranks' output."""
        return triage_text(text, catalogue=self.index)

    def markdown(self, entry_id: str) -> str:
        """The entry as the pane shows it: what it prints as literal blocks, every id in prose a link."""
        entry = self.catalogue.entries[entry_id]
        text = entry_markdown(
            entry,
            self.catalogue,
            link=lambda target: ENTRY_SCHEME + target,
            verification=self.verification.entry_lines(entry),
            header=False,
        )
        if entry.signatures:
            prints = ["## What it prints", ""]
            for sig in entry.signatures:
                kind = f"{sig.type}" if sig.type else ""
                note = f" ({sig.note})" if sig.note else ""
                if kind or note:
                    prints += [_escape(f"{kind}{note}".strip()), ""]
                prints += [_fence(sig.example.strip()), ""]
            text = _PRINTS.sub(lambda _m: "\n".join(prints) + "\n", text, count=1)
        return link_ids(text, set(self.catalogue.entries) - {entry_id}, ENTRY_SCHEME)[0]

    def header(self, entry_id: str) -> tuple[Entry, str, str]:
        """(the entry, "area › section", its aliases on one line) for the entry pane's header."""
        entry = self.catalogue.entries[entry_id]
        return (entry, *entry_header(entry, self.catalogue))

    def related(self, entry_id: str) -> list[tuple[str, str]]:
        """(relation label, id) for links, backlinks, then ids named in the prose: the keyboard-followable list."""
        entry = self.catalogue.entries[entry_id]
        out: list[tuple[str, str]] = [
            (link.relation, link.id) for link in entry.links if link.id in self.catalogue.entries
        ]
        listed = {target for _, target in out}  # a link both ways is listed once, by its forward relation
        out += [("linked from", b.source) for b in self.catalogue.backlinks.get(entry_id, []) if b.source not in listed]
        listed = {target for _, target in out}
        prose = "\n\n".join([entry.fix, entry.symptom, entry.root_cause])
        named = link_ids(prose, set(self.catalogue.entries) - {entry_id}, ENTRY_SCHEME)[1]
        return out + [("mentioned", target) for target in named if target not in listed]

    def matches(self, query: str) -> list[Entry]:
        """Entries whose id, title, alias or tag contains ``query`` (case-insensitive)."""
        needle = query.strip().lower()
        entries = self.catalogue.ordered()
        if not needle:
            return entries
        return [
            e
            for e in entries
            if needle in e.id.lower()
            or needle in e.title.lower()
            or any(needle in a.lower() for a in e.aliases)
            or any(needle in t for t in e.tags)
        ]

    def site_url(self, entry_id: str) -> str | None:
        """The entry's page: $TRAINKB_SITE_URL if set, else a locally built site."""
        base = os.environ.get("TRAINKB_SITE_URL")
        if base:
            return f"{base.rstrip('/')}/{entry_id}/"
        page = self.catalogue.root.parent / "_site" / entry_id / "index.html"
        return page.resolve().as_uri() if page.is_file() else None
