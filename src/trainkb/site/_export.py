"""search-index.js: the search engine's contract for the browser, and what the full-text box shows.

The site does no search work of its own: ``trainkb.search.contract.engine_contract`` declares and builds
everything site/static/engine.js reads (docs/search.md, "The browser engine's contract"); this
module only serialises it, with each entry's summary for the header box and the words of kb's response view
(``trainkb._present.present_contract``: headlines, labels, the advice line), which site/static/present.js applies.
"""

from __future__ import annotations

import json
from typing import Any

from .._present import present_contract
from ..catalogue import Catalogue
from ..search import Index, build_data
from ..search.contract import EngineContract, engine_contract

__all__ = ["export_index", "search_data"]


def search_data(cat: Catalogue) -> EngineContract:
    """The engine contract of ``cat``'s search index."""
    return engine_contract(Index(build_data(cat.ordered(), cat.content_hash(), cat.origin)))


def _fulltext(cat: Catalogue) -> list[dict[str, Any]]:
    """Per entry what the full-text box shows and matches: title, aliases, tags, a summary."""
    rows = []
    for entry in cat.ordered():
        summary = " ".join(entry.symptom.split())
        rows.append(
            {
                "id": entry.id,
                "title": entry.title,
                "area": entry.area,
                "tags": entry.tags,
                "fix_summary": entry.fix_summary,
                "aliases": entry.aliases,
                "summary": summary[:220] + ("…" if len(summary) > 220 else ""),
            }
        )
    return rows


def export_index(cat: Catalogue) -> str:
    """search-index.js: one global assignment, so the page loads it from file:// too."""
    payload = {"search": search_data(cat), "pages": _fulltext(cat), "present": present_contract()}
    text = json.dumps(payload, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    # markup characters only occur inside JSON strings, where \u escapes mean the same text
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return "window.TRAINKB_INDEX = " + text + ";\n"
