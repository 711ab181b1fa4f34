"""Regexes for the browser: Python's and RE2's named groups spelled as JavaScript reads them.

Tells read figures through named groups (``(?P<reserved>...)``); JavaScript names a group
``(?<reserved>...)``. Only a group opener is rewritten: an escaped parenthesis or a character
class holding the same characters keeps its meaning. The browser tests (tests/site/test_parity.py)
run the translations and compare what they match and capture with RE2's.
"""

from __future__ import annotations

import re

import pytest

from trainkb.search._jsregex import js_regex, signature_regex


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"(?P<value>[\d.]+ GiB)", r"(?<value>[0-9.]+ GiB)"),
        (r"(?P<a>\d+) of (?P<b>\d+)", r"(?<a>[0-9]+) of (?<b>[0-9]+)"),
        (r"(?:x(?P<inner>y))", r"(?:x(?<inner>y))"),
        (r"\(?P<x>", r"\(?P<x>"),  # an optional literal "(" then "P<x>": no group
        (r"[(?P<]x", r"[(?P<]x"),  # the same characters in a class are characters
        (r"\\(?P<n>1)", r"\\(?<n>1)"),  # an escaped backslash, then a group
    ],
)
def test_named_groups_become_javascript_named_groups(pattern: str, expected: str) -> None:
    source, flags = signature_regex(pattern)
    assert (source, flags) == (expected, "iu")
    assert re.compile(pattern)  # the inputs are valid Python regexes


def test_a_back_reference_names_its_group() -> None:
    """Python's regexes may refer back to a group (RE2's cannot: signatures never do)."""
    assert js_regex(r"(?P<q>[ab])x(?P=q)")[0] == r"(?<q>[ab])x\k<q>"
    assert js_regex(r"[(?P=q)]")[0] == r"[(?P=q)]"


def test_a_group_pattern_unsafe_for_the_browser_matches_nothing() -> None:
    assert signature_regex(r"(?P<v>(a+)+)b") == ["(?!)", "u"]


def test_leading_inline_flags_become_javascript_flags() -> None:
    """RE2 reads a leading `(?i)` as a flag for the whole pattern; JavaScript has no such group."""
    source, flags = js_regex(r"(?i)gated|is gated", re2=True)
    assert not source.startswith("(?") and flags == "iu"
    assert js_regex(r"(?is)a.b", re2=True)[1] == "isu"
    assert js_regex(r"a(?i)b", re2=True)[0].startswith("a")  # only a leading group is a whole-pattern flag


@pytest.mark.parametrize("pattern", [r"size (?-i:Mismatch)", r"(?i:nccl) timeout", r"a(?s:.)b"])
def test_a_flag_group_the_browser_cannot_compile_matches_nothing(pattern: str) -> None:
    """RE2 runs `(?i:...)`, `(?-i:...)` and `(?s:...)`; a JavaScript "u" regex rejects them with a SyntaxError."""
    assert signature_regex(pattern) == ["(?!)", "u"]
    assert signature_regex(r"(?i)size mismatch")[0] == "size mismatch"  # a leading, whole-pattern flag translates
