"""What each rank of a distributed job printed, and which rank broke first.

Standard library only, and below search in the layers: search reads a multi-rank paste's teardown
through it, and ``trainkb.triage`` adds the catalogue entry for the culprit's own error on top.
"""

from __future__ import annotations

from ._decide import Basis, RankVerdict, Role, Triage, decide, decide_text, is_multirank
from ._read import CHUNK, Event, EventKind, EventSource, RankState, Reader

__all__ = [
    "CHUNK",
    "Basis",
    "Event",
    "EventKind",
    "EventSource",
    "RankState",
    "RankVerdict",
    "Reader",
    "Role",
    "Triage",
    "decide",
    "decide_text",
    "is_multirank",
]
