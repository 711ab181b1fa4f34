"""Signature regexes run by RE2, whose matching time is linear in the text whatever the pattern.

Python's engine backtracks: ``(a+)+``, ``zq(xx?)+y`` or ``(a|aa)+$`` take exponential time on
a line a few dozen characters long, and search runs every signature over pasted logs. RE2 has
no backreferences or lookarounds, so lint refuses those; a pattern RE2 cannot compile never
matches in search (it is reported by `kb lint`, not raised mid-search).

A signature matches within one line: no part of it matches a newline, and ``^`` and ``$`` are
the line's start and end (evidence names one line; the browser runs the same regex line by line,
on lines of at most ``PASTE.max_line_chars``). RE2's classes are ASCII (``\\w`` is ``[0-9A-Za-z_]``,
``\\s`` is ``[\\t\\n\\f\\r ]``); the browser port mirrors exactly that (_jsregex.py).

RE2 is imported, and each pattern compiled, on first use: most searches try only the few
signatures whose words are in the paste.
"""

from __future__ import annotations

import functools
from types import ModuleType

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

    from re2 import _Regexp as SignatureRegex

__all__ = ["SignatureRegex", "compile_signature", "re2_error", "utf8"]


def utf8(text: str) -> bytes:
    """What RE2 searches: ``text`` as UTF-8 (a lone surrogate kept as bytes that match nothing, not an error)."""
    return text.encode("utf-8", "surrogatepass")


_LINE_ANCHORS = "(?m)"  # ^ and $ at every line's start and end


@functools.cache
def _re2() -> tuple[ModuleType, Any]:
    import re2

    options = re2.Options()
    options.case_sensitive = False  # signatures match in any case, as they always have
    options.log_errors = False  # RE2 would otherwise print its own parse errors to stderr
    options.never_nl = True  # one line at a time: no class, dot or literal matches a newline
    return re2, options


def re2_error(pattern: str) -> str | None:
    """Why RE2 cannot run ``pattern`` (a lookaround, a backreference, ...), or None when it can."""
    re2, options = _re2()
    try:
        re2.compile(_LINE_ANCHORS + pattern, options)
    except re2.error as exc:
        message = exc.args[0] if exc.args else exc
        return message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    return None


@functools.lru_cache(maxsize=8192)
def compile_signature(pattern: str) -> SignatureRegex | None:
    """``pattern`` compiled for search, case-insensitive; None when RE2 cannot run it."""
    re2, options = _re2()
    try:
        return re2.compile(_LINE_ANCHORS + pattern, options)
    except re2.error:
        return None
