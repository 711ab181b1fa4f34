"""The public entry point: ``search(text)`` -> ranked, calibrated, evidenced results."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..catalogue import PathList, find_catalogues
from ._hint import ADVICE, foreign_package, what_would_help
from ._index import Index, load_index
from ._input import Query, clean_lines, parse
from ._policy import ANSWER, SCORE
from ._ranks import teardown
from ._score import Evidence, Scored, score_entries
from ._tells import TellText, first_fired

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any, Literal

    from ._input import QueryKind

__all__ = [
    "HIGH",
    "MEDIUM",
    "Confidence",
    "SearchResponse",
    "SearchResult",
    "Status",
    "Tell",
    "get_index",
    "search",
]

HIGH, MEDIUM = ANSWER.high, ANSWER.medium  # the confidence bands, as the package has always exported them

if TYPE_CHECKING:  # annotations only
    # answered: one cause, at medium or high; differential: a recognised symptom several catalogue entries
    # explain, listed with what decides between them; unknown: nothing recognised
    Status = Literal["answered", "differential", "unknown"]
    # how sure a result is: a cause-naming line and a clear lead (high), enough evidence (medium), neither (low)
    Confidence = Literal["high", "medium", "low"]


@dataclass(frozen=True)
class Tell:
    """The sign that singles an entry out among the candidates for one symptom, and whether the output shows it."""

    says: str
    fired: bool

    def to_json(self) -> dict[str, Any]:
        return {"says": self.says, "fired": self.fired}


_INDEXES: dict[tuple[tuple[str, ...], bool], Index] = {}


@dataclass(frozen=True)
class SearchResult:
    """One entry as an answer lists it: what it is, how sure search is, and the lines that matched."""

    id: str
    title: str
    area: str
    score: float
    confidence: Confidence
    evidence: list[Evidence] = field(default_factory=list)
    fix_summary: str = ""  # the record's one-line fix, shown with every match
    layer: str | None = None  # the catalogue layer the entry comes from; None for the base catalogue
    tell: Tell | None = None  # a candidate's sign: the one that fired, else its first (what to look for)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "area": self.area,
            "score": self.score,
            "confidence": self.confidence,
            "fix_summary": self.fix_summary,
            "layer": self.layer,
            "tell": self.tell.to_json() if self.tell else None,
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
    """Search's whole answer to a paste (docs/json.md): the results, the status and the advice."""

    query_kind: QueryKind
    abstained: bool  # True unless answered: the results are candidates or only the closest entries
    results: list[SearchResult]
    advice: str | None = None  # when abstained: what to paste or run so that search can answer
    # the line a signature matched for the first entry: with ``abstained``, a message several root
    # causes print (the entries are its candidates), not an error the catalogue does not know
    symptom: str | None = None
    status: Status = "unknown"
    why: str | None = None  # when answered: why this entry and not the others that print the same line
    candidates: int = 0  # when a differential: how many of the first results are its candidates

    def to_json(self) -> dict[str, Any]:
        return {
            "query_kind": self.query_kind,
            "status": self.status,
            "abstained": self.abstained,
            "why": self.why,
            "candidates": self.candidates,
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


def _confidence(score: float, runner_up: float, cause: float) -> Confidence:
    """High needs a high score, a clear lead and a strong match of a signature that names the entry's cause.

    A near tie names a family of entries, not one. Words alone, an alias, or a message that
    several root causes print rank an entry but never make it an answer: on public failure
    reports such matches were wrong far more often than right (docs/search.md).
    """
    if score >= ANSWER.high and cause >= SCORE.known_failure and score - runner_up >= ANSWER.signature_lead:
        return "high"
    return "medium" if score >= ANSWER.medium and cause >= SCORE.some_evidence else "low"


def _result(index: Index, s: Scored, confidence: Confidence) -> SearchResult:
    entry = index.entries[s.entry]
    return SearchResult(
        entry["id"],
        entry["title"],
        entry["area"],
        s.score,
        confidence,
        s.evidence,
        entry["fix_summary"],
        entry.get("layer"),
    )


def _vouched(s: Scored) -> str | None:
    """Why a cause-naming line answers: the words it matched, which only this cause prints."""
    ev = next((e for e in s.evidence if e.names_cause), None)
    if ev is None:
        return None
    matched = ev.text[ev.span[0] : ev.span[1]] if ev.span else ev.text.strip()
    if len(matched) > ANSWER.why_chars:
        matched = matched[: ANSWER.why_chars].rstrip() + "…"
    return ANSWER.why_vouched.replace("{matched}", matched)


def _own_line(e: Evidence) -> bool:
    """A line of the paste that points at this entry: a signature few causes print, strongly matched."""
    return e.via == "signature" and not e.ambiguous and e.strength >= SCORE.known_failure


def _fired_among(index: Index, scored: list[Scored], among: list[int], view: TellText) -> dict[int, dict[str, Any]]:
    """The first tell that fires of each of these ranked entries, for those that have one, in their order."""
    return {i: tell for i in among if (tell := first_fired(index.tells.get(scored[i].entry, ()), view))}


def _first_tell(index: Index, s: Scored) -> Tell | None:
    tells = index.tells.get(s.entry)
    return Tell(tells[0]["says"], False) if tells else None


def search(
    text: str | bytes,
    top: int = 10,
    catalogue: PathList | Index | None = None,
    first_line: int = 1,
    output: str | None = None,
) -> SearchResponse:
    """Rank the entries that explain ``text`` (a traceback, a log or a description).

    Never raises on the text itself. ``status`` says what kind of answer it is: one entry
    (``answered``), the candidates for a symptom several causes print with the sign that decides
    between them (``differential``), or nothing recognised (``unknown``, the closest entries all
    marked low). ``first_line`` is the line number of ``text``'s first line when it is the tail of
    a longer output; ``output`` is that whole output (``kb run``, the hook): tells read all of it.
    """
    index = catalogue if isinstance(catalogue, Index) else get_index(catalogue)
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    query = parse(text, first_line)
    ranks = teardown(text, query, first_line)
    if ranks is None:
        return _respond(index, query, top, output)
    # a silent rank made its peers time out: their teardown is not the failure, and the answer names that rank
    response = _respond(index, parse(text, first_line, ranks.skip), top, output, unskipped=query)
    if response.abstained:
        # a recognised symptom keeps its advice; asking for a traceback a silent rank never printed is no help
        known = response.symptom is not None and response.advice
        return replace(response, advice=f"{ranks.note} {response.advice}" if known else ranks.note)
    return replace(response, why=f"{response.why} {ranks.note}" if response.why else ranks.note)


def _respond(
    index: Index, query: Query, top: int, output: str | None, unskipped: Query | None = None
) -> SearchResponse:
    """The response for a parsed paste: answered, a differential, or unknown (see ``search``).

    ``unskipped`` is the paste before triage blanked the victims' teardown: tells still read all of it
    (torchrun's `<NO_OTHER_FAILURES>` says which rank stopped).
    """
    scored = [s for s in score_entries(index, query) if s.score >= ANSWER.min_score]
    results = []
    for rank, s in enumerate(scored):
        runner_up = scored[1].score if rank == 0 and len(scored) > 1 else scored[0].score if rank else 0.0
        results.append(_result(index, s, _confidence(s.score, runner_up, s.cause)))
    symptom = scored[0].symptom if scored else None
    partial = bool(scored) and scored[0].partial
    cut = max(top, 0)
    # the symptom line the candidates share: the first entry that matched it (entries ranked above it on words
    # alone, or on lines that name no cause, such as anomaly mode's warning above the error, never hide a
    # recognised symptom; they stay in the results, after the candidates)
    anchor = next((s.symptom_at for s in scored if s.symptom_at or any(e.names_cause for e in s.evidence)), ())
    if results and results[0].confidence != "low":
        return SearchResponse(query.kind, False, results[:cut], None, symptom, "answered", _vouched(scored[0]))
    family = [i for i, s in enumerate(scored) if anchor and anchor[0] in s.symptom_at]
    whole = output is not None
    if not family:
        package = foreign_package(query)
        if package is not None:  # another stack's error: no training entry is even close
            return SearchResponse(query.kind, True, [], ADVICE["foreign"].replace("{package}", package))
        return SearchResponse(query.kind, True, results[:cut], what_would_help(query, symptom, whole, partial), symptom)
    symptom, partial = scored[family[0]].symptom, scored[family[0]].partial
    lines = [line.text for line in (unskipped or query).lines] if output is None else clean_lines(output)
    view = TellText(lines)
    fired = _fired_among(index, scored, family, view)
    if not fired:  # no member's tell holds: an entry recognised on another line may have the tell that does
        outside = [i for i, s in enumerate(scored) if i not in family and any(_own_line(e) for e in s.evidence)]
        found = _fired_among(index, scored, outside, view)
        if len(found) == 1:
            fired = found
    if len(fired) == 1:
        ((i, tell),) = fired.items()
        confidence: Confidence = "medium" if results[i].confidence == "low" else results[i].confidence
        first = replace(results[i], confidence=confidence, tell=Tell(tell["says"], True))
        rest = [r for j, r in enumerate(results) if j != i]
        return SearchResponse(
            query.kind, False, [first, *rest][:cut], None, scored[i].symptom, "answered", tell["says"]
        )
    chosen = list(fired) if fired else family[: ANSWER.max_candidates]
    if len(chosen) < ANSWER.min_candidates:  # one known cause among unknown others: the closest entry, unconfirmed
        first = replace(results[chosen[0]], tell=_first_tell(index, scored[chosen[0]]))
        rest = [r for j, r in enumerate(results) if j != chosen[0]]
        told = what_would_help(query, symptom, whole, partial, lone=first.id)
        return SearchResponse(query.kind, True, [first, *rest][:cut], told, symptom)
    candidates = [
        replace(results[i], tell=Tell(fired[i]["says"], True) if i in fired else _first_tell(index, scored[i]))
        for i in chosen[: ANSWER.max_candidates]
    ]
    rest = [r for j, r in enumerate(results) if j not in chosen[: ANSWER.max_candidates]]
    return SearchResponse(
        query.kind,
        True,
        [*candidates, *rest][: max(cut, len(candidates))],  # a differential is all its candidates, whatever the cut
        what_would_help(query, symptom, whole, partial),
        symptom,
        "differential",
        None,
        len(candidates),
    )
