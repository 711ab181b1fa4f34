"""Multi-rank triage: which rank of a distributed job broke first, and which ranks are only victims.

Import-light (standard library only) so `kb search` and `kb run` can call it at once: the
reading and the decision are ``trainkb.ranklog``'s; the catalogue is consulted, through
``trainkb.search``, only for the culprit's own error.
"""

from __future__ import annotations

from ..ranklog import RankVerdict, Triage, decide, is_multirank
from ._input import read_chunks, stream_chunks, triage_block, triage_path, triage_text
from ._report import to_json, to_text

__all__ = [
    "RankVerdict",
    "Triage",
    "decide",
    "is_multirank",
    "read_chunks",
    "stream_chunks",
    "to_json",
    "to_text",
    "triage_block",
    "triage_path",
    "triage_text",
]
