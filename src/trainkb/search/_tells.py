"""Tells: what else in the output singles out one entry among those that print the same symptom line.

A CUDA out-of-memory message is printed by a batch that is too large, a leak, an eval loop that
records autograd, a fragmented cache, another process, a shape bug and Adam's first step alike;
the line alone cannot say which. The rest of the output often can: a frame in ``optimizer.step``,
a ``Process N has`` line, a reserved-but-unallocated figure far above the allocated one, memory
figures that rise step after step. A record's tells state those signs as conditions that a
machine checks and a person reads.

Conditions run under RE2, line by line and case-insensitively, like the signatures
(``_sigregex``). Tells are plain data here (from the index), so `kb search` never loads the
record models to evaluate them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from types import MappingProxyType

from ._sigregex import compile_signature, utf8

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "TELLS",
    "TellRules",
    "TellText",
    "condition_data",
    "fired",
    "first_fired",
    "size_value",
    "tell_data",
    "tell_patterns",
]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class TellRules:
    """How a tell reads a series of values and a size: when a series rises, and what a size unit is in bytes."""

    rise_min_points: int  # values a rising series needs before it says anything
    rise_ratio: float  # the last value at least this far above the first
    rise_majority: int  # rises must outnumber falls this many times over
    max_series: int  # values of one series read (a log of a million steps need not be read to the end)
    size_units: Mapping[str, float]  # a size unit, lower case -> bytes
    # "35.00 GiB", "0 bytes", "512 MiB", "1e3": a number and an optional size unit, read as bytes
    size_value: re.Pattern[str]


TELLS = TellRules(
    rise_min_points=3,
    rise_ratio=1.10,
    rise_majority=2,
    max_series=10_000,
    size_units=MappingProxyType(
        {
            "": 1.0,
            "b": 1.0,
            "byte": 1.0,
            "bytes": 1.0,
            "kib": 2.0**10,
            "mib": 2.0**20,
            "gib": 2.0**30,
            "tib": 2.0**40,
            "kb": 1e3,
            "mb": 1e6,
            "gb": 1e9,
            "tb": 1e12,
        }
    ),
    size_value=re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*$"),
)


def condition_data(condition: Any) -> dict[str, Any]:
    for key in ("line", "no_line", "rises"):
        if (value := getattr(condition, key, None)) is not None:
            return {key: value}
    compare = condition.compare
    return {
        "compare": {
            "match": compare.match,
            "left": compare.left,
            "op": compare.op,
            "right": compare.right,
            "times": compare.times,
        }
    }


def tell_data(tell: Any) -> dict[str, Any]:
    """A record's tell (the pydantic model or a look-alike) as the plain data the index stores."""
    return {"says": tell.says, "when": [condition_data(c) for c in tell.when]}


def tell_patterns(tell: dict[str, Any]) -> list[tuple[str, str]]:
    """(condition kind, regex) for every regex a plain-data tell runs."""
    out = []
    for condition in tell["when"]:
        for key in ("line", "no_line", "rises"):
            if key in condition:
                out.append((key, condition[key]))
        if "compare" in condition:
            out.append(("compare", condition["compare"]["match"]))
    return out


class TellText:
    """The output tells are evaluated over: its lines as UTF-8, joined once."""

    def __init__(self, lines: Sequence[str]) -> None:
        self.data = b"\n".join(utf8(line) for line in lines)


def size_value(text: str | bytes | None) -> float | None:
    """A number with an optional size unit, in bytes (a bare number as it is); None when it is neither."""
    if text is None:
        return None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    match = TELLS.size_value.match(text)
    if match is None:
        return None
    unit = TELLS.size_units.get(match.group(2).lower())
    return None if unit is None else float(match.group(1)) * unit


def _group(match: Any, name: str) -> bytes | None:
    try:
        value = match.group(name)
    except (IndexError, KeyError, ValueError):  # a group the pattern does not have: the tell cannot hold
        return None
    return value if isinstance(value, bytes) else None


def _compare(spec: dict[str, Any], text: TellText) -> bool:
    matcher = compile_signature(spec["match"])
    match = matcher.search(text.data) if matcher is not None else None
    if match is None:
        return False
    left = size_value(_group(match, spec["left"]))
    right_spec = spec["right"]
    right = float(right_spec) if isinstance(right_spec, int | float) else size_value(_group(match, right_spec))
    if left is None or right is None:
        return False
    right *= float(spec.get("times", 1.0))
    op = spec["op"]
    if op == ">":
        return left > right
    if op == ">=":
        return left >= right
    return left < right if op == "<" else left <= right


def _rises(pattern: str, text: TellText) -> bool:
    matcher = compile_signature(pattern)
    if matcher is None:
        return False
    values = []
    for match in matcher.finditer(text.data):
        value = size_value(_group(match, "value"))
        if value is not None:
            values.append(value)
            if len(values) >= TELLS.max_series:
                break
    if len(values) < TELLS.rise_min_points or values[-1] < TELLS.rise_ratio * values[0]:
        return False
    ups = sum(1 for a, b in pairwise(values) if b > a)
    downs = sum(1 for a, b in pairwise(values) if b < a)
    return ups >= TELLS.rise_majority * downs and ups > 0


def _holds(condition: dict[str, Any], text: TellText) -> bool:
    if "line" in condition or "no_line" in condition:
        pattern = condition.get("line") or condition["no_line"]
        matcher = compile_signature(pattern)
        found = matcher is not None and matcher.search(text.data) is not None
        return found if "line" in condition else (matcher is not None and not found)
    if "compare" in condition:
        return _compare(condition["compare"], text)
    return _rises(condition["rises"], text)


def fired(tell: dict[str, Any], text: TellText) -> bool:
    """Every condition of ``tell`` holds on ``text`` (a pattern RE2 cannot run never holds)."""
    return all(_holds(condition, text) for condition in tell["when"])


def first_fired(tells: Sequence[dict[str, Any]], text: TellText) -> dict[str, Any] | None:
    """The first of an entry's tells that fires on ``text``, or None."""
    return next((tell for tell in tells if fired(tell, text)), None)
