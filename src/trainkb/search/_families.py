"""Symptom families: entries that print the same line, computed from the catalogue, never listed by hand.

Two entries are in one family when a signature of one that several causes print (``names_cause:
false``) matches the example of a signature of the other: whoever prints that example may have
either cause. A stack frame is where a failure happened, not what it printed, so frame examples
link no one. Families are the connected groups of two or more; each member needs a tell
(``_tells``) that singles it out, or search can only ever list the family.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ._sigregex import compile_signature, utf8

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["signature_pattern", "symptom_families"]

_FRAME = re.compile(r'^\s*File "[^"]*", line \d+')


def signature_pattern(sig: Any) -> str:
    """The regex a signature searches: its regex, or its literal escaped."""
    return str(sig.regex) if sig.regex is not None else re.escape(str(sig.literal))


def symptom_families(entries: Sequence[Any]) -> list[list[str]]:
    """The families of ``entries`` (records or look-alikes): ids in catalogue order, families by first member."""
    ids = [entry.id for entry in entries]
    parent = list(range(len(entries)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    examples = [
        (i, utf8(sig.example))
        for i, entry in enumerate(entries)
        for sig in entry.signatures
        if not _FRAME.match(sig.example)
    ]
    for i, entry in enumerate(entries):
        for sig in entry.signatures:
            if sig.names_cause is not False:
                continue
            matcher = compile_signature(signature_pattern(sig))
            if matcher is None:
                continue
            for j, example in examples:
                if j != i and root(j) != root(i) and matcher.search(example):
                    parent[root(j)] = root(i)
    groups: dict[int, list[str]] = {}
    for i, entry_id in enumerate(ids):
        groups.setdefault(root(i), []).append(entry_id)
    return [members for members in groups.values() if len(members) > 1]
