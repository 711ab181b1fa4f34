"""Reject signature regexes that can backtrack catastrophically.

`kb search` matches signatures with RE2 (linear time), but the static site runs them as
JavaScript regexes, which backtrack: ``(a+)+``, ``zq(xx?)+y`` or ``(a|aa)+$`` would freeze
the page on a line a few dozen characters long. So lint and the site export vet the
patterns: an unbounded repeat whose body can match in more than one way (it holds a
repeat of variable count, ``?`` included, or an alternation) is refused.
"""

from __future__ import annotations

import re

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

__all__ = ["nested_quantifier"]

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}


def _children(op: object, av: object) -> list[object]:
    if op in _REPEATS:
        return [av[2]]  # type: ignore[index]
    if op is sre_constants.SUBPATTERN:
        return [av[3]]  # type: ignore[index]
    if op is sre_constants.BRANCH:
        return list(av[1])  # type: ignore[index]
    if op in {sre_constants.ASSERT, sre_constants.ASSERT_NOT}:
        return [av[1]]  # type: ignore[index]
    if op is sre_constants.ATOMIC_GROUP:
        return [av]
    return []


def _varies(pattern: object) -> bool:
    """True when ``pattern`` holds a repeat of variable count or an alternation."""
    for op, av in pattern:  # type: ignore[attr-defined]
        if op in _REPEATS and av[0] != av[1] and op is not sre_constants.POSSESSIVE_REPEAT:
            return True
        if op is sre_constants.BRANCH:
            return True
        if any(_varies(child) for child in _children(op, av)):
            return True
    return False


def _find_nested(pattern: object) -> bool:
    for op, av in pattern:  # type: ignore[attr-defined]
        outer_unbounded = av[1] == sre_constants.MAXREPEAT if op in _REPEATS else False
        if outer_unbounded and op is not sre_constants.POSSESSIVE_REPEAT and _varies(av[2]):
            return True
        if any(_find_nested(child) for child in _children(op, av)):
            return True
    return False


def nested_quantifier(regex: str) -> bool:
    """True when an unbounded repeat's body can vary (``(a+)+``, ``(x*y)*``, ``(xx?)+``, ``(a|aa)+``)."""
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return False
    return _find_nested(parsed)
