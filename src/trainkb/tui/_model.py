"""What the TUI shows, computed without any widget: loaded once, shared by every screen."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .._catalogue import Catalogue, load_catalogue
from .._locate import find_catalogue, find_reports
from .._markdown import entry_markdown
from .._schema import Entry
from .._verification import Verification, load_verification
from ..search import Index, SearchResponse, get_index, search
from ..triage import Triage, triage_text

__all__ = ["ENTRY_SCHEME", "PASTE_LIMIT", "KnowledgeBase", "fix_code", "tail_for_paste"]

ENTRY_SCHEME = "entry:"
PASTE_LIMIT = 256 * 1024  # the paste box keeps the tail; search reads only the tail anyway
_FENCE = re.compile(r"```[^\n]*\n(.*?)```", re.S)


def tail_for_paste(text: str, limit: int = PASTE_LIMIT) -> str:
    """The last ``limit`` characters, starting at a line start where possible."""
    if len(text) <= limit:
        return text
    cut = text.find("\n", len(text) - limit)
    return text[len(text) - limit:] if cut < 0 else text[cut + 1:]


def fix_code(entry: Entry) -> str:
    """Every fenced code block of the fix, joined: what `c` copies."""
    return "\n".join(block.rstrip() + "\n" for block in _FENCE.findall(entry.fix))


@dataclass
class KnowledgeBase:
    catalogue: Catalogue
    index: Index
    verification: Verification

    @classmethod
    def load(cls, catalogue: str | os.PathLike[str] | None = None) -> KnowledgeBase:
        root = find_catalogue(catalogue)
        cat = load_catalogue(root)
        return cls(cat, get_index(root), load_verification(find_reports(Path(root))))

    def search(self, text: str, top: int = 10) -> SearchResponse:
        return search(text, top=top, catalogue=self.index)

    def triage(self, text: str) -> Triage | None:
        """Which rank broke first, when the paste holds two or more ranks' output."""
        return triage_text(text, catalogue=self.index)

    def markdown(self, entry_id: str) -> str:
        entry = self.catalogue.entries[entry_id]
        return entry_markdown(entry, self.catalogue, link=lambda target: ENTRY_SCHEME + target,
                              verification=self.verification.entry_lines(entry))

    def related(self, entry_id: str) -> list[tuple[str, str]]:
        """(relation label, id) for links then backlinks: the keyboard-followable list."""
        entry = self.catalogue.entries[entry_id]
        out = [(link.relation, link.id) for link in entry.links if link.id in self.catalogue.entries]
        out += [("linked from", b.source) for b in self.catalogue.backlinks.get(entry_id, [])]
        return out

    def matches(self, query: str) -> list[Entry]:
        """Entries whose id, title, alias or tag contains ``query`` (case-insensitive)."""
        needle = query.strip().lower()
        entries = self.catalogue.ordered()
        if not needle:
            return entries
        return [e for e in entries
                if needle in e.id.lower() or needle in e.title.lower()
                or any(needle in a.lower() for a in e.aliases) or any(needle in t for t in e.tags)]

    def site_url(self, entry_id: str) -> str | None:
        """The entry's page: $TRAINKB_SITE_URL if set, else a locally built site."""
        base = os.environ.get("TRAINKB_SITE_URL")
        if base:
            return f"{base.rstrip('/')}/{entry_id}/"
        page = self.catalogue.root.parent / "_site" / entry_id / "index.html"
        return page.resolve().as_uri() if page.is_file() else None
