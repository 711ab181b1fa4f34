"""The search index: plain data built once from the catalogue, cached on disk.

Building it needs the pydantic records (slow to import and validate); using it needs
only lists, dicts and strings. So the index is plain data, stored with marshal (primitives
only: loading it runs no code) under the user's cache folder, keyed by the catalogue's
content hash, and a cached `kb search` never parses YAML. Any cache failure falls back to
building in memory. An index is stored only when no file of the catalogue changed between hashing
it and parsing it (an editor saving mid-build), so a key never holds another version's wording.
"""

from __future__ import annotations

import contextlib
import functools
import marshal
import math
import os
import re
import stat
import sys
import zlib
from collections import Counter, defaultdict, deque
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import pairwise, repeat
from operator import add, itemgetter, mul, truediv
from pathlib import Path

from .._files import read_regular
from ..catalogue import AREA_FILE, LAYER_FILE, layers_digest, record_files
from ._normalize import NUMBER, normalize, spelled_names, terms
from ._policy import SCORE
from ._sigregex import compile_signature, utf8
from ._tells import tell_data

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import Any

    from ._sigregex import SignatureRegex

__all__ = ["FORMAT", "Index", "build_data", "cache_dir", "load_index", "unreachable_terms"]

FORMAT = 11  # the plain-data layout; the cache key also hashes this module, the normaliser, rules and background
BACKGROUND = Path(__file__).with_name("background.json")  # words public failure reports share
# indexes built ahead (python -m trainkb.search._prebuild: `make setup`, the wheel) for the catalogue trainkb
# ships, named as the user's cache names them: a first search of that very catalogue state needs no build
PREBUILT = Path(__file__).with_name("_prebuilt")
BACKGROUND_RATE = 0.01  # a word more failure reports than this share hold weighs that share over its own
_KEEP = 8  # cached indexes kept (one per catalogue state; old ones are deleted)
K1, B = 1.2, 0.75
MIN_PHRASE = 12  # characters an alias needs before its verbatim presence counts as evidence
_ALNUM = re.compile(r"[^\W_]+")  # a run of characters str.isalnum accepts (\w is those and "_")
_LEADING_WORDS = re.compile(r"([^\W_]+)(?:[\W_]+([^\W_]+))?")  # a text's first two such runs (or its only one)
_INNER_GROUP = re.compile(r"(?<!\\)\((?:[^()\\]|\\.)*(?<!\\)\)")
# how a group opens, up to its text: '(', '(?:', '(?P<name>', '(?<name>', '(?i:', or '(?s)' (flags alone,
# no text); a lookaround, which RE2 refuses anyway, does not match
_GROUP_OPENER = re.compile(r"\((?!\?)|\(\?(?:P?<\w+>|[a-zA-Z]*(?:-[a-zA-Z]*)?:|[a-zA-Z]+(?:-[a-zA-Z]*)?(?=\)$))")
# a regex's character classes, counted repeats and escapes (\\d, \\1): no number they hold is spelled out
_QUANTIFIED = re.compile(r"\[(?:\\.|[^\]\\])*\]|\{[\d,]*\}|\\.")
_REGEX_SYNTAX = re.compile(
    r"\\[a-zA-Z]|(?<!\\)\(\?(?:P?<\w+>|[a-zA-Z]*(?:-[a-zA-Z]*)?[:)]|[:!=<]*)|[()\[\]{}|*+?^$\\]"
)  # a regex read as words
_CHAR_CLASS = re.compile(r"(?<!\\)\[(?:\\.|[^\]\\])*\]")  # [A-Za-z], [0-9.e+-]: one character, never a word
# Term weight of each record field in the prose model (a BM25F-style field boost).
FIELD_WEIGHTS = {
    "title": 3.0,
    "aliases": 2.0,
    "tags": 2.0,
    "symptom": 1.0,
    "signatures": 1.0,
    "root_cause": 0.5,
    "fix": 0.3,
}


@dataclass(frozen=True)
class Sig:
    """A signature ready to search: compiled pattern plus its masked texts for fuzzy alignment."""

    entry: int
    source: str  # the literal or regex as written, shown as evidence
    pattern: str  # the regex searched (a literal escaped); compiled by RE2 on first use
    literal: str | None  # normalised literal, searched in normalised lines
    type: str | None
    kind: str
    texts: tuple[str, ...]  # normalised literal and example
    terms: frozenset[str]
    required: frozenset[str]  # words every match contains: a cheap gate before the regex runs
    shared: int  # how many other entries' examples this signature also matches
    background: int  # how many public failure reports hold every word the signature requires
    numbers: frozenset[str]  # numbers the signature spells out: a line with other numbers is a sibling message
    names: frozenset[str]  # long names it spells ('sqrtbackward'): a line naming another is a sibling message
    family: int  # how many entries carry this very pattern
    names_cause: bool  # whoever prints this message has the entry's root cause (the record says so)

    @property
    def matcher(self) -> SignatureRegex | None:
        """The compiled pattern; None when RE2 cannot run it (lint reports it)."""
        return compile_signature(self.pattern)


class Index:
    """Entries, signatures, aliases and a BM25 term model, all from plain data."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.entries: list[dict[str, str]] = data["entries"]
        self.sigs = [
            Sig(
                s["entry"],
                s["source"],
                s["pattern"],
                s["literal"],
                s["type"],
                s["kind"],
                tuple(s["texts"]),
                frozenset(s["terms"]),
                frozenset(s["required"]),
                s["shared"],
                s["background"],
                frozenset(s["numbers"]),
                frozenset(s["names"]),
                s["family"],
                s["names_cause"],
            )
            for s in data["sigs"]
        ]
        self.idf: dict[str, float] = data["idf"]
        # per entry, each title or alias as (its sorted words, their idf total), summed in that order
        self.aliases: dict[int, list[tuple[tuple[str, ...], float]]] = {}
        idf = self.idf.get  # the same sums in the same order, at C speed: every start makes 2,500 of them
        for entry, words in data["aliases"]:
            words = tuple(words)
            self.aliases.setdefault(entry, []).append((words, sum(map(idf, words, repeat(0.0)))))
        # aliases long enough to be error fragments: (entry, masked text, alias as written, background count)
        self.phrases: list[tuple[int, str, str, int]] = data["phrases"]
        # term -> [(entry, weight)]; the disk cache keeps each term's list marshalled on its own, read
        # when a paste holds the term: a one-line paste needs a few of thousands
        self._postings: dict[str, list[tuple[int, float]] | bytes] = dict(data["postings"])
        self._weights: dict[str, dict[int, float]] = {}
        self._max_weights: dict[str, float] = {}
        # words many unrelated failure reports share weigh less in the prose model (1.0 when absent)
        self.background: dict[str, float] = data["background"]
        self.sig_terms: dict[str, list[int]] = data["sig_terms"]
        self.gate: dict[str, list[int]] = data["gate"]  # rarest required word -> signatures
        self.ungated: list[int] = data["ungated"]  # signatures with no required word: always tried
        self.hash: str = data["hash"]
        # output that rules an entry out: (entry, pattern), run by RE2 like the signatures
        self.excludes: list[tuple[int, str]] = [(entry, pattern) for entry, pattern in data["excludes"]]
        # per entry, its tells as plain data ({"says", "when": [condition, ...]}), in record order
        self.tells: dict[int, list[dict[str, Any]]] = {}
        for tell in data["tells"]:
            self.tells.setdefault(tell["entry"], []).append(tell)

    def posting(self, term: str) -> list[tuple[int, float]]:
        """The postings of ``term`` (which must be in ``idf``): (entry, BM25 term-frequency part), by entry."""
        found = self._postings[term]
        if isinstance(found, bytes):
            found = self._postings[term] = marshal.loads(found)
        return found

    def posting_weights(self, term: str) -> dict[int, float]:
        """The postings of ``term`` as entry -> weight, kept for the next paste that holds the term."""
        found = self._weights.get(term)
        if found is None:
            found = self._weights[term] = dict(self.posting(term))
        return found

    def max_weight(self, term: str) -> float:
        """The largest BM25 term-frequency part among the postings of ``term``."""
        found = self._max_weights.get(term)
        if found is None:
            found = self._max_weights[term] = max(map(itemgetter(1), self.posting(term)))
        return found

    @property
    def postings(self) -> dict[str, list[tuple[int, float]]]:
        """Every term's postings, in the index's term order."""
        return {term: self.posting(term) for term in self._postings}

    @functools.cached_property
    def needed_terms(self) -> list[float]:
        """Per signature, how many of its words a line shares before it is aligned with the line."""
        floor, share = SCORE.min_shared_terms, SCORE.shared_terms_share
        return [max(floor, share * len(sig.terms)) for sig in self.sigs]

    @functools.cached_property
    def _phrase_starts(self) -> tuple[dict[str, list[int]], list[int]]:
        """(the first two words of each phrase, or its one word -> those phrases, the phrases with no
        word). Two words joined by a space (no word holds one) are rarer keys than one."""
        starts: dict[str, list[int]] = {}
        wordless: list[int] = []
        for number, (_entry, phrase, _alias, _background) in enumerate(self.phrases):
            found = _LEADING_WORDS.search(phrase)
            if found is None:
                wordless.append(number)
            else:
                first, second = found.groups()
                starts.setdefault(first if second is None else f"{first} {second}", []).append(number)
        return starts, wordless

    def phrases_in(self, text: str) -> list[tuple[int, str, str, int]]:
        """The phrases that can stand as whole words in ``text``, in index order. A phrase found there
        with no letter or digit (isalnum) on either side holds whole words of ``text`` (isalnum runs):
        its first two words are two words of ``text`` in a row."""
        starts, wordless = self._phrase_starts
        words = _ALNUM.findall(text)
        numbers = list(wordless)
        for key in {*words, *map(" ".join, pairwise(words))}:
            numbers += starts.get(key, ())
        return [self.phrases[n] for n in sorted(numbers)]


def _fixed_numbers(sig: Any) -> list[str]:
    """Numbers a signature spells out (`exitcode: -9`, `Signal 11`, `failure 700`): not `\\d`, classes or counts."""
    source = sig.literal if sig.literal is not None else _QUANTIFIED.sub(" ", sig.regex)
    return sorted(set(NUMBER.findall(source)))


def _signature_data(entry_index: int, sig: Any) -> dict[str, Any]:
    pattern = sig.regex if sig.regex is not None else re.escape(sig.literal)
    literal = normalize(sig.literal) if sig.literal else None
    texts = [literal] if literal else []
    texts.append(normalize(sig.example))
    made = {
        "entry": entry_index,
        "source": sig.regex or sig.literal,
        "pattern": pattern,
        "literal": literal,
        "type": sig.type,
        "kind": sig.kind,
        "texts": texts,
        "terms": sorted(set(terms(sig.literal or _REGEX_SYNTAX.sub(" ", sig.regex)))),
        "shared": 0,
        "numbers": _fixed_numbers(sig),
        "family": 1,
        "names_cause": bool(sig.names_cause),
    }
    made["names"] = sorted(spelled_names(made["source"]))
    made["required"] = sorted(_required_terms(made))
    return made


def _required_terms(sig: dict[str, Any]) -> set[str]:
    """Words every match of the signature must contain (alternatives and optional parts dropped)."""
    if sig["literal"] is not None:
        return set(sig["terms"])
    pattern, previous = sig["pattern"], None
    while previous != pattern:  # innermost groups first: '(?:bind|listen)' or '( \(core dumped\))?' go
        previous = pattern
        match = _INNER_GROUP.search(pattern)
        if match is None:
            break
        group, after = match.group(0), pattern[match.end() : match.end() + 1]
        opener = _GROUP_OPENER.match(group)
        optional = "|" in group or (after != "" and after in "?*{")
        kept = " " if optional or opener is None else group[opener.end() : -1]
        pattern = pattern[: match.start()] + kept + pattern[match.end() :]
    if "|" in pattern:
        return set()
    return set(terms(_REGEX_SYNTAX.sub(" ", _CHAR_CLASS.sub(" ", pattern))))


def unreachable_terms(sig: Any) -> list[str]:
    """Required words of ``sig`` missing from its own example: real text never passes its gate.

    A regex read as words can yield a word the text never has on its own (``\\d+x\\d+`` yields
    ``x`` while ``64x10`` is one word; words inside a path or URL are masked away), so the
    signature silently never fires.
    """
    return sorted(_required_terms(_signature_data(0, sig)) - set(terms(sig.example)))


def _count_shared(sigs: list[dict[str, Any]], examples: list[tuple[int, str]]) -> None:
    """A signature that also matches other entries' examples is generic: it names less.

    Only examples holding every required word of the signature can match it, so an
    inverted index keeps this near-linear on large catalogues. Signatures with the same
    pattern (one message written into several entries) are matched once, each distinct
    example text once; a literal is first looked for as plain text in an ASCII example.
    """
    holders: dict[str, set[int]] = {}
    words: dict[str, set[str]] = {}  # each distinct example text's words, cut once
    for number, (_entry, text) in enumerate(examples):
        found = words.get(text)
        if found is None:
            found = words[text] = set(terms(text))
        for term in found:
            holders.setdefault(term, set()).add(number)
    everything = set(range(len(examples)))
    lowered = [text.lower() if text.isascii() else None for _entry, text in examples]
    groups: dict[tuple[str, bool, tuple[str, ...]], list[dict[str, Any]]] = {}
    for sig in sigs:
        key = (sig["pattern"], sig["literal"] is not None, tuple(sig["required"]))
        groups.setdefault(key, []).append(sig)
    for (pattern_text, is_literal, required), same in groups.items():
        ranked = sorted(required, key=lambda t: len(holders.get(t, ())))
        candidates: Collection[int] = holders.get(ranked[0], set()) if ranked else everything  # read, not changed
        if is_literal and same[0]["source"].isascii():
            # RE2 matches an ASCII literal in ASCII text, in any case, only where the lower-cased text holds it
            plain = same[0]["source"].lower()
            candidates = [n for n in candidates if (low := lowered[n]) is None or plain in low]
        for term in ranked[1:]:
            if not candidates:
                break
            candidates = holders.get(term, set()).intersection(candidates)
        owners = {sig["entry"] for sig in same}
        if len(owners) == 1:  # an example of the one entry that carries the pattern shares nothing with it
            (owner,) = owners
            candidates = [n for n in candidates if examples[n][0] != owner]
        matched: list[int] = []
        verdicts: dict[str, bool] = {}
        for n in candidates:
            pattern = compile_signature(pattern_text)  # compiled (once) only when some text needs it
            if pattern is None:  # lint reports it; it matches nothing, so it shares nothing
                break
            text = examples[n][1]
            verdict = verdicts.get(text)
            if verdict is None:
                verdict = verdicts[text] = pattern.search(utf8(text)) is not None
            if verdict:
                matched.append(n)
        for sig in same:
            sig["shared"] = len({examples[n][0] for n in matched if examples[n][0] != sig["entry"]})


def _field_texts(entry: Any) -> dict[str, str]:
    return {
        "title": entry.title,
        "aliases": " ".join(entry.aliases),
        "tags": " ".join(entry.tags),
        "symptom": entry.symptom,
        "root_cause": entry.root_cause,
        "fix": entry.fix,
        "signatures": " ".join(f"{s.literal or ''} {s.example} {s.type or ''}" for s in entry.signatures),
    }


@functools.cache
def _whole_fields(names: tuple[str, ...]) -> tuple[int, int]:
    """(n, scale): the first n fields' weights are whole multiples of 1 / scale, a power of two, so
    their weighted counts add up exactly in floating point, in any order."""
    weights = [FIELD_WEIGHTS[name] for name in names]
    best = (0, 1)
    for scale in (1, 2, 4, 8, 16):
        whole = next((n for n, w in enumerate(weights) if not (w * scale).is_integer()), len(weights))
        best = max(best, (whole, scale), key=lambda found: found[0])
    return best


def _weighted_terms(entry: Any) -> dict[str, float]:
    """Each term's count in the record, each occurrence weighted by its field (FIELD_WEIGHTS).

    The sums are the ones that adding occurrence after occurrence, field by field, gives (the
    same floats, the same term order): the first fields, whose weights add up exactly, are
    counted at C speed; the rest are added one occurrence at a time.
    """
    fields = list(_field_texts(entry).items())
    whole, scale = _whole_fields(tuple(name for name, _text in fields))
    occurrences: list[str] = []
    for name, text in fields[:whole]:
        occurrences += terms(text) * int(FIELD_WEIGHTS[name] * scale)
    counted = Counter(occurrences)
    doc = dict(zip(counted, map(truediv, counted.values(), repeat(scale)), strict=True))
    for name, text in fields[whole:]:
        # doc[term] += weight for each occurrence in turn (update stores each sum before the next is read)
        words = terms(text)
        doc.update(zip(words, map(add, map(doc.get, words, repeat(0.0)), repeat(FIELD_WEIGHTS[name])), strict=True))
    return doc


def _bm25(docs: list[dict[str, float]]) -> tuple[dict[str, list[tuple[int, float]]], dict[str, float]]:
    """Postings with the BM25 term-frequency part precomputed, and each term's idf."""
    lengths = [sum(doc.values()) for doc in docs]
    average = sum(lengths) / max(len(lengths), 1) or 1.0
    lists: defaultdict[str, list[tuple[int, float]]] = defaultdict(list)
    for index, doc in enumerate(docs):
        norm = K1 * (1 - B + B * lengths[index] / average)
        # for each term: append (index, tf * (K1 + 1) / (tf + norm)), run at C speed
        tfs = doc.values()
        weights = map(truediv, map(mul, tfs, repeat(K1 + 1)), map(add, tfs, repeat(norm)))
        deque(map(list.append, map(lists.__getitem__, doc), zip(repeat(index), weights)), maxlen=0)
    postings = dict(lists)
    n = len(docs)
    idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
    return postings, idf


def _load_background() -> tuple[int, dict[str, list[int]]]:
    """(reports, word -> the reports holding it) from background.json; nothing when it is unreadable."""
    try:
        import json  # only here: a warm `kb search` reads no JSON

        data = json.loads(BACKGROUND.read_text(encoding="utf-8"))
        return int(data["reports"]), {str(t): [int(d) for d in docs] for t, docs in data["terms"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return 0, {}


def _background(
    sigs: list[dict[str, Any]],
    phrases: list[list[Any]],
    vocabulary: dict[str, float],
) -> dict[str, float]:
    """Set each signature's and alias phrase's background count; return the prose weight of shared words.

    A word held by a share r of failure reports weighs 1 / (1 + r / BACKGROUND_RATE). A signature's
    count is the number of reports holding every word it requires: a message that many reports print
    is printed by many root causes.
    """
    reports, holders = _load_background()
    held: dict[str, set[int]] = {}  # each word's reports as a set, made once
    counted: dict[tuple[str, ...], int] = {}  # a word list shared by many signatures is counted once

    def count(words: list[str]) -> int:
        key = tuple(words)
        found = counted.get(key)
        if found is None:
            docs: set[int] | None = None
            for term in words:
                reports_of = held.get(term)
                if reports_of is None:
                    reports_of = held[term] = set(holders.get(term, ()))
                docs = reports_of if docs is None else docs & reports_of
            found = counted[key] = len(docs) if docs else 0
        return found

    for sig in sigs:
        sig["background"] = count(sig["required"])
    for phrase in phrases:  # [entry, masked text, alias, words] -> [entry, masked text, alias, count]
        phrase[3] = count(phrase[3])
    if not reports:
        return {}
    return {
        term: round(min(1.0, BACKGROUND_RATE * reports / len(docs)), 6)
        for term, docs in sorted(holders.items())
        if term in vocabulary and len(docs) > BACKGROUND_RATE * reports
    }


def _entry_part(entry: Any, distinct: dict[tuple[Any, ...], dict[str, Any]]) -> dict[str, Any]:
    """What the index takes from one record alone: the same for the same record, so a record whose
    file is unchanged reuses it (``build_data``'s ``parts``) instead of cutting its text again."""
    sigs = []
    for sig in entry.signatures:
        key = (sig.literal, sig.regex, sig.example, sig.type, sig.kind, bool(sig.names_cause))
        made = distinct.get(key)
        if made is None:
            made = distinct[key] = _signature_data(0, sig)
        sigs.append(made)
    aliases = [sorted(set(terms(entry.title)))]
    phrases = []
    for alias in entry.aliases:
        words = sorted(set(terms(alias)))
        aliases.append(words)
        masked = normalize(alias)
        if len(masked) >= MIN_PHRASE and len(masked.split()) >= 3:  # a phrase, not an API name
            phrases.append([masked, alias, words])
    return {
        "row": [entry.id, entry.title, entry.area, entry.fix_summary],
        "excludes": [
            sig.regex if sig.regex is not None else re.escape(sig.literal) for sig in getattr(entry, "excludes", ())
        ],
        "tells": [tell_data(tell) for tell in getattr(entry, "tells", ())],
        "sigs": sigs,
        "examples": [sig.example for sig in entry.signatures],
        "aliases": aliases,
        "phrases": phrases,
        "doc": _weighted_terms(entry),
    }


def build_data(
    entries: list[Any],
    digest: str,
    layers: dict[str, str] | None = None,
    parts: dict[str, dict[str, Any]] | None = None,
    keys: Sequence[str | None] = (),
) -> dict[str, Any]:
    """The plain-data index of ``entries`` (pydantic ``Entry`` objects or look-alikes);
    ``layers`` names the catalogue layer of entries that are not in the base.

    ``keys`` (one per entry, None for none) are the content digests of the records' files: an entry
    whose key is in ``parts`` takes its part from there, and every part made is added under its key."""
    rows: list[dict[str, Any]] = []
    sigs: list[dict[str, Any]] = []
    tells: list[dict[str, Any]] = []
    aliases: list[tuple[int, list[str]]] = []
    phrases: list[list[Any]] = []
    docs: list[dict[str, float]] = []
    examples: list[tuple[int, str]] = []
    excludes: list[list[Any]] = []
    distinct: dict[tuple[Any, ...], dict[str, Any]] = {}  # a signature written into many records is made once
    known = parts if parts is not None else {}
    for index, entry in enumerate(entries):
        key = keys[index] if index < len(keys) else None
        part = known.get(key) if key is not None else None
        if part is None:
            part = _entry_part(entry, distinct)
            if key is not None:
                known[key] = part
        entry_id, title, area, fix_summary = part["row"]
        layer = (layers or {}).get(entry_id)
        rows.append({"id": entry_id, "title": title, "area": area, "fix_summary": fix_summary, "layer": layer})
        excludes += ([index, pattern] for pattern in part["excludes"])
        tells += ({"entry": index, **tell} for tell in part["tells"])
        sigs += ({**made, "entry": index} for made in part["sigs"])  # the lists in it are shared, never changed
        examples += ((index, example) for example in part["examples"])
        aliases += ((index, words) for words in part["aliases"])
        phrases += ([index, masked, alias, list(words)] for masked, alias, words in part["phrases"])
        docs.append(part["doc"])
    _count_shared(sigs, examples)
    families: dict[str, set[int]] = {}  # the same pattern written into several entries
    for sig in sigs:
        families.setdefault(sig["pattern"], set()).add(sig["entry"])
    for sig in sigs:
        sig["family"] = len(families[sig["pattern"]])
    postings, idf = _bm25(docs)
    sig_terms: dict[str, list[int]] = {}
    for number, sig in enumerate(sigs):
        for term in sig["terms"]:
            sig_terms.setdefault(term, []).append(number)
    gate: dict[str, list[int]] = {}
    ungated: list[int] = []
    for number, sig in enumerate(sigs):
        required = sig["required"]
        if required:
            rarest = min(required, key=lambda t: len(sig_terms.get(t, ())))
            gate.setdefault(rarest, []).append(number)
        else:
            ungated.append(number)
    background = _background(sigs, phrases, idf)
    return {
        "format": FORMAT,
        "hash": digest,
        "entries": rows,
        "sigs": sigs,
        "aliases": aliases,
        "phrases": phrases,
        "postings": postings,
        "idf": idf,
        "sig_terms": sig_terms,
        "gate": gate,
        "ungated": ungated,
        "background": background,
        "excludes": excludes,
        "tells": tells,
    }


def cache_dir() -> Path:
    """$XDG_CACHE_HOME/trainkb, else ~/.cache/trainkb; a per-user temp folder when the home folder does
    not exist (HOME=/nonexistent is how service and CI users say they have none: never made here)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):  # unset, empty or relative: the XDG spec says ignore it (no cache in the cwd)
        return Path(base) / "trainkb"
    home = _home()
    if home is not None and os.path.isabs(home) and os.path.isdir(home):
        return Path(home) / ".cache" / "trainkb"
    return _temp_cache()


def _home() -> str | None:
    """$HOME, or the password database's home when HOME is unset or empty. An empty HOME is no home:
    os.path.expanduser("~") would make it "/" (its fallback for an empty result), a cache at the root."""
    home = os.environ.get("HOME")
    if home:
        return home
    try:
        import pwd  # only here: HOME is nearly always set; POSIX only

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError):  # no such module, or a uid with no entry (a container's --user 12345)
        return None


@functools.cache
def _temp_cache() -> Path:
    """A cache folder of this user's own under the temp folder; one that someone else made there (who
    could plant an index) is passed over for a fresh folder that lasts this process only."""
    import tempfile  # only here: a home folder is the usual case

    path = Path(tempfile.gettempdir()) / f"trainkb-{os.getuid()}"
    with contextlib.suppress(OSError):
        path.mkdir(mode=0o700)
    try:
        info = path.lstat()
    except OSError:
        info = None
    if info is not None and stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022:
        return path
    import atexit
    import shutil

    fresh = tempfile.mkdtemp(prefix="trainkb-")
    atexit.register(shutil.rmtree, fresh, True)
    return Path(fresh)


@functools.cache
def _code_digest() -> str:
    """A digest of the code that shapes the index, so an upgraded trainkb never reads a stale one: a
    CRC-32, as wide as the part of a SHA-256 this name once kept, without loading OpenSSL on a warm start."""
    digest = zlib.crc32(str(FORMAT).encode())
    here = Path(__file__).parent
    for file in [*(here / name for name in ("_index.py", "_normalize.py", "_policy.py", "_sigregex.py")), BACKGROUND]:
        with contextlib.suppress(OSError):
            digest = zlib.crc32(file.read_bytes(), digest)
    with contextlib.suppress(OSError):  # the YAML reading rules: the kept documents are what they made
        digest = zlib.crc32((here.parent / "catalogue" / "_yamlio.py").read_bytes(), digest)
    return f"{digest:08x}"


_MAX_CACHE_BYTES = 1 << 30  # far above any index kb writes: a larger file in its place is not one


def _cache_path(digest: str) -> Path:
    version = f"{sys.version_info[0]}{sys.version_info[1]}"  # marshal's format follows the interpreter
    return cache_dir() / f"index-{_code_digest()}-py{version}-{digest}.marshal"


def _read_cache(path: Path, digest: str) -> dict[str, Any] | None:
    raw = read_regular(path, _MAX_CACHE_BYTES + 1, follow=False)  # a FIFO or /dev/zero in its place: a miss
    if raw is None or len(raw) > _MAX_CACHE_BYTES:
        return None
    try:
        data = marshal.loads(raw)
    except Exception:  # corrupt, partial or foreign: only a miss
        return None
    if isinstance(data, dict) and data.get("format") == FORMAT and data.get("hash") == digest:
        return data
    return None


def _read_prebuilt(path: Path, digest: str) -> dict[str, Any] | None:
    """The index built ahead for this very catalogue state (same name, so same code, Python and content
    digest; the digest inside is checked as for any cache file), copied into the user's cache so that
    the next search reads it from there. An edited catalogue or a layer hashes to another name."""
    shipped = PREBUILT / path.name
    data = _read_cache(shipped, digest)
    if data is None:
        return None
    with contextlib.suppress(OSError):  # a read-only cache: the next search reads the prebuilt index again
        _write_atomic(path, shipped.read_bytes())
    return data


def _write_atomic(path: Path, raw: bytes) -> None:
    """Write ``raw`` through a temporary file beside ``path``, so no reader ever sees half a file; a
    failure leaves no temporary behind and raises."""
    import tempfile  # only here: a warm `kb search` never writes

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _write_cache(path: Path, data: dict[str, Any]) -> None:
    """Write atomically and keep only the newest few indexes; never raise. A cache that cannot be
    written is said in one line (search still answers, building the index each time)."""
    try:
        stored = {**data, "postings": {term: marshal.dumps(found) for term, found in data["postings"].items()}}
        _write_atomic(path, marshal.dumps(stored))
    except Exception as exc:  # read-only home, full disk
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        import logging  # only here: `kb search` on a warm cache stays light

        logging.getLogger(__name__).warning(
            "kb: cannot keep the search index in %s (%s), so every search builds it again; "
            "set XDG_CACHE_HOME to a writable folder",
            path.parent,
            why,
        )
        return
    with contextlib.suppress(OSError):  # a racing writer may remove one first
        old = sorted(path.parent.glob("index-*.marshal"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in old[_KEEP:]:
            stale.unlink()


def _parts_path(folder: Path) -> Path:
    """Where each record's part is kept: one file per code digest and Python, as the indexes are named."""
    return folder / f"parts-{_code_digest()}-py{sys.version_info[0]}{sys.version_info[1]}.marshal"


def _read_parts(path: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The parts and the parsed record documents kept at ``path``, each keyed by its record's content
    digest; none when the file is not one this code and Python wrote (its format, code digest and
    Python are checked inside too)."""
    raw = read_regular(path, _MAX_CACHE_BYTES + 1, follow=False)
    if raw is None or len(raw) > _MAX_CACHE_BYTES:
        return {}, {}
    try:
        data = marshal.loads(raw)
    except Exception:  # corrupt, partial or foreign: nothing reused
        return {}, {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("code") != path.name:
        return {}, {}
    parts, docs = data.get("parts"), data.get("docs")
    return (parts if isinstance(parts, dict) else {}), (docs if isinstance(docs, dict) else {})


def _write_parts(path: Path, parts: dict[str, dict[str, Any]], docs: dict[str, Any]) -> None:
    """Keep ``parts`` and ``docs`` at ``path`` atomically, and no other code's or Python's beside them
    (they would only pile up, one per upgrade); a cache that cannot be written only costs the next build."""
    kept = {"format": FORMAT, "code": path.name, "parts": parts, "docs": docs}
    with contextlib.suppress(OSError, ValueError):
        try:
            raw = marshal.dumps(kept)
        except ValueError:
            raw = marshal.dumps({**kept, "docs": {key: doc for key, doc in docs.items() if _marshalled(doc)}})
        _write_atomic(path, raw)
        for stale in path.parent.glob("parts-*.marshal"):
            if stale != path:
                stale.unlink()


def _build(
    roots: list[Path], digest: str, use_cache: bool
) -> tuple[dict[str, Any], dict[str, dict[str, Any]], dict[str, Any]]:
    """The index of the catalogue at ``roots``, the part of each of its records and each record's
    parsed document. A part or a document is taken from the user's cache or the index built ahead
    only under its record's content digest (a document is still validated); parts that do not fit the
    index's shape are dropped and the index is built from the records alone."""
    from ..catalogue import load_layers  # pydantic and YAML only on a cache miss

    kept_parts: dict[str, dict[str, Any]] = {}
    kept_docs: dict[str, Any] = {}
    for folder in [PREBUILT, cache_dir()] if use_cache else []:
        parts, docs = _read_parts(_parts_path(folder))
        kept_parts.update(parts)
        kept_docs.update(docs)
    cat = load_layers(roots, kept_docs)
    entries = cat.ordered()
    keys = [cat.positions[entry.id].digest for entry in entries]
    parts = {key: kept_parts[key] for key in keys if key is not None and key in kept_parts}
    try:
        data = build_data(entries, digest, cat.origin, parts, keys)
    except Exception:  # a kept part not of this shape: build every record again
        parts = {}
        data = build_data(entries, digest, cat.origin, parts, keys)
    return data, parts, kept_documents(cat, entries, keys)


def kept_documents(cat: Any, entries: Sequence[Any], keys: Sequence[str | None]) -> dict[str, Any]:
    """Each entry's parsed document under its content digest (``keys``, in ``entries``' order), as the
    parts file keeps them."""
    return {key: cat.positions[entry.id].data for entry, key in zip(entries, keys, strict=True) if key}


def _marshalled(document: Any) -> bool:
    try:
        marshal.dumps(document)
    except ValueError:  # a YAML date and the like: that record is parsed again next time
        return False
    return True


_SETTLED_NS = 2_000_000_000  # a file untouched this long has times that any later write changes
_CACHE_NAME = re.compile(r"index-[0-9a-f]{8}-py\d+-([0-9a-f]{16})\.marshal")


def _known_digest(stamps: list[tuple[str, int, int, int, int]]) -> tuple[Path, str | None]:
    """(where the content digest of a catalogue in this state is remembered, that digest when it is).

    Stating every file is cheaper than reading and hashing it; the digest a state was found to have
    is remembered in a file named by a checksum of the stamps (with this code's own digest) that holds
    the stamps too, compared whole: no two states share a digest, and a warm search reads no record.
    """
    state = _state(stamps)
    known = cache_dir() / f"stamp-{zlib.crc32(state):08x}"
    # the index's name (about 60 characters), a line break, the state; a FIFO there must not block
    raw = read_regular(known, len(state) + 256, follow=False)
    name, _, held = raw.partition(b"\n") if raw is not None else (b"", b"", b"")
    if held != state:
        return known, None
    try:
        name_text = name.decode("ascii")
    except ValueError:
        return known, None
    found = _CACHE_NAME.fullmatch(name_text)
    return known, found.group(1) if found and name_text == _cache_path(found.group(1)).name else None


def _state(stamps: list[tuple[str, int, int, int, int]]) -> bytes:
    """The stamps and this code's digest, as a stamp file holds them."""
    return repr((_code_digest(), stamps)).encode()


def _remember_digest(
    known: Path, roots: Sequence[Path], stamps: list[tuple[str, int, int, int, int]], path: Path
) -> None:
    """Remember which index a catalogue state has, once its files have settled (a file written within
    a clock tick of the stamp could change again without changing its times) and when no file
    changed since the stamp (the digest found may be of a later state)."""
    import time  # only here: a warm `kb search` never writes

    now = time.time_ns()
    if any(now - max(mtime, ctime) < _SETTLED_NS for _f, _i, _s, mtime, ctime in stamps):  # a missing file: -1
        return
    if _stamp(roots) != stamps:
        return
    with contextlib.suppress(OSError):
        tmp = known.with_name(f"{known.name}.{os.getpid()}.tmp")
        tmp.write_bytes(path.name.encode("ascii") + b"\n" + _state(stamps))
        os.replace(tmp, known)
        old = sorted(known.parent.glob("stamp-*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in old[_KEEP:]:
            stale.unlink()


def _stamp(roots: Sequence[Path]) -> list[tuple[str, int, int, int, int]]:
    """Every file the index is built from, with what any write to it changes (inode, size, times)."""
    stamps = []
    for root in roots:
        for file in [root / AREA_FILE, root / LAYER_FILE, *record_files(root)]:
            try:
                info = file.stat()
            except OSError:
                stamps.append((str(file), -1, -1, -1, -1))
                continue
            stamps.append((str(file), info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns))
    return stamps


def load_index(roots: str | os.PathLike[str] | Sequence[Path], use_cache: bool = True) -> Index:
    """The index of the catalogue at ``roots`` (a folder, or a base and its layers), from the
    disk cache when its hash (over every layer) still matches.

    A catalogue edited while the index is built may have been parsed in another state than the one
    hashed: that index answers this search but is not stored under the hash."""
    roots = [Path(r).resolve() for r in ([roots] if isinstance(roots, str | os.PathLike) else roots)]
    stamps = _stamp(roots) if use_cache else []
    known, digest = _known_digest(stamps) if use_cache else (None, None)
    if digest is not None:
        data = _read_cache(_cache_path(digest), digest)
        if data is not None:
            with contextlib.suppress(Exception):  # not of this shape: hash the files as below
                return Index(data)
    digest = layers_digest(roots)
    path = _cache_path(digest)
    data = (_read_cache(path, digest) or _read_prebuilt(path, digest)) if use_cache else None
    if data is not None:
        try:
            index = Index(data)
        except Exception:  # a file of the right name and hash but not of this shape: only a miss
            data = None
        else:
            if known is not None:
                _remember_digest(known, roots, stamps, path)
            return index
    if data is None:
        from .._status import status

        # a write between the hash and here shows in the hash taken again after the build; one
        # from here on (undone or not by then) changes a file's inode, size or times
        with status("kb: building the search index (once after each catalogue change)"):
            data, parts, docs = _build(roots, digest, use_cache)
        if use_cache and _stamp(roots) == stamps and layers_digest(roots) == digest:
            _write_cache(path, data)
            _write_parts(_parts_path(path.parent), parts, docs)
            if known is not None:
                _remember_digest(known, roots, stamps, path)
    return Index(data)
