"""Search: paste a traceback, log or symptom, get the entries that explain it, with evidence.

``search(text)`` is a pure function of the text and the catalogue; the catalogue's index
is built once per process and cached on disk keyed by the catalogue's content hash.
``trainkb.search.contract.engine_contract(index)`` is what the browser's port of this engine reads
(the site's index); it is a module of its own so that `kb search` does not import it.
"""

from __future__ import annotations

from ._families import signature_pattern, symptom_families
from ._hint import ADVICE
from ._index import Index, build_data, cache_dir, unreachable_terms
from ._input import FAILURE_WEIGHT, MAX_CHARS, parse, paste_tail, searched_part, unescaped
from ._normalize import MASKS, normalize
from ._ranks import own_failure
from ._score import Evidence
from ._search import HIGH, MEDIUM, SearchResponse, SearchResult, get_index, search
from ._sigregex import compile_signature, re2_error, utf8
from ._tells import TellText, condition_data, fired, tell_data, tell_patterns

__all__ = [
    "ADVICE",
    "FAILURE_WEIGHT",
    "HIGH",
    "MASKS",
    "MAX_CHARS",
    "MEDIUM",
    "Evidence",
    "Index",
    "SearchResponse",
    "SearchResult",
    "TellText",
    "build_data",
    "cache_dir",
    "compile_signature",
    "condition_data",
    "fired",
    "get_index",
    "normalize",
    "own_failure",
    "parse",
    "paste_tail",
    "re2_error",
    "search",
    "searched_part",
    "signature_pattern",
    "symptom_families",
    "tell_data",
    "tell_patterns",
    "unescaped",
    "unreachable_terms",
    "utf8",
]
