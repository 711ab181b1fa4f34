"""Expected-message patterns run under RE2: linear time, so a pattern such as ``(a+)+$`` cannot hang a verdict."""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["pattern_error", "pattern_search"]


@functools.cache
def _options() -> Any:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would otherwise print its own parse errors to stderr
    return options


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> Any:
    import re2

    return re2.compile(pattern, _options())


def pattern_error(pattern: str) -> str | None:
    """Why RE2 cannot run ``pattern`` (a lookaround, a backreference, ...), or None when it can."""
    import re2

    try:
        _compiled(pattern)
    except re2.error as exc:
        message = exc.args[0] if exc.args else exc
        return message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    return None


def pattern_search(pattern: str, text: str) -> bool:
    """Whether ``pattern`` occurs in ``text``; False for a pattern RE2 refuses (lint reports it)."""
    if pattern_error(pattern) is not None:
        return False
    return _compiled(pattern).search(text.encode("utf-8", "surrogatepass")) is not None
