"""What each rank of a distributed job printed, and which rank broke first.

Standard library only, and below search in the layers: search reads a multi-rank paste's teardown
through it, and ``trainkb.triage`` adds the catalogue entry for the culprit's own error on top.

The reader and its rules load on first use of one of their names (``may_name_ranks`` needs neither),
so a `kb search` of a paste that names no rank never imports them.
"""

from __future__ import annotations

from .._lazy import lazy_names
from ._gate import RANK_WORDS, may_name_ranks

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from ._decide import Basis, RankVerdict, Role, Triage, decide, decide_text, is_multirank
    from ._read import CHUNK, Event, EventKind, EventSource, RankState, Reader
    from ._rules import DECIDE, READ, DecideRules, ReadRules

# name -> the private module that defines it, imported on first access
_LAZY = {
    **dict.fromkeys(["Basis", "RankVerdict", "Role", "Triage", "decide", "decide_text", "is_multirank"], "_decide"),
    **dict.fromkeys(["CHUNK", "Event", "EventKind", "EventSource", "RankState", "Reader"], "_read"),
    **dict.fromkeys(["DECIDE", "READ", "DecideRules", "ReadRules"], "_rules"),
}

__all__ = [
    "CHUNK",
    "DECIDE",
    "RANK_WORDS",
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
    "may_name_ranks",
]


__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
