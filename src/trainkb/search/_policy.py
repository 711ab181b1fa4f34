"""The rules search ranks by: every weight, threshold, cap and word list, declared once as frozen objects.

``kb search`` runs these objects (_normalize.py, _score.py, _search.py); ``trainkb.search.contract``
serialises every field of ``WORDS``, ``SCORE`` and ``ANSWER`` under its upper-cased name into the
site's search index, where site/static/engine.js reads them. ``SIGNATURES`` is read once per catalogue
build: the contract ships what it computes (each signature's specificity and ambiguity), not the rule.
A retuned value reaches the browser at the next build, and the JavaScript holds no copy to drift.
tests/search/test_search_constants.py holds the relations between the values that the answers rely on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = [
    "ANSWER",
    "FILE_TYPES",
    "SCORE",
    "SIGNATURES",
    "WORDS",
    "AnswerRules",
    "ScoreRules",
    "SignatureRules",
    "WordRules",
]


@dataclass(frozen=True)
class WordRules:
    """How text becomes search terms: the words left out and the crude stemmer."""

    # (placeholder, pattern) in application order: the variable parts of a line (numbers, shapes, paths,
    # ranks, ports) masked so that two pastes of one failure compare equal; the first two are locations
    masks: tuple[tuple[str, re.Pattern[str]], ...]
    spaces: re.Pattern[str]  # collapsed to one space
    number: re.Pattern[str]  # a whole number, as a signature spells one out
    word: re.Pattern[str]  # a word of lower-cased text: a search term before stemming
    token: re.Pattern[str]  # a word of a message's fixed wording (content_words)
    stop: frozenset[str]  # words too common to tell failures apart
    stem_suffixes: tuple[str, ...]  # stripped in this order, the first that ends the word (a longer one first)
    stem_keep_chars: int  # a word this long or shorter is kept whole
    stem_min_chars: int  # characters a stem keeps at least: a suffix that would leave fewer stays
    part_min_chars: int  # characters an identifier's ``_``-separated part needs to be a term of its own


@dataclass(frozen=True)
class SignatureRules:
    """How surely one signature or alias names its failure: computed once per catalogue build."""

    brevity_base: float  # a signature or alias of n characters counts min(1, base + n / chars)
    brevity_chars: int
    shared_discount: float  # per other entry whose examples a signature also matches, up to a cap
    max_shared: int
    ambiguous_reports: int  # public failure reports printing a message that make it a symptom of many causes
    ambiguous_shared: int  # other entries whose examples a signature matches that make it a family's, not a cause's
    ambiguous_family: int  # entries carrying the very same pattern that make it a family's, not a cause's


@dataclass(frozen=True)
class ScoreRules:
    """How signature hits, fuzzy alignments and prose become one 0-100 score per entry."""

    max_hits_per_sig: int
    exact_strength: float  # an exact hit of a long, unique signature on the failure line, before the type bonus
    fuzzy_strength: float  # a perfect, complete fuzzy alignment on the failure line
    type_bonus: float  # the signature's exception type is the message's
    min_fuzzy_chars: int  # a masked message shorter than this is not aligned
    min_shared_terms: int  # words a line must share with a signature before alignment: at least this many
    shared_terms_share: float  # ... and at least this share of the signature's words
    min_line_chars: int  # a plain (non-message) line shorter than this is not aligned
    max_term_repeats: int  # repeats of a word that still raise its BM25 weight (by the square root)
    full_alias_words: int  # a title or alias of fewer words covers the paste proportionally less
    min_alias_words: int  # a title or alias of fewer words is no coverage at all (one word is a topic)
    prose_saturation: float  # BM25 strength at which prose evidence reaches 1 - 1/e of its range
    bm25_share: float  # the prose score's blend of relative BM25 ...
    cover_share: float  # ... and title/alias coverage
    extra_signature: float  # added per further distinct signature that hit the same entry
    other_kind_share: float  # share of the weaker kind of evidence added to the stronger
    max_evidence: int  # evidence items kept per entry
    substitution_penalty: float  # a fuzzy alignment whose windows trade content words is a sibling message
    fuzzy_floor: int  # partial_ratio below this is noise for messages of ordinary length
    prose_candidates: int  # entries scored by prose: the best BM25 matches
    max_query_terms: int  # rarest words of the paste given to BM25
    alias_strength: float  # an alias found verbatim in a failure message: below an exact signature hit
    known_failure: float  # signature strength on the failure message that makes it a known failure
    some_evidence: float  # below this, evidence cannot lift an unknown failure's entry above the cap
    max_text_segments: int  # plain lines aligned against signatures (the last ones of a long log)
    max_message_segments: int  # exception messages aligned against signatures (the last ones)
    unknown_error_cap: float  # score without real evidence when the failure message matched no signature
    excluded_cap: float  # score of an entry whose excludes the paste holds: listed, never an answer
    ambiguous_share: float  # what a hit of a message many causes print is worth alone
    # A paste of many distinct words that the catalogue's records mostly never use (random bytes, a
    # hash dump, a foreign log) is noise: its chance overlaps with titles and aliases are not evidence.
    # Words shorter than noise_min_chars are left out of the count: any byte soup holds most single
    # letters. Real pastes: >= 50% known.
    noise_min_terms: int
    noise_known_share: float
    noise_min_chars: int
    role_weight: Mapping[str, float]  # a line's weight by its role, when it belongs to no exception message


@dataclass(frozen=True)
class AnswerRules:
    """How scores become confidence bands and one of the three answers."""

    high: float  # score threshold of "high"
    medium: float  # ... of "medium"; below it is low
    signature_lead: float  # lead over the runner-up that "high" also needs
    min_score: float  # below this an entry shares no more than a stray word with the paste
    why_chars: int  # characters of the vouching line quoted in ``why``
    why_vouched: str  # an answer's why, when a cause-naming line made it
    min_candidates: int  # a differential weighs causes against each other: one known cause alone is no differential
    max_candidates: int  # entries a differential lists: more is a reading list, not a diagnosis


FILE_TYPES = "py|cpp|cu|cc|h|hpp|so|pth|pt|ckpt|bin|safetensors|json|yaml|yml"  # a bare file name's extensions
# (placeholder, pattern) in application order: wider constructs first, so a path's
# digits or a shape's numbers are not masked piecemeal.
_MASKS = (
    ("<url>", re.compile(r"\b(?:https?|file)://\S+")),
    (
        "<path>",
        re.compile(
            r"(?:\b[A-Za-z]:)?(?:[\\/][\w.\-~@+]+){2,}[\\/]?|"
            # one start per run of name characters: "\b" would let every "a" of "a.a.a..." start
            # a match that rescans the rest of the run (quadratic in the run's length)
            rf"(?<![\w.\-])[\w.\-]+\.(?:{FILE_TYPES})\b"
        ),
    ),
    ("<addr>", re.compile(r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\[::\d*\](?::\d+)?|\blocalhost:\d+")),
    ("<hex>", re.compile(r"\b0x[0-9a-fA-F]+\b|\b[0-9a-f]{12,}\b")),
    (
        "<shape>",
        re.compile(
            r"torch\.Size\(\[[^\]]*\]\)|\[\s*\d+(?:\s*,\s*\d+)+\s*\]|"
            r"\(\s*\d+(?:\s*,\s*\d+)+\s*,?\s*\)"
        ),
    ),
    ("<size>", re.compile(r"\b\d+(?:\.\d+)?\s?(?:[KMGT]i?B|bytes|[kmgt]b)\b")),
    (
        "<time>",
        re.compile(
            r"\b\d{1,4}[-/]\d{1,2}[-/]\d{1,4}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?\b|"
            r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"
        ),
    ),
    ("pid <num>", re.compile(r"\bpid\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("rank <num>", re.compile(r"\brank\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("port <num>", re.compile(r"\bport\s*[:=]?\s*\d+", re.IGNORECASE)),
    ("<num>", re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])", re.IGNORECASE)),
)


WORDS = WordRules(
    masks=_MASKS,
    spaces=re.compile(r"\s+"),
    number=re.compile(r"(?<![\w.])\d+(?![\w.])"),
    word=re.compile(r"[a-z][a-z0-9_]*[a-z0-9]|[a-z]"),
    token=re.compile(r"[a-z0-9_]+"),
    stop=frozenset(
        [
            "a",
            "an",
            "and",
            "are",
            "as",
            "at",
            "be",
            "been",
            "but",
            "by",
            "can",
            "could",
            "did",
            "do",
            "does",
            "doing",
            "for",
            "from",
            "get",
            "got",
            "had",
            "has",
            "have",
            "how",
            "i",
            "if",
            "in",
            "into",
            "is",
            "it",
            "its",
            "me",
            "my",
            "no",
            "not",
            "of",
            "on",
            "or",
            "our",
            "please",
            "so",
            "some",
            "than",
            "that",
            "the",
            "their",
            "then",
            "there",
            "these",
            "this",
            "those",
            "to",
            "too",
            "was",
            "we",
            "were",
            "what",
            "when",
            "where",
            "which",
            "while",
            "who",
            "why",
            "will",
            "with",
            "would",
            "you",
            "your",
            "after",
            "before",
            "also",
            "any",
            "just",
            "only",
            "very",
            "all",
            "one",
            "two",
            "use",
            "used",
            "using",
            "try",
            "tried",
            "run",
            "running",
            "same",
            "other",
            "more",
            "most",
            "here",
            "out",
            "up",
            "about",
        ]
    ),
    stem_suffixes=("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s", "e"),
    stem_keep_chars=4,
    stem_min_chars=4,
    part_min_chars=3,
)

SIGNATURES = SignatureRules(
    brevity_base=0.75,
    brevity_chars=160,
    shared_discount=0.06,
    max_shared=3,
    ambiguous_reports=2,
    ambiguous_shared=3,
    ambiguous_family=3,
)

SCORE = ScoreRules(
    max_hits_per_sig=3,
    exact_strength=96.0,
    fuzzy_strength=90.0,
    type_bonus=3.0,
    min_fuzzy_chars=12,
    min_shared_terms=2,
    shared_terms_share=0.5,
    min_line_chars=16,
    max_term_repeats=4,
    full_alias_words=4,
    min_alias_words=2,
    prose_saturation=16.0,
    bm25_share=0.55,
    cover_share=0.45,
    extra_signature=2.0,
    other_kind_share=0.12,
    max_evidence=5,
    substitution_penalty=0.4,
    fuzzy_floor=72,
    prose_candidates=40,
    max_query_terms=64,
    alias_strength=78.0,
    known_failure=60.0,
    some_evidence=40.0,
    max_text_segments=300,
    max_message_segments=200,
    unknown_error_cap=52.0,
    excluded_cap=25.0,
    ambiguous_share=0.45,
    noise_min_terms=8,
    noise_known_share=0.3,
    noise_min_chars=2,
    role_weight=MappingProxyType({"message": 0.9, "text": 0.85, "header": 0.6, "frame": 0.6}),
)

ANSWER = AnswerRules(
    high=75.0,
    medium=55.0,
    signature_lead=3.0,
    min_score=1.0,
    why_chars=120,
    why_vouched="only this cause prints `{matched}`",
    min_candidates=2,
    max_candidates=5,
)
