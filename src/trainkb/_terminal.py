"""Text bound for a terminal: control characters are shown, never obeyed.

A record's title or a pasted line may carry escape sequences (``\\x1b]0;`` retitles the
window, ``\\x1b[2J`` clears it, OSC 52 writes the clipboard). Everything `kb` prints from a
record or a paste goes through ``printable`` first, which spells such characters out.
"""

from __future__ import annotations

import re

__all__ = ["CONTROL", "printable"]

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides that reorder text
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_WITH_NEWLINES = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, newlines: bool = True) -> str:
    """``text`` with control characters written as ``\\xNN`` (newlines too unless ``newlines``)."""
    return (CONTROL if newlines else _WITH_NEWLINES).sub(_spell, text)
