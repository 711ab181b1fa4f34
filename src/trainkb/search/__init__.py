"""Search: paste a traceback, log or symptom, get the entries that explain it, with evidence.

``search(text)`` is a pure function of the text and the catalogue; the catalogue's index
is built once per process and cached on disk keyed by the catalogue's content hash.
``trainkb.search.contract.engine_contract(index)`` is what the browser's port of this engine reads
(the site's index); it is a module of its own so that `kb search` does not import it.
"""

from __future__ import annotations

from ._index import Index, cache_dir
from ._input import MAX_CHARS, paste_tail
from ._normalize import MASKS, normalize
from ._score import Evidence
from ._search import HIGH, MEDIUM, SearchResponse, SearchResult, get_index, search

__all__ = [
    "HIGH",
    "MASKS",
    "MAX_CHARS",
    "MEDIUM",
    "Evidence",
    "Index",
    "SearchResponse",
    "SearchResult",
    "cache_dir",
    "get_index",
    "normalize",
    "paste_tail",
    "search",
]
