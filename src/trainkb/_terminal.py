"""Text bound for a terminal: control characters are shown, never obeyed.

A record's title or a pasted line may carry escape sequences (``\\x1b]0;`` retitles the
window, ``\\x1b[2J`` clears it, OSC 52 writes the clipboard). Everything `kb` prints from a
record or a paste goes through ``printable`` first, which spells such characters out; ``emit``
(a command's result on stdout) and ``say`` (kb's own words on stderr) apply it to whatever they
write, and survive an output that cannot be written.
"""

from __future__ import annotations

import contextlib
import re
import sys

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CONTROL", "emit", "escaped", "json_text", "printable", "say", "spelled"]

# C0 controls but tab and newline, DEL, C1 controls, the bidirectional overrides that reorder text, and
# lone surrogates: an environment value or a path that is not UTF-8 holds each byte it could not decode
# as U+DC80-U+DCFF, which a surrogateescape stream writes back as that raw byte (0x9b is an 8-bit CSI)
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_WITH_NEWLINES = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _spell(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte: spelled as the byte it stands for
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def spelled(text: str, pattern: re.Pattern[str] = CONTROL) -> str:
    """``text`` with each character ``pattern`` matches written as ``\\xNN`` (``\\uNNNN`` above 0xff; an
    undecodable byte held as a lone surrogate as the ``\\xNN`` of that byte)."""
    return pattern.sub(_spell, text)


def printable(text: str, newlines: bool = True) -> str:
    """``text`` with control characters written as ``\\xNN`` (newlines too unless ``newlines``)."""
    return spelled(text, CONTROL if newlines else _WITH_NEWLINES)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def escaped(text: str, pattern: re.Pattern[str]) -> str:
    """``text`` with each character ``pattern`` matches written as ``\\uNNNN``, the escape a JSON string or a
    double-quoted YAML scalar reads back as that character."""
    return pattern.sub(_escape, text)


def json_text(data: Any) -> str:
    """``data`` as indented JSON for a terminal: json escapes C0 controls itself; DEL, the C1 controls
    (``\\x9b`` starts a sequence too) and the bidirectional overrides are escaped here, so the text
    is the same JSON and no byte of it is a control character."""
    import json  # only here: a `kb search` without --json never loads it

    return escaped(json.dumps(data, indent=2, ensure_ascii=False), CONTROL)


def say(text: str) -> None:
    """kb's own words on stderr, terminal-safe; a closed or full stderr loses them and never raises
    (`kb run` must keep its command's exit status whatever happens to its own output)."""
    with contextlib.suppress(OSError, ValueError, AttributeError):  # no stderr at all at start-up: None
        sys.stderr.write(printable(text))
        sys.stderr.flush()


def emit(text: str) -> bool:
    """A command's result on stdout, terminal-safe, written whole and flushed. False when it cannot be
    written (a full disk, a closed descriptor), after saying so in one line on stderr; the caller then
    exits with the usage status. A reader that went away (BrokenPipeError) is left to the caller."""
    stream = sys.stdout
    try:
        if stream is None:  # started with stdout closed (`kb search x >&-`)
            raise OSError("standard output is closed")
        stream.write(printable(text))
        stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        if stream is not None:  # drop what is buffered, so the exit does not fail on it a second time
            with contextlib.suppress(OSError, ValueError):
                stream.close()
        say(f"kb: error: cannot write the output: {why}\n")
        return False
    return True
