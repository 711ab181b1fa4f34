"""Whether a text can name a rank at all, decided without loading the reader.

Every way the reader learns of a rank needs one of these words, case as written: a line's `[rank3]:`
or `[default3]:` prefix (``READ.prefix``), NCCL's `[Rank 3]` (``READ.nccl_rank``) and the `rank :`
field of torchrun's summary (``READ.summary_field``); and a text with no rank is never multi-rank.
So `kb search` imports the reader and triages only a paste that holds one of them.
"""

from __future__ import annotations

__all__ = ["RANK_WORDS", "may_name_ranks"]

RANK_WORDS = ("rank", "Rank", "[default")


def may_name_ranks(text: str) -> bool:
    """False only when no rank can be read from ``text`` (so triage of it is None)."""
    return any(word in text for word in RANK_WORDS)
