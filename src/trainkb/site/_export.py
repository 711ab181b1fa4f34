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

from ..catalogue import Catalogue, backtracking_risk
from ..search import _hint, _index, _input, _normalize, _score, _search
from ..search._sigregex import re2_error

__all__ = ["export_index", "js_regex", "search_data", "signature_regex"]

_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
_PY_ONLY = ((re.compile(r"\(\?P<"), "(?<"), (re.compile(r"\(\?P=(\w+)\)"), r"\\k<\1>"))
# Python's str patterns are Unicode-aware: \w is any letter or number (or _), \d any decimal digit,
# \s any str.isspace() character, \b a boundary between those words; "." is anything but "\n" and
# "$" also matches before a final "\n". Spelled out for a JavaScript regex with the "u" flag.
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_CLASS_ESCAPES = {"w": _WORD, "d": r"\p{Nd}", "s": _SPACE}
_ESCAPES = {
    "w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": r"\p{Nd}", "D": r"\P{Nd}", "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
    "A": "^", "Z": "(?![^])",
}
# RE2 (which runs the signatures in `kb search`) reads \w, \d, \s and \b as ASCII and "$" as the end of
# the text only; \z is its end-of-text anchor.
_ASCII_WORD = "0-9A-Za-z_"
_RE2_SPACE = r"\t\n\x0c\r "
_RE2_CLASS_ESCAPES = {"w": _ASCII_WORD, "d": "0-9", "s": _RE2_SPACE}
_RE2_ESCAPES = {
    "w": f"[{_ASCII_WORD}]", "W": f"[^{_ASCII_WORD}]", "d": "[0-9]", "D": "[^0-9]",
    "s": f"[{_RE2_SPACE}]", "S": f"[^{_RE2_SPACE}]",
    "b": f"(?:(?<=[{_ASCII_WORD}])(?![{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?=[{_ASCII_WORD}]))",
    "B": f"(?:(?<=[{_ASCII_WORD}])(?=[{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?![{_ASCII_WORD}]))",
    "A": "^", "z": "(?![^])",
}
_NEVER = ["(?!)", "u"]  # a signature the browser must not run: it matches nothing
_KEPT = set("nrtfv0123456789k") | set("^$\\.*+?()[]{}|/")
_QUANTIFIER = re.compile(r"\{(\d*)(,?)(\d*)\}")


def _literal(char: str) -> str:
    return char if char.isalnum() or char in " _,:;'\"<>=!@#%&~`-" else f"\\u{{{ord(char):x}}}"


def _unicode(source: str, flags: int, re2: bool = False) -> str:
    """A Python (or RE2) regex's source as a JavaScript "u" regex with the same meaning (see _ESCAPES)."""
    class_escapes, escapes = (_RE2_CLASS_ESCAPES, _RE2_ESCAPES) if re2 else (_CLASS_ESCAPES, _ESCAPES)
    out: list[str] = []
    i, in_class = 0, False
    while i < len(source):
        char = source[i]
        if char == "\\" and i + 1 < len(source):
            escaped = source[i + 1]
            i += 2
            if escaped in ("x", "u", "U"):
                size = {"x": 2, "u": 4, "U": 8}[escaped]
                out.append(f"\\u{{{int(source[i: i + size], 16):x}}}")
                i += size
            elif in_class and escaped in class_escapes:
                out.append(class_escapes[escaped])
            elif in_class and escaped == "b":
                out.append("\\x08")
            elif not in_class and escaped in escapes:
                out.append(escapes[escaped])
            elif escaped in _KEPT or (in_class and escaped == "-"):
                out.append("\\" + escaped)
            else:
                out.append(_literal(escaped))
            continue
        i += 1
        if in_class:
            if char == "]":
                in_class = False
                out.append(char)
            elif char == "[":
                out.append("\\[")
            else:
                out.append(char)
            continue
        if char == "[":
            in_class = True
            out.append(char)
            if source[i: i + 1] == "^":
                out.append("^")
                i += 1
            if source[i: i + 1] == "]":  # a leading "]" is a literal in Python
                out.append("\\]")
                i += 1
        elif char == "{":
            quantifier = _QUANTIFIER.match(source, i - 1)
            if quantifier and (quantifier.group(1) or quantifier.group(3)) and out and out[-1] not in ("(", "|"):
                low, comma, high = quantifier.groups()
                out.append(f"{{{low or 0}{comma}{high}}}")
                i = quantifier.end()
            else:
                out.append("\\{")
        elif char in "}]":
            out.append("\\" + char)
        elif char == "." and not flags & re.DOTALL:
            out.append("[^\\n]")
        elif char == "$" and not flags & re.MULTILINE:
            out.append("(?![^])" if re2 else "(?=\\n?(?![^]))")
        else:
            out.append(char)
    return "".join(out)


def js_regex(pattern: re.Pattern[str] | str, flags: int = 0, re2: bool = False) -> list[str]:
    """[source, flags] of a Python regex (or with ``re2``, a signature as RE2 reads it) as a JavaScript
    regex with the "u" flag and the same meaning."""
    if isinstance(pattern, re.Pattern):
        source, flags = pattern.pattern, pattern.flags
    else:
        source = pattern
    for old, new in _PY_ONLY:
        source = old.sub(new, source)
    return [_unicode(source, flags, re2), "".join(letter for flag, letter in _FLAGS if flags & flag) + "u"]


def signature_regex(pattern: str) -> list[str]:
    """A signature's regex for the browser: RE2's meaning, or nothing when the browser's backtracking
    engine could freeze on it (lint refuses such a pattern; `kb search` runs it safely with RE2)."""
    if re2_error(pattern) is not None or backtracking_risk(pattern) is not None:
        return _NEVER
    return js_regex(pattern, re.IGNORECASE, re2=True)


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
    data = _index.build_data(cat.ordered(), cat.content_hash(), cat.origin)
    index = _index.Index(data)
    for raw, sig in zip(data["sigs"], index.sigs, strict=True):
        raw["regex"] = signature_regex(raw["pattern"])
        raw["spec"] = _score._specificity(sig)
    aliases: dict[int, list[list[Any]]] = {}  # entry -> [words, idf total] of its title and aliases
    for row in data["aliases"]:  # (entry, ..., words): the entry first, its words last
        entry, words = row[0], row[-1]
        aliases.setdefault(entry, []).append([words, sum(index.idf.get(w, 0.0) for w in words)])
    data["aliases"] = aliases
    data["constants"] = _constants(_input, _normalize, _score, _search, _index, _hint)
    data["advice"] = _hint.ADVICE
    data["excludes"] = [[entry, *signature_regex(pattern)] for entry, pattern in index.excludes]
    data["patterns"] = _patterns()
    return data


def _fulltext(cat: Catalogue) -> list[dict[str, Any]]:
    """Per entry what the full-text box shows and matches: title, aliases, tags, a summary."""
    rows = []
    for entry in cat.ordered():
        summary = " ".join(entry.symptom.split())
        rows.append({"id": entry.id, "title": entry.title, "area": entry.area, "tags": entry.tags,
                     "fix_summary": entry.fix_summary,
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
