"""What each rank of a distributed job printed, and which rank broke first.

Standard library only, and below search in the layers: search reads a multi-rank paste's teardown
through it, and ``trainkb.triage`` adds the catalogue entry for the culprit's own error on top.
"""

from __future__ import annotations

from ._decide import Basis, RankVerdict, Role, Triage, decide, decide_text, is_multirank
from ._read import CHUNK, Event, EventKind, EventSource, RankState, Reader
from ._rules import DECIDE, READ, DecideRules, ReadRules

__all__ = [
    "CHUNK",
    "DECIDE",
    "READ",
    "Basis",
    "DecideRules",
    "Event",
    "EventKind",
    "EventSource",
    "RankState",
    "RankVerdict",
    "ReadRules",
    "Reader",
    "Role",
    "Triage",
    "decide",
    "decide_text",
    "is_multirank",
]
