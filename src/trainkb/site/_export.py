"""The browser search index: the Python engine's plain data, its patterns and its constants.

The JavaScript port in site/static/engine.js does no catalogue work of its own: it reads
the signatures, BM25 postings, regexes and tuning constants exported here, so a retuned
Python engine changes the browser's behaviour at the next build without touching the JS.
What depends only on the catalogue (signature specificity, alias idf totals, literal
patterns) is computed here, by the Python engine's own functions.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .._catalogue import Catalogue
from ..search import _index, _input, _normalize, _score, _search

__all__ = ["export_index", "js_regex", "search_data"]

_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
_PY_ONLY = ((re.compile(r"\(\?P<"), "(?<"), (re.compile(r"\(\?P=(\w+)\)"), r"\\k<\1>"),
            (re.compile(r"\\Z"), "$"), (re.compile(r"\\A"), "^"))


def js_regex(pattern: re.Pattern[str] | str, flags: int = 0) -> list[str]:
    """[source, flags] of a Python regex in JavaScript syntax (named groups, anchors)."""
    if isinstance(pattern, re.Pattern):
        source, flags = pattern.pattern, pattern.flags
    else:
        source = pattern
    for old, new in _PY_ONLY:
        source = old.sub(new, source)
    return [source, "".join(letter for flag, letter in _FLAGS if flags & flag)]


def _constants(*modules: Any) -> dict[str, Any]:
    """Every upper-case number, string set or weight table of the engine's modules (not its caches)."""
    out: dict[str, Any] = {}
    for module in modules:
        for name, value in vars(module).items():
            if not name.lstrip("_").isupper() or isinstance(value, re.Pattern):
                continue
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            table = isinstance(value, dict) and value and all(isinstance(v, (int, float)) for v in value.values())
            if number or table:
                out[name.lstrip("_")] = value
            elif isinstance(value, frozenset):
                out[name.lstrip("_")] = sorted(value)
    return out


def _patterns() -> dict[str, Any]:
    """The parser's and normaliser's regexes, by name without the leading underscore."""
    out: dict[str, Any] = {"MASKS": [[holder, *js_regex(pattern)] for holder, pattern in _normalize.MASKS]}
    for module in (_input, _normalize):
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern):
                out[name.lstrip("_")] = js_regex(value)
    return out


def search_data(cat: Catalogue) -> dict[str, Any]:
    """The engine's index of ``cat`` plus what the browser would otherwise recompute per query."""
    data = _index.build_data(cat.ordered(), cat.content_hash())
    index = _index.Index(data)
    for raw, sig in zip(data["sigs"], index.sigs, strict=True):
        raw["regex"] = js_regex(sig.pattern)
        raw["spec"] = _score._specificity(sig)
    aliases: dict[int, list[list[Any]]] = {}  # entry -> [words, idf total] of its title and aliases
    for row in data["aliases"]:  # (entry, ..., words): the entry first, its words last
        entry, words = row[0], row[-1]
        aliases.setdefault(entry, []).append([words, sum(index.idf.get(w, 0.0) for w in words)])
    data["aliases"] = aliases
    data["constants"] = _constants(_input, _normalize, _score, _search, _index)
    data["patterns"] = _patterns()
    return data


def _fulltext(cat: Catalogue) -> list[dict[str, Any]]:
    """Per entry what the full-text box shows and matches: title, aliases, tags, a summary."""
    rows = []
    for entry in cat.ordered():
        summary = " ".join(entry.symptom.split())
        rows.append({"id": entry.id, "title": entry.title, "area": entry.area, "tags": entry.tags,
                     "aliases": entry.aliases, "summary": summary[:220] + ("…" if len(summary) > 220 else "")})
    return rows


def export_index(cat: Catalogue) -> str:
    """search-index.js: one global assignment, so the page loads it from file:// too."""
    payload = {"search": search_data(cat), "pages": _fulltext(cat)}
    text = json.dumps(payload, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    # markup characters only occur inside JSON strings, where \u escapes mean the same text
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return "window.TRAINKB_INDEX = " + text + ";\n"
