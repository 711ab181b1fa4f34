"""Python and RE2 regexes as JavaScript regexes with the same meaning, for the browser engine.

The browser port (site/static/engine.js) runs the parser's and normaliser's regexes and every
signature as JavaScript "u" regexes. Python's classes are Unicode-aware and RE2's are ASCII,
and neither reads "." or "$" as JavaScript does, so each pattern is spelled out here; the
engine contract (contract.py) ships the translations.
"""

from __future__ import annotations

import re

from ..catalogue import backtracking_risk, scoped_flags
from ._sigregex import re2_error

__all__ = ["js_regex", "signature_regex"]

_FLAGS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"))
# Python's (and RE2's) named group "(?P<name>" is JavaScript's "(?<name>"; a back-reference "(?P=name)" is "\k<name>"
_BACKREFERENCE = re.compile(r"\?P=(\w+)\)")
# Python's str patterns are Unicode-aware: \w is any letter or number (or _), \d any decimal digit,
# \s any str.isspace() character, \b a boundary between those words; "." is anything but "\n" and
# "$" also matches before a final "\n". Spelled out for a JavaScript regex with the "u" flag.
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
_CLASS_ESCAPES = {"w": _WORD, "d": r"\p{Nd}", "s": _SPACE}
_ESCAPES = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
    "b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
    "A": "^",
    "Z": "(?![^])",
}
# RE2 (which runs the signatures in `kb search`) reads \w, \d, \s and \b as ASCII and "$" as the end of
# the text only; \z is its end-of-text anchor.
_ASCII_WORD = "0-9A-Za-z_"
_RE2_SPACE = r"\t\n\x0c\r "
_RE2_CLASS_ESCAPES = {"w": _ASCII_WORD, "d": "0-9", "s": _RE2_SPACE}
_RE2_ESCAPES = {
    "w": f"[{_ASCII_WORD}]",
    "W": f"[^{_ASCII_WORD}]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "s": f"[{_RE2_SPACE}]",
    "S": f"[^{_RE2_SPACE}]",
    "b": f"(?:(?<=[{_ASCII_WORD}])(?![{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?=[{_ASCII_WORD}]))",
    "B": f"(?:(?<=[{_ASCII_WORD}])(?=[{_ASCII_WORD}])|(?<![{_ASCII_WORD}])(?![{_ASCII_WORD}]))",
    "A": "^",
    "z": "(?![^])",
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
                out.append(f"\\u{{{int(source[i : i + size], 16):x}}}")
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
            if source[i : i + 1] == "^":
                out.append("^")
                i += 1
            if source[i : i + 1] == "]":  # a leading "]" is a literal in Python
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
        elif char == "(" and source.startswith("?P<", i):
            out.append("(?<")
            i += 3
        elif char == "(" and (reference := _BACKREFERENCE.match(source, i)):
            out.append(f"\\k<{reference.group(1)}>")
            i = reference.end()
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
    # leading inline flags (`(?i)` as RE2 and Python read them) become the JavaScript regex's flags
    lead = re.match(r"\(\?([ims]+)\)", source)
    if lead:
        source = source[lead.end() :]
        flags |= sum(flag for flag, letter in _FLAGS if letter in lead[1])
    return [_unicode(source, flags, re2), "".join(letter for flag, letter in _FLAGS if flags & flag) + "u"]


def signature_regex(pattern: str) -> list[str]:
    """A signature's regex for the browser: RE2's meaning, or nothing when the browser's backtracking
    engine could freeze on it or cannot compile it (lint refuses such a pattern; `kb search` runs it with RE2)."""
    if re2_error(pattern) is not None or backtracking_risk(pattern) is not None or scoped_flags(pattern):
        return _NEVER
    return js_regex(pattern, re.IGNORECASE, re2=True)
