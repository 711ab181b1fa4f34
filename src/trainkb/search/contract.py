"""The engine contract: everything the browser's search engine reads, declared and versioned.

site/static/engine.js ports the algorithm of this package and nothing else: every regex,
threshold, weight, word list, postings table and per-signature figure it needs comes from
``engine_contract(index)``, which the site serialises as its search index. So a retuned
constant or a new record changes the browser at the next build without touching the JS, and
what the JS may rely on is this module's declaration, not whatever the Python modules hold.

``ENGINE_CONTRACT_VERSION`` numbers the layout. engine.js declares the version it reads and
refuses (a thrown Error, and the site says its search is out of date) an index of another
version or one that lacks a field it declares. Bump the version, here and in engine.js, when a
field is renamed, removed, gains a different meaning or layout, or becomes required; a new
value of an existing constant is not a new layout. docs/search.md describes every field.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from .._ownoutput import OWN, OwnOutputRules
from ..ranklog import DECIDE, READ, DecideRules, ReadRules
from . import _hint, _score
from ._hint import HINT, HintRules
from ._index import Index
from ._jsregex import js_regex, signature_regex
from ._policy import ANSWER, PASTE, SCORE, WORDS, AnswerRules, PasteRules, ScoreRules, WordRules
from ._ranks import RANKS, RankRules
from ._tells import TELLS, TellRules

__all__ = [
    "ENGINE_CONTRACT_VERSION",
    "EngineContract",
    "TellCondition",
    "TellContract",
    "TriageContract",
    "engine_contract",
    "engine_patterns",
    "rules_data",
]

# 2: tells, status, why, candidates; 3: kb's own blocks, ranks' teardown; 4: all rules; 5: a culprit's own error;
# 6: ranks in a row named as a range (RANKS_RUN); 7: BETWEEN_WORDS, the character read as a space;
# 8: CODE_QUOTES, RUNS_ON and the words ranks are named with (RANKS_ONE, RANKS_MANY, RANKS_SPAN, RANKS_JOINER);
# 9: NAMED_CHARS and each signature's names, the long names that end in digits and still name one thing
ENGINE_CONTRACT_VERSION = 9
# the rules engine.js reads, every field of each, named by its prefix and upper-cased field name
RULES = (
    ("", PASTE),
    ("", WORDS),
    ("", SCORE),
    ("", ANSWER),
    ("", HINT),
    ("", TELLS),
    ("OWN_", OWN),
    ("RANKS_", RANKS),
)
# 3: the reader's prefix count and summary wording, the launcher's signal, library paths, call-site words, tee tags
TRIAGE_RULES_VERSION = 3  # the ``triage`` part, which site/static/triage.js reads (and declares the version of)


class EntryContract(TypedDict):
    """What a result shows of its entry."""

    id: str
    title: str
    area: str
    fix_summary: str


class SignatureContract(TypedDict):
    """One signature as the exact, fuzzy and gate steps of the engine read it."""

    entry: int  # position of its entry in ``entries``
    source: str  # the literal or regex as written: evidence names it
    regex: list[str]  # [source, flags] of a JavaScript regex with RE2's meaning; matches nothing when unsafe
    literal: str | None  # the masked literal, also searched in masked lines
    type: str | None  # the exception class it belongs to (the type bonus)
    texts: list[str]  # masked literal and example: what fuzzy alignment compares
    terms: list[str]  # its words: how many a line shares decides whether to align it
    required: list[str]  # words every match holds: the gate before the regex runs
    numbers: list[str]  # numbers it spells out: a line with other numbers is a sibling message
    names: list[str]  # long names it spells, without trailing digits: a line naming another is a sibling message
    spec: float  # specificity: short and shared signatures name the failure less surely
    ambiguous: bool  # many root causes print this message: it never names the cause alone
    names_cause: bool  # the record says whoever prints this message has the entry's root cause


class PhraseContract(TypedDict):
    """An alias written as an error fragment, found verbatim in an exception message."""

    entry: int
    text: str  # the masked alias searched for
    alias: str  # the alias as written: evidence names it
    spec: float  # how much a fragment this long counts
    ambiguous: bool  # public failure reports share it: it never names the cause alone


class ExcludeContract(TypedDict):
    """Output that rules an entry out, run line by line like a signature."""

    entry: int
    regex: list[str]


class CompareContract(TypedDict):
    """A numeric test on the first line ``match`` matches: ``left op times * right``, sizes read as bytes."""

    match: list[str]  # [source, flags] like a signature's regex, its named groups as JavaScript spells them
    left: str  # a named group of ``match``
    op: Literal[">", ">=", "<", "<="]
    right: str | float  # a named group of ``match``, or a number
    times: float  # the factor applied to the right-hand value


class LineCondition(TypedDict):
    line: list[str]  # some line matches this regex ([source, flags])


class NoLineCondition(TypedDict):
    no_line: list[str]  # no line matches this regex


class CompareCondition(TypedDict):
    compare: CompareContract


class RisesCondition(TypedDict):
    rises: list[str]  # the ``value`` group of the lines this regex matches rises along the output


TellCondition = LineCondition | NoLineCondition | CompareCondition | RisesCondition


class TellContract(TypedDict):
    """One tell of an entry: what singles it out among the entries that print the same symptom line."""

    entry: int  # position of its entry in ``entries``; an entry's tells are listed in record order
    says: str  # the sign, as a person reads it
    when: list[TellCondition]  # every condition must hold; each has exactly one key, its kind


class TriageContract(TypedDict):
    """The rules the browser's triage.js runs: ``kb triage``'s own rule objects (trainkb.ranklog), field by field."""

    version: int  # TRIAGE_RULES_VERSION
    read: dict[str, Any]  # ReadRules: how ranks, errors, torchrun's summary and time stamps are found
    decide: dict[str, Any]  # DecideRules: how endings become culprits and victims, and the verdict's words


class EngineContract(TypedDict):
    """The browser engine's whole input (the ``search`` part of the site's search-index.js)."""

    version: int  # ENGINE_CONTRACT_VERSION
    constants: dict[str, Any]  # name -> number, word list or weight table (``_constants``)
    patterns: dict[str, Any]  # name -> [source, flags]; MASKS -> [[placeholder, source, flags], ...]
    advice: dict[str, str]  # what to paste when search abstains, by what the paste holds
    entries: list[EntryContract]
    sigs: list[SignatureContract]
    phrases: list[PhraseContract]
    excludes: list[ExcludeContract]
    tells: list[TellContract]
    aliases: dict[int, list[tuple[tuple[str, ...], float]]]  # entry -> [(sorted words, idf total)] per title/alias
    postings: dict[str, list[tuple[int, float]]]  # word -> [(entry, BM25 term-frequency part), ...]
    idf: dict[str, float]  # word -> idf
    background: dict[str, float]  # word -> weight in the prose model, when public reports share it
    sig_terms: dict[str, list[int]]  # word -> signatures holding it
    gate: dict[str, list[int]]  # a signature's rarest required word -> signatures
    ungated: list[int]  # signatures with no required word: always tried
    triage: TriageContract  # for triage.js, which engine.js asks about a multi-rank paste


def _constants() -> dict[str, Any]:
    """Every number, word list and weight table engine.js reads, by the name it reads it under: every field of
    every rules object in ``RULES`` but the regexes."""
    return {name: _json(name, value) for name, value in _search_rules(regexes=False).items()}


def engine_patterns() -> dict[str, re.Pattern[str]]:
    """The parser's and normaliser's regexes engine.js runs, by the name it reads them under (the masks aside)."""
    return {name: value for name, value in _search_rules(regexes=True).items() if isinstance(value, re.Pattern)}


def rules_data(
    rules: ReadRules
    | DecideRules
    | PasteRules
    | WordRules
    | ScoreRules
    | AnswerRules
    | HintRules
    | TellRules
    | OwnOutputRules
    | RankRules,
) -> dict[str, Any]:
    """A frozen rules object as JSON, every field under its own name: a regex as [source, flags] of the
    JavaScript regex with Python's meaning, a set as a sorted list, a table as an object."""
    name = type(rules).__name__
    return {f.name: _json(f"{name}.{f.name}", getattr(rules, f.name)) for f in dataclasses.fields(rules)}


def _json(where: str, value: object) -> Any:
    if isinstance(value, re.Pattern):
        return js_regex(value)
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [_json(where, item) for item in value]
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, int | float | str):
        return value
    raise TypeError(f"{where}: no JSON form for {type(value).__name__}")


def _regexes(value: object) -> bool:
    """A regex, or a table of (name, regex) pairs such as the masks: the ``patterns`` part ships it."""
    if isinstance(value, re.Pattern):
        return True
    return isinstance(value, tuple) and all(
        isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], re.Pattern) for item in value
    )


def _search_rules(regexes: bool) -> dict[str, Any]:
    """The rules' fields, each under its prefix and upper-cased name: the regexes, or everything else."""
    return {
        prefix + field.name.upper(): getattr(rules, field.name)
        for prefix, rules in RULES
        for field in dataclasses.fields(rules)
        if _regexes(getattr(rules, field.name)) == regexes
    }


def _triage() -> TriageContract:
    return {"version": TRIAGE_RULES_VERSION, "read": rules_data(READ), "decide": rules_data(DECIDE)}


def _patterns() -> dict[str, Any]:
    out: dict[str, Any] = {name: js_regex(pattern) for name, pattern in engine_patterns().items()}
    for name, value in _search_rules(regexes=True).items():
        if not isinstance(value, re.Pattern):  # a table of named regexes: [[name, source, flags], ...]
            out[name] = [[holder, *js_regex(pattern)] for holder, pattern in value]
    return out


def _condition(condition: dict[str, Any]) -> TellCondition:
    """A tell's condition with its regex as the browser runs it (the signatures' translation: RE2's meaning)."""
    if "line" in condition:
        return {"line": signature_regex(condition["line"])}
    if "no_line" in condition:
        return {"no_line": signature_regex(condition["no_line"])}
    if "rises" in condition:
        return {"rises": signature_regex(condition["rises"])}
    compare = condition["compare"]
    return {
        "compare": {
            "match": signature_regex(compare["match"]),
            "left": compare["left"],
            "op": compare["op"],
            "right": compare["right"],
            "times": compare["times"],
        }
    }


def _tells_of(index: Index) -> list[TellContract]:
    return [
        {"entry": entry, "says": tell["says"], "when": [_condition(c) for c in tell["when"]]}
        for entry in sorted(index.tells)
        for tell in index.tells[entry]
    ]


def engine_contract(index: Index) -> EngineContract:
    """The browser engine's input for ``index``: plain data, ready for ``json.dumps``.

    What depends only on the catalogue (a signature's specificity and ambiguity, alias idf totals,
    JavaScript regexes) is computed here by the Python engine's own functions, once per build.
    """
    sigs: list[SignatureContract] = [
        {
            "entry": sig.entry,
            "source": sig.source,
            "regex": signature_regex(sig.pattern),
            "literal": sig.literal,
            "type": sig.type,
            "texts": list(sig.texts),
            "terms": sorted(sig.terms),
            "required": sorted(sig.required),
            "numbers": sorted(sig.numbers),
            "names": sorted(sig.names),
            "spec": _score._specificity(sig),
            "ambiguous": _score._ambiguous(sig),
            "names_cause": sig.names_cause,
        }
        for sig in index.sigs
    ]
    phrases: list[PhraseContract] = [
        {
            "entry": entry,
            "text": text,
            "alias": alias,
            "spec": _score._brevity(len(text)),
            "ambiguous": _score._widely_printed(background),
        }
        for entry, text, alias, background in index.phrases
    ]
    return {
        "version": ENGINE_CONTRACT_VERSION,
        "constants": _constants(),
        "patterns": _patterns(),
        "advice": dict(_hint.ADVICE),
        "entries": [
            {"id": e["id"], "title": e["title"], "area": e["area"], "fix_summary": e["fix_summary"]}
            for e in index.entries
        ],
        "sigs": sigs,
        "phrases": phrases,
        "excludes": [{"entry": entry, "regex": signature_regex(pattern)} for entry, pattern in index.excludes],
        "tells": _tells_of(index),
        "aliases": index.aliases,
        "postings": index.postings,
        "idf": index.idf,
        "background": index.background,
        "sig_terms": index.sig_terms,
        "gate": index.gate,
        "ungated": index.ungated,
        "triage": _triage(),
    }
