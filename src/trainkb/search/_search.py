"""The public entry point: ``search(text)`` -> ranked, calibrated, evidenced results."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalogue import PathList, find_catalogues
from ._hint import advice
from ._index import Index, load_index
from ._input import parse
from ._score import KNOWN_FAILURE, SOME_EVIDENCE, Evidence, score_entries

__all__ = ["HIGH", "MEDIUM", "SearchResponse", "SearchResult", "get_index", "search"]

HIGH, MEDIUM = 75.0, 55.0  # score thresholds of the confidence bands; below MEDIUM is low
SIGNATURE_LEAD = 3.0  # lead over the runner-up that "high" also needs
MIN_SCORE = 1.0  # below this an entry shares no more than a stray word with the paste

_INDEXES: dict[tuple[tuple[str, ...], bool], Index] = {}


@dataclass(frozen=True)
class SearchResult:
    id: str
    title: str
    area: str
    score: float
    confidence: str  # high | medium | low
    evidence: list[Evidence] = field(default_factory=list)
    fix_summary: str = ""  # the record's one-line fix, shown with every match
    layer: str | None = None  # the catalogue layer the entry comes from; None for the base catalogue

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "area": self.area,
            "score": self.score,
            "confidence": self.confidence,
            "fix_summary": self.fix_summary,
            "layer": self.layer,
            "evidence": [
                {
                    "line": e.line,
                    "text": e.text,
                    "signature": e.signature,
                    "span": list(e.span) if e.span else None,
                    "via": e.via,
                }
                for e in self.evidence
            ],
        }


@dataclass(frozen=True)
class SearchResponse:
    query_kind: str  # traceback | log | prose
    abstained: bool  # True: nothing is credible; results are only the closest entries
    results: list[SearchResult]
    advice: str | None = None  # when abstained: what to paste or run so that search can answer
    # the line a signature matched for the first entry: with ``abstained``, a message several root
    # causes print (the entries are its candidates), not an error the catalogue does not know
    symptom: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "query_kind": self.query_kind,
            "abstained": self.abstained,
            "results": [r.to_json() for r in self.results],
            "advice": self.advice,
        }


def get_index(catalogue: PathList | None = None, use_cache: bool = True) -> Index:
    """The index of a catalogue (and its layers), built (or read from the disk cache) once per process."""
    roots = tuple(str(Path(root).resolve()) for root in find_catalogues(catalogue))
    key = (roots, use_cache)
    if key not in _INDEXES:
        _INDEXES[key] = load_index([Path(root) for root in roots], use_cache=use_cache)
    return _INDEXES[key]


def _confidence(score: float, runner_up: float, cause: float) -> str:
    """High needs a high score, a clear lead and a strong match of a signature that names the entry's cause.

    A near tie names a family of entries, not one. Words alone, an alias, or a message that
    several root causes print rank an entry but never make it an answer: on public failure
    reports such matches were wrong far more often than right (docs/search.md).
    """
    if score >= HIGH and cause >= KNOWN_FAILURE and score - runner_up >= SIGNATURE_LEAD:
        return "high"
    return "medium" if score >= MEDIUM and cause >= SOME_EVIDENCE else "low"


def search(
    text: str | bytes, top: int = 10, catalogue: PathList | Index | None = None, first_line: int = 1
) -> SearchResponse:
    """Rank the entries that explain ``text`` (a traceback, a log or a description).

    Never raises on the text itself. ``abstained`` is true when no entry reaches medium
    confidence; the closest entries are still returned, all marked low. ``first_line`` is
    the line number of ``text``'s first line when it is the tail of a longer output.
    """
    index = catalogue if isinstance(catalogue, Index) else get_index(catalogue)
    query = parse(text, first_line)
    scored = [s for s in score_entries(index, query) if s.score >= MIN_SCORE]
    results = []
    for rank, s in enumerate(scored[: max(top, 0)]):
        runner_up = scored[1].score if rank == 0 and len(scored) > 1 else scored[0].score if rank else 0.0
        entry = index.entries[s.entry]
        results.append(
            SearchResult(
                entry["id"],
                entry["title"],
                entry["area"],
                s.score,
                _confidence(s.score, runner_up, s.cause),
                s.evidence,
                entry["fix_summary"],
                entry.get("layer"),
            )
        )
    abstained = not results or results[0].confidence == "low"
    symptom = scored[0].symptom if results else None
    return SearchResponse(query.kind, abstained, results, advice(query, symptom) if abstained else None, symptom)
