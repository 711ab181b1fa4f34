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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typeshed types re's private parser under its old names, which warn when imported
    import sre_compile
    import sre_constants
    import sre_parse
else:
    from re import _compiler as sre_compile
    from re import _constants as sre_constants
    from re import _parser as sre_parse

__all__ = [
    "backtracking_risk",
    "nested_quantifier",
    "overlapping_alternatives",
    "overlapping_repeats",
    "scoped_flags",
]

_SINGLE = {sre_constants.LITERAL, sre_constants.NOT_LITERAL, sre_constants.IN, sre_constants.ANY}
# characters tried against each repeated atom to tell whether two atoms can match the same text
_PROBE = [chr(c) for c in range(9, 127)] + ["\u00a0", "\u00e9", "\u00df", "\u0663", "\u6a21", "\u2028"]

_REPEATS = {sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT}
# A counted repeat this wide is as bad as an unbounded one around a part that varies: ``(a{1,30}){1,30}``.
_WIDE_COUNT = 10
# Adjacent counted repeats over the same characters multiply the splits a backtracking engine tries:
# ``a{0,100}`` four times is 10^8 per start, ``.{0,200}x.{0,200}`` 4*10^4.
_SPLITS_LIMIT = 100_000

# The parse tree is a sequence of (opcode, argument) items whose argument's shape depends on the
# opcode; typeshed's union for it leaves out a repeat's (min, max, body), so it cannot be indexed as
# typed. Items and sequences are Any here; the opcode tests say what each argument holds.
_Tree = Any


def _children(op: object, av: _Tree) -> list[_Tree]:
    if op in _REPEATS:
        return [av[2]]
    if op is sre_constants.SUBPATTERN:
        return [av[3]]
    if op is sre_constants.BRANCH:
        return list(av[1])
    if op in {sre_constants.ASSERT, sre_constants.ASSERT_NOT}:
        return [av[1]]
    if op is sre_constants.ATOMIC_GROUP:
        return [av]
    return []


def _varies(pattern: _Tree) -> bool:
    """True when ``pattern`` holds a repeat of variable count or an alternation."""
    for op, av in pattern:
        if op in _REPEATS and av[0] != av[1] and op is not sre_constants.POSSESSIVE_REPEAT:
            return True
        if op is sre_constants.BRANCH:
            return True
        if any(_varies(child) for child in _children(op, av)):
            return True
    return False


def _find_nested(pattern: _Tree) -> bool:
    for op, av in pattern:
        outer_wide = op in _REPEATS and (av[1] == sre_constants.MAXREPEAT or av[1] >= _WIDE_COUNT)
        if outer_wide and op is not sre_constants.POSSESSIVE_REPEAT and _varies(av[2]):
            return True
        if any(_find_nested(child) for child in _children(op, av)):
            return True
    return False


_CHARSETS: dict[str, frozenset[str]] = {}  # by the atom's repr: the same few atoms recur in every pattern


def _charset(item: tuple[_Tree, _Tree]) -> frozenset[str]:
    """The probe characters one single-character atom (a literal, a class, ".") matches (compiling it each
    time made the engine contract of the catalogue cost seconds)."""
    key = repr(item)
    found = _CHARSETS.get(key)
    if found is None:
        one = sre_parse.SubPattern(sre_parse.State(), [item])
        compiled = sre_compile.compile(one, re.IGNORECASE)
        found = _CHARSETS[key] = frozenset(c for c in _PROBE if compiled.fullmatch(c))
    return found


def _single_repeat(op: object, av: _Tree) -> tuple[int, int, frozenset[str]] | None:
    """(min, max, characters) of a repeat of one single-character atom, e.g. ``\\s*`` or ``.+``."""
    if op not in _REPEATS or op is sre_constants.POSSESSIVE_REPEAT:
        return None
    body = list(av[2])
    if len(body) != 1 or body[0][0] not in _SINGLE:
        return None
    return av[0], av[1], _charset(body[0])


def _flatten(pattern: _Tree) -> list[tuple[_Tree, _Tree]]:
    """The items of a sequence with plain (unrepeated) groups opened up."""
    out: list[tuple[_Tree, _Tree]] = []
    for op, av in pattern:
        if op is sre_constants.SUBPATTERN:
            out += _flatten(av[3])
        else:
            out.append((op, av))
    return out


def _overlap_in(pattern: _Tree) -> str | None:
    """Two unbounded repeats that can take turns over the same characters, with nothing required
    between them that the first cannot match (``.*.*x``, ``\\S*\\s*\\S*``), or a run of counted ones
    whose splits multiply past _SPLITS_LIMIT (``a{0,100}a{0,100}a{0,100}``): "unbounded", "counted" or None."""
    live: frozenset[str] = frozenset()  # what the unbounded repeats so far could still be consuming
    counted: frozenset[str] = frozenset()  # the same for the counted repeats of variable count
    splits = 1
    for op, av in _flatten(pattern):
        repeat = _single_repeat(op, av)
        if repeat is not None and repeat[1] == sre_constants.MAXREPEAT:
            if live & repeat[2]:
                return "unbounded"
            # a required run the live repeats cannot take (the "\\s+" of "\\d+\\s+\\w+") separates them
            live = repeat[2] if repeat[0] > 0 else live | repeat[2]
        elif repeat is not None and repeat[1] > repeat[0]:
            span = repeat[1] - repeat[0] + 1
            if counted & repeat[2]:
                splits *= span
            else:  # a new run; a required part of it also ends what came before
                splits = span
                counted = counted if repeat[0] == 0 else frozenset()
            if splits >= _SPLITS_LIMIT:
                return "counted"
            counted |= repeat[2]
        if op in _SINGLE or (repeat is not None and repeat[0] > 0 and repeat[1] != sre_constants.MAXREPEAT):
            chars = _charset((op, av)) if repeat is None else repeat[2]  # a single atom, or a repeat of one
            if not chars & counted:
                counted, splits = frozenset(), 1
        if op in _SINGLE or (repeat is not None and repeat[0] > 0):
            chars = _charset((op, av)) if repeat is None else repeat[2]
            if not chars & live:  # a required character no live repeat can take: they cannot trade
                live = frozenset()
        for child in _children(op, av):
            if kind := _overlap_in(child):
                return kind
    return None


def overlapping_repeats(regex: str) -> bool:
    """True when the regex has two unbounded repeats that can split the same run of characters:
    a backtracking engine then tries every split, polynomial time of degree 3 or more per line."""
    return _overlap_kind(regex) is not None


def _overlap_kind(regex: str) -> str | None:
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return None
    return _overlap_in(parsed)


_MARK = "(?=)"  # matches the empty string and, unlike "(?:)", stays in the parse tree


def _keep_alternations(regex: str) -> str:
    """``regex`` with an empty lookahead ending each alternative, so the parser keeps ``(\\w|_)`` an
    alternation: it would fold it into the class ``[\\w_]``, but the browser tries both branches."""
    out: list[str] = []
    branched = [False]  # per open group: whether it holds a "|"
    i, in_class = 0, False
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            out.append(regex[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]" or regex[i - 1] == "[" or regex[i - 2 : i] == "[^"
        elif c == "[":
            in_class = True
        elif c == "(":
            branched.append(False)
        elif c == "|":
            out.append(_MARK)
            branched[-1] = True
        elif c == ")" and len(branched) > 1 and branched.pop():
            out.append(_MARK)
        out.append(c)
        i += 1
    if branched[0]:
        out.append(_MARK)
    return "".join(out)


def _single_branches(pattern: _Tree) -> list[frozenset[str]] | None:
    """The characters of each alternative of a BRANCH whose alternatives are one character each."""
    sets = []
    for alternative in pattern:
        items = [item for item in alternative if item[0] is not sre_constants.ASSERT or list(item[1][1])]
        if len(items) != 1 or items[0][0] not in _SINGLE:
            return None
        sets.append(_charset(items[0]))
    return sets


def _overlapping_alternatives(pattern: _Tree, repeated: bool = False) -> bool:
    """An alternation of single characters that share some (``(\\w|_)``, ``([ab]|[bc])``) inside a
    wide repeat: each shared character doubles the ways a backtracking engine tries."""
    for op, av in pattern:
        if op is sre_constants.BRANCH and repeated:
            sets = _single_branches(av[1])
            if sets and any(a & b for i, a in enumerate(sets) for b in sets[i + 1 :]):
                return True
        wide = op in _REPEATS and (av[1] == sre_constants.MAXREPEAT or av[1] >= _WIDE_COUNT)
        inner = repeated or (wide and op is not sre_constants.POSSESSIVE_REPEAT)
        if any(_overlapping_alternatives(child, inner) for child in _children(op, av)):
            return True
    return False


def overlapping_alternatives(regex: str) -> bool:
    """True when a wide repeat holds an alternation of single characters that overlap (``(\\w|_)+``)."""
    try:
        parsed = sre_parse.parse(_keep_alternations(regex), re.IGNORECASE)
    except re.error:
        return False
    return _overlapping_alternatives(parsed)


def backtracking_risk(regex: str) -> str | None:
    """Why a backtracking engine (the browser's) could freeze on ``regex``, or None."""
    if overlapping_alternatives(regex):
        return "a repeat over alternatives that match the same character (such as (\\w|_)+; use one class, [\\w_]+)"
    if nested_quantifier(regex):
        return (
            "a repeat over a part that can match in several ways (a nested quantifier such as (a+)+ or (xx?)+, "
            "or an alternation such as (a|aa)+)"
        )
    kind = _overlap_kind(regex)
    if kind == "unbounded":
        return (
            "two unbounded repeats that can match the same characters in turn (such as .*.* or \\S*\\s*\\S*; "
            "bound one, e.g. .{0,200})"
        )
    if kind == "counted":
        return "wide counted repeats that can match the same characters in turn (such as a{0,100}a{0,100}a{0,100})"
    return None


def nested_quantifier(regex: str) -> bool:
    """True when an unbounded repeat's body can vary (``(a+)+``, ``(x*y)*``, ``(xx?)+``, ``(a|aa)+``)."""
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return False
    return _find_nested(parsed)


def _has_scoped_flags(pattern: _Tree) -> bool:
    for op, av in pattern:
        if op is sre_constants.SUBPATTERN and (av[1] or av[2]):
            return True
        if any(_has_scoped_flags(child) for child in _children(op, av)):
            return True
    return False


def scoped_flags(regex: str) -> bool:
    """True when the regex sets or clears flags for a group (``(?i:...)``, ``(?-i:...)``, ``(?s:...)``): RE2
    and Python read them, the browser's JavaScript regexes raise a SyntaxError. Flags for the whole pattern
    (a leading ``(?i)``) translate."""
    try:
        parsed = sre_parse.parse(regex, re.IGNORECASE)
    except re.error:
        return False
    return _has_scoped_flags(parsed)
