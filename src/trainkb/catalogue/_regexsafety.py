"""Reject signature regexes that can backtrack catastrophically.

`kb search` matches signatures with RE2 (linear time), but the static site runs them as
JavaScript regexes, which backtrack: ``(a+)+``, ``zq(xx?)+y`` or ``(a|aa)+$`` would freeze
the page on a line a few dozen characters long, and ``\\S*\\s*\\S*\\s*\\S*x`` takes 23 s on 500.
So lint and the site export vet the patterns: an unbounded repeat whose body can match in
more than one way (it holds a repeat of variable count, ``?`` included, or an alternation)
is refused, and so are two unbounded repeats that can take turns over the same characters.
"""

from __future__ import annotations

import re

try:  # Python 3.11+
    from re import _compiler as sre_compile  # type: ignore[attr-defined]
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_compile  # type: ignore[no-redef]
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

__all__ = ["backtracking_risk", "nested_quantifier", "overlapping_repeats"]

_SINGLE = {sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.IN, sre_constants.ANY}
# characters tried against each repeated atom to tell whether two atoms can match the same text
_PROBE = [chr(c) for c in range(9, 127)] + ["\u00a0", "\u00e9", "\u00df", "\u0663", "\u6a21", "\u2028"]

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


def _charset(item: tuple[object, object]) -> frozenset[str]:
    """The probe characters one single-character atom (a literal, a class, ".") matches."""
    one = sre_parse.SubPattern(sre_parse.State(), [item])
    compiled = sre_compile.compile(one, re.IGNORECASE)
    return frozenset(c for c in _PROBE if compiled.fullmatch(c))


def _single_repeat(op: object, av: object) -> tuple[int, int, frozenset[str]] | None:
    """(min, max, characters) of a repeat of one single-character atom, e.g. ``\\s*`` or ``.+``."""
    if op not in _REPEATS or op is sre_constants.POSSESSIVE_REPEAT:
        return None
    body = list(av[2])  # type: ignore[index]
    if len(body) != 1 or body[0][0] not in _SINGLE:
        return None
    return av[0], av[1], _charset(body[0])  # type: ignore[index]


def _flatten(pattern: object) -> list[tuple[object, object]]:
    """The items of a sequence with plain (unrepeated) groups opened up."""
    out: list[tuple[object, object]] = []
    for op, av in pattern:  # type: ignore[attr-defined]
        if op is sre_constants.SUBPATTERN:
            out += _flatten(av[3])  # type: ignore[index]
        else:
            out.append((op, av))
    return out


def _overlap_in(pattern: object) -> bool:
    """Two unbounded repeats that can take turns over the same characters, with nothing required
    between them that the first cannot match (``.*.*x``, ``\\S*\\s*\\S*``)."""
    live: frozenset[str] = frozenset()  # what the unbounded repeats so far could still be consuming
    for op, av in _flatten(pattern):
        repeat = _single_repeat(op, av)
        if repeat is not None and repeat[1] == sre_constants.MAXREPEAT:
            if live & repeat[2]:
                return True
            # a required run the live repeats cannot take (the "\\s+" of "\\d+\\s+\\w+") separates them
            live = repeat[2] if repeat[0] > 0 else live | repeat[2]
        elif op in _SINGLE or (repeat is not None and repeat[0] > 0):
            chars = _charset((op, av)) if op in _SINGLE else repeat[2]  # type: ignore[index]
            if not chars & live:  # a required character no live repeat can take: they cannot trade
                live = frozenset()
        if any(_overlap_in(child) for child in _children(op, av)):
            return True
    return False


def overlapping_repeats(regex: str) -> bool:
    """True when the regex has two unbounded repeats that can split the same run of characters:
    a backtracking engine then tries every split, polynomial time of degree 3 or more per line."""
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return False
    return _overlap_in(parsed)


def backtracking_risk(regex: str) -> str | None:
    """Why a backtracking engine (the browser's) could freeze on ``regex``, or None."""
    if nested_quantifier(regex):
        return ("a repeat over a part that can match in several ways (a nested quantifier such as (a+)+ or (xx?)+, "
                "or an alternation such as (a|aa)+)")
    if overlapping_repeats(regex):
        return ("two unbounded repeats that can match the same characters in turn (such as .*.* or \\S*\\s*\\S*; "
                "bound one, e.g. .{0,200})")
    return None


def nested_quantifier(regex: str) -> bool:
    """True when an unbounded repeat's body can vary (``(a+)+``, ``(x*y)*``, ``(xx?)+``, ``(a|aa)+``)."""
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return False
    return _find_nested(parsed)
