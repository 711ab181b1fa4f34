"""Mask the variable parts of a log line and cut text into search terms.

Two pastes of the same failure differ in numbers, shapes, paths, ranks and ports; a
log-template miner (Drain) or Sentry's grouping masks those before comparing. The
masks here are applied to both the paste and the catalogue's signatures so fuzzy
comparison sees only the stable wording: exception classes and API names survive.
"""

from __future__ import annotations

import contextlib
import functools
import re
from itertools import chain

from ._policy import FILE_TYPES, WORDS

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from collections.abc import Container

__all__ = ["MASKS", "NUMBER", "content_words", "normalize", "spelled_names", "stem", "terms"]

MASKS = WORDS.masks  # (placeholder, pattern) in application order
DIGITS = "0123456789"  # what a name may end in and still be the same name (content_words)

# What a text must hold before each mask can match, in MASKS order (None: always tried). A mask's
# regex starts with no fixed text, so the engine tries it at every position: on a line without
# digits or slashes most masks would scan for nothing. A gate starts with fixed text, which the engine
# finds fast. No placeholder holds a digit, so a line left without digits stays without them.
_DIGIT = re.compile(r"\d")
_PATH_GATE = re.compile(rf"[\\/]|\.(?:{FILE_TYPES})\b")
_GATES: list[re.Pattern[str] | None] = [
    re.compile("://"),
    _PATH_GATE,
    re.compile(r"\d|\[::"),
    None,  # a run of a-f letters is a hex id too
    re.compile(r"\d|torch\.Size\("),
    _DIGIT,
    _DIGIT,
    _DIGIT,
    _DIGIT,
    _DIGIT,
    _DIGIT,
]
NUMBER = WORDS.number


def normalize(line: str) -> str:
    """Lower-case ``line`` with its variable parts masked and whitespace collapsed."""
    out = line
    digits = True
    for (placeholder, pattern), gate in zip(MASKS, _GATES, strict=True):
        if gate is _DIGIT:
            digits = digits and gate.search(out) is not None
            if not digits:
                continue
        elif gate is not None and gate.search(out) is None:
            continue
        out = pattern.sub(placeholder, out)
    return WORDS.spaces.sub(" ", out).strip().lower()


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A deliberately crude suffix stripper: 'shuffling', 'shuffled', 'shuffles' -> 'shuffl'."""
    if len(word) <= WORDS.stem_keep_chars or "_" in word:
        return word
    for suffix in WORDS.stem_suffixes:
        if word.endswith(suffix) and len(word) - len(suffix) >= WORDS.stem_min_chars:
            return word[: -len(suffix)]
    return word


def _word_terms(word: str) -> tuple[str, ...]:
    """The terms one word yields: none for a stop word, its stem, then an identifier's parts."""
    stop = WORDS.stop
    if word in stop:
        return ()
    if "_" not in word:
        return (stem(word),)
    parts = (part for part in word.split("_") if len(part) >= WORDS.part_min_chars and part not in stop)
    return (stem(word), *(stem(part) for part in parts))


def _without_locations(text: str) -> str:
    """``text`` with its urls and paths blanked: their pieces are noise, not vocabulary.

    Neither mask matches across whitespace, so the path mask runs only on the words that hold a
    slash or a dot (the whole text costs it a try at every character). The words are joined by
    single spaces: only the words themselves are read from the result.
    """
    if "://" in text:
        text = MASKS[0][1].sub(" ", text)
    if _PATH_GATE.search(text) is None:
        return text
    words = text.split()
    for at, word in enumerate(words):
        if "/" in word or "." in word or "\\" in word:
            words[at] = _masked_path(word)
    return " ".join(words)


_WORD_TERMS: dict[str, tuple[str, ...]] = {}  # a catalogue's few thousand words recur across every record
_PATH_WORDS: dict[str, str] = {}  # words with a slash or a dot (`torch.nn.Module`) recur as much
_MAX_WORDS = 1 << 16  # words remembered before starting over (a paste of random bytes must not grow it forever)


def _masked_path(word: str) -> str:
    """``word`` with its paths blanked (remembered: the mask costs a try at each of its characters)."""
    found = _PATH_WORDS.get(word)
    if found is None:
        if len(_PATH_WORDS) >= _MAX_WORDS:
            _PATH_WORDS.clear()
        found = _PATH_WORDS[word] = MASKS[1][1].sub(" ", word)
    return found


def terms(text: str) -> list[str]:
    """Stemmed content words of ``text``; identifiers also yield their ``_``-separated parts.

    No word and no path mask spans whitespace, so a text's terms are those of its whitespace-free
    runs in turn: each run is cut once (per whether the text has its paths masked) and the text's
    terms are gathered at C speed; a catalogue of 10,000 records holds few runs not seen before.
    A url's mask may cut a run in two, so a text with one is cut as a whole.
    """
    if "://" in text:
        return _cut(_without_locations(text))
    masked = _PATH_GATE.search(text) is not None
    known = _RUN_TERMS[masked]
    runs = text.split()
    with contextlib.suppress(KeyError):  # every run seen before: the usual case in a large catalogue
        return list(chain.from_iterable(map(known.__getitem__, runs)))
    new = set(runs).difference(known)
    if len(known) + len(new) > _MAX_WORDS:
        known.clear()
        new = set(runs)
    for run in new:
        located = masked and ("/" in run or "." in run or "\\" in run)
        known[run] = tuple(_cut(_masked_path(run) if located else run))
    return list(chain.from_iterable(map(known.__getitem__, runs)))


# each whitespace-free run's terms, when the text it stands in has no path and when it has one
_RUN_TERMS: tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]] = ({}, {})


def _cut(text: str) -> list[str]:
    """The terms of ``text`` once its locations are masked: words not yet seen are worked out first."""
    words = WORDS.word.findall(text.lower())
    known = _WORD_TERMS
    new = set(words).difference(known)
    if new:
        if len(known) + len(new) > _MAX_WORDS:
            known.clear()
            new = set(words)
        for word in new:
            known[word] = _word_terms(word)
    return list(chain.from_iterable(map(known.__getitem__, words)))


def content_words(text: str, named: Container[str] | None = None) -> list[str]:
    """Stemmed whole words: the fixed wording of a message, not its variable parts.

    Digits are variable ('1st', 'cuda:0', 'fp16'), but a long name that only ends in them is a name
    ('SqrtBackward0' is not 'SolveBackward'), compared without its digits: every such name of a paste, and of
    a signature's text only those in ``named``, the names the signature spells (a `\\w+` leaves them variable).
    """
    stop, long = WORDS.stop, WORDS.named_chars
    out = []
    for token in WORDS.token.findall(text.lower()):
        word = token.rstrip(DIGITS)
        if not word.replace("_", "").isalpha() or word in stop:
            continue
        if word != token and (len(word) < long or (named is not None and word not in named)):
            continue
        out.append(stem(word))
    return out


def spelled_names(source: str) -> frozenset[str]:
    """The long names a signature's literal or regex spells out, without trailing digits (content_words);
    the index keeps them per signature, so search never works them out again."""
    words = (token.rstrip(DIGITS) for token in WORDS.token.findall(source.lower()))
    return frozenset(w for w in words if len(w) >= WORDS.named_chars and w.replace("_", "").isalpha())
