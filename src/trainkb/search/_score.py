"""Score every entry against a parsed paste: signature hits, fuzzy alignment, prose.

Three kinds of evidence, each mapped onto the same 0-100 scale before they are combined:

- an exact signature hit (literal substring or regex) on a line, weighted by that line's
  role (the final exception counts most) and discounted for short or generic signatures;
- a rapidfuzz alignment of a signature's text or example inside an exception message,
  for retyped, reworded or truncated messages, and aliases found verbatim in one;
- a BM25 term model over each record's text plus the coverage of its title and aliases,
  for prose descriptions.

The best kind sets the score and the others add a little. When the paste's own failure
message matches no signature anywhere, the prose side is capped: the paste is about an
error the catalogue does not know, and topic words alone must not look like a match.
"""

from __future__ import annotations

import functools
import heapq
import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain

from ._index import Index, Sig
from ._input import FAILURE_WEIGHT, Message, Query
from ._normalize import NUMBER, content_words, normalize, terms
from ._policy import PASTE, SCORE, SIGNATURES
from ._sigregex import compile_signature, utf8

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from rapidfuzz.distance import ScoreAlignment

__all__ = ["Evidence", "Scored", "score_entries"]


@dataclass(frozen=True)
class Evidence:
    """Which signature (or alias) matched which line of the paste."""

    line: int  # 1-based line number in the original input
    text: str
    signature: str
    span: tuple[int, int] | None  # character span in ``text`` when the match is exact
    strength: float = field(default=0.0, compare=False)
    at: int = field(default=-1, compare=False)  # index into Query.lines
    via: str = "signature"  # or "alias": an error fragment from the entry's aliases, found verbatim
    ambiguous: bool = field(default=False, compare=False)  # many root causes print this message
    words: frozenset[str] = field(default=frozenset(), compare=False, repr=False)  # the signature's words
    names_cause: bool = field(default=False, compare=False)  # the record says this message establishes its cause
    # a cause-naming message aligned without every word it requires: part of that message (cut or retyped)
    partial: bool = field(default=False, compare=False)


@dataclass
class Scored:
    """One entry's score for a paste, with the evidence and the symptom it rests on."""

    entry: int
    score: float
    prose: float = 0.0  # breaks ties between entries that share a signature
    evidence: list[Evidence] = field(default_factory=list)
    cause: float = 0.0  # strength of the best match of a signature that names this entry's cause (not a symptom)
    # the line a signature matched on the exception the paste ends in (on any line when it ends in none);
    # None: the entry does not explain the failure, and nothing it matched can vouch for it
    symptom: str | None = None
    # the messages (first line index of each) that ``symptom`` and this entry's other such lines belong to:
    # entries sharing the first entry's symptom message are the candidates for one symptom
    symptom_at: tuple[int, ...] = ()
    partial: bool = False  # ``symptom`` is part of a message that names this entry's cause, not a shared line


def _owners(query: Query) -> list[Message | None]:
    """The message each line belongs to (a message runs on over its continuation lines)."""
    starts = {m.line_index: m for m in query.messages}
    owners: list[Message | None] = []
    current = None
    for i, line in enumerate(query.lines):
        if i in starts:
            current = starts[i]
        elif line.role != "message":
            current = None
        owners.append(current)
    return owners


def _brevity(size: int) -> float:
    """A signature or alias of ``size`` characters names the failure less surely the shorter it is."""
    return min(1.0, SIGNATURES.brevity_base + size / SIGNATURES.brevity_chars)


def _specificity(sig: Sig) -> float:
    """Short or shared signatures name the failure less surely than long, unique ones."""
    size = len(sig.literal) if sig.literal is not None else len(sig.source)
    return _brevity(size) * (1.0 - SIGNATURES.shared_discount * min(sig.shared, SIGNATURES.max_shared))


def _widely_printed(reports: int) -> bool:
    """Public failure reports holding a message this often show that many root causes print it."""
    return reports >= SIGNATURES.ambiguous_reports


def _ambiguous(sig: Sig) -> bool:
    """Many root causes print this message: public failure reports share it, or many entries claim it."""
    return (
        _widely_printed(sig.background)
        or sig.shared >= SIGNATURES.ambiguous_shared
        or sig.family >= SIGNATURES.ambiguous_family
    )


def _type_bonus(sig: Sig, message: Message | None) -> float:
    if not sig.type or message is None or not message.type:
        return 0.0
    return SCORE.type_bonus if sig.type.rsplit(".", 1)[-1] == message.type.rsplit(".", 1)[-1] else 0.0


def _chars(encoded: bytes, text: str, offset: int) -> int:
    """The character offset in ``text`` of byte ``offset`` in its UTF-8 ``encoded`` form."""
    if len(encoded) == len(text):  # ASCII: bytes are characters
        return offset
    try:
        return len(encoded[:offset].decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError:  # an offset inside a character: count the whole ones before it
        return len(encoded[:offset].decode("utf-8", "ignore"))


def _exact(index: Index, query: Query) -> dict[int, list[Evidence]]:
    """Exact signature hits: regex/literal on the cleaned lines, literals also on masked lines."""
    lines = query.lines
    owners = _owners(query)
    weights = [
        o.weight if o else SCORE.role_weight.get(line.role, SCORE.role_weight["text"])
        for o, line in zip(owners, lines, strict=True)
    ]
    raw = "\n".join(line.text for line in lines)
    # RE2 runs on UTF-8 bytes: encode once per paste, not once per signature ("surrogatepass": a str
    # holding a lone surrogate still searches, its bytes match nothing); spans are mapped back to characters
    encoded = [utf8(line.text) for line in lines]
    data = b"\n".join(encoded)
    starts, pos = [], 0
    for line in encoded:
        starts.append(pos)
        pos += len(line) + 1
    masked: list[str] | None = None
    hits: dict[int, list[Evidence]] = {}
    present = set(terms(raw))
    gated = [n for term in present for n in index.gate.get(term, ())]
    for number in sorted({*index.ungated, *gated}):
        sig = index.sigs[number]
        if not sig.required <= present:
            continue
        found: list[tuple[int, tuple[int, int] | None]] = []
        matcher = sig.matcher
        for match in matcher.finditer(data) if matcher is not None else ():
            at = bisect_right(starts, match.start()) - 1
            start, end = match.start() - starts[at], min(match.end() - starts[at], len(encoded[at]))
            found.append((at, (_chars(encoded[at], lines[at].text, start), _chars(encoded[at], lines[at].text, end))))
            if len(found) >= SCORE.max_hits_per_sig:
                break
        if not found and sig.literal:
            if masked is None:
                masked = [normalize(line.text) for line in lines]
            found = [(i, None) for i, text in enumerate(masked) if sig.literal in text]
            del found[SCORE.max_hits_per_sig :]
        for at, span in found:
            strength = SCORE.exact_strength * weights[at] * _specificity(sig) + _type_bonus(sig, owners[at])
            hits.setdefault(sig.entry, []).append(
                Evidence(
                    lines[at].number,
                    lines[at].text.strip() if span is None else lines[at].text,
                    sig.source,
                    span,
                    strength,
                    at,
                    ambiguous=_ambiguous(sig),
                    words=sig.terms,
                    names_cause=sig.names_cause,
                )
            )
    return hits


def _warning(message: Message | None) -> bool:
    return message is not None and (message.type or "").endswith(PASTE.warning_suffix)


def _on_failure(message: Message | None) -> bool:
    """The line belongs to the exception the paste ends in (its last traceback block)."""
    return message is not None and message.weight >= FAILURE_WEIGHT


def _message_at(owners: list[Message | None], at: int) -> int:
    """The first line of the message line ``at`` belongs to (the line itself when it is in none)."""
    owner = owners[at]
    return owner.line_index if owner else at


def _message_text(query: Query, owners: list[Message | None], at: int) -> str:
    """The text of the message line ``at`` belongs to; the line's own text when it is in none."""
    owner = owners[at]
    return owner.text if owner else query.lines[at].text


def _segments(query: Query) -> list[tuple[int, str, float, Message | None]]:
    """(line index, text, weight, message) to align signatures in: messages, then other text lines.

    A repeated text is aligned once (where it weighs most, then latest), and only the last
    few hundred of each kind are kept, so a log of thousands of identical errors stays cheap.
    """
    owners = _owners(query)
    plain = [
        i
        for i, line in enumerate(query.lines)
        if line.role == "text" and owners[i] is None and len(line.text) >= SCORE.min_line_chars
    ]
    found: dict[str, tuple[int, str, float, Message | None]] = {}
    candidates: list[tuple[int, str, float, Message | None]] = [
        (m.line_index, m.text, m.weight, m) for m in query.messages[-SCORE.max_message_segments :]
    ]
    candidates += [(i, query.lines[i].text, SCORE.role_weight["text"], None) for i in plain[-SCORE.max_text_segments :]]
    for segment in candidates:
        seen = found.get(segment[1])
        if seen is None or (segment[2], segment[0]) >= (seen[2], seen[0]):
            found[segment[1]] = segment
    return list(found.values())


def _widen(text: str, start: int, end: int) -> str:
    """``text[start:end]`` grown to whole words, so a window's edge does not cut one in two."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return text[start:end]


def _substituted(candidate: str, text: str, aligned: ScoreAlignment, names: frozenset[str]) -> bool:
    """True when the aligned windows trade content words, as in '...signal: Killed' against
    '...signal: Segmentation fault': a sibling message, not a retyped copy of this one.

    Digits are the variable parts of one message ('1st', 'cuda:0'); a long name ending in them is not
    ('SqrtBackward0' against 'SolveBackward': another op).
    """
    mine = Counter(content_words(_widen(candidate, aligned.src_start, aligned.src_end), names))
    theirs = Counter(content_words(_widen(text, aligned.dest_start, aligned.dest_end)))
    return bool(mine - theirs) and bool(theirs - mine)


@functools.cache
def _aligner() -> Callable[..., ScoreAlignment | None]:
    """rapidfuzz's partial alignment, imported on first use: a paste that nothing needs aligning never loads it."""
    from rapidfuzz import fuzz

    return fuzz.partial_ratio_alignment


def _fuzzy(
    index: Index,
    query: Query,
    segments: list[tuple[int, str, float, Message | None]],
) -> dict[int, list[Evidence]]:
    """Align signature texts inside messages and lines, for retyped, cut or reworded pastes."""
    hits: dict[int, list[Evidence]] = {}
    for at, raw, weight, message in segments:
        text = normalize(raw[: PASTE.max_line_chars])
        if len(text) < SCORE.min_fuzzy_chars:
            continue
        numbers = set(NUMBER.findall(raw[: PASTE.max_line_chars]))
        words = set(terms(raw[: PASTE.max_line_chars]))
        overlap = Counter(chain.from_iterable(index.sig_terms.get(word, ()) for word in words))
        needed = index.needed_terms
        # by signature number, not in the words' (hash-seeded) set order: evidence of equal strength keeps this order
        for number, shared in sorted(overlap.items()):
            if shared < needed[number]:
                continue
            sig = index.sigs[number]
            if not sig.numbers <= numbers:  # "exitcode: -11" is not a retyped "exitcode: -9"
                continue
            best = 0.0
            for candidate in sig.texts:
                aligned = _aligner()(candidate, text, score_cutoff=SCORE.fuzzy_floor)
                if aligned is None or not aligned.score:
                    continue
                coverage = min(len(text), len(candidate)) / max(len(candidate), 1)
                strength = (aligned.score - SCORE.fuzzy_floor) / (100 - SCORE.fuzzy_floor) * math.sqrt(coverage)
                if _substituted(candidate, text, aligned, sig.names):
                    strength *= SCORE.substitution_penalty
                best = max(best, strength)
            if best > 0:
                line = query.lines[at]
                strength = SCORE.fuzzy_strength * best * weight * _specificity(sig) + _type_bonus(sig, message)
                hits.setdefault(sig.entry, []).append(
                    Evidence(
                        line.number,
                        line.text.strip(),
                        sig.source,
                        None,
                        strength,
                        at,
                        ambiguous=_ambiguous(sig),
                        words=sig.terms,
                        # an alignment vouches only when the line holds every word the signature requires:
                        # masking aligns a sibling message that differs in the very word naming the cause
                        # ('tokenizer' against 'use_distributed_sampler'), which ranks the entry but is not its message
                        names_cause=sig.names_cause and sig.required <= words,
                        partial=sig.names_cause and not sig.required <= words,
                    )
                )
    return hits


def _phrases(
    index: Index,
    query: Query,
    segments: list[tuple[int, str, float, Message | None]],
) -> dict[int, list[Evidence]]:
    """Aliases written as error fragments, found verbatim (masked) in an exception message."""
    hits: dict[int, list[Evidence]] = {}
    for _at, _text, _weight, message in segments:
        if message is None or message.weight < PASTE.other_weight or not message.type:
            continue
        text = f" {normalize(message.text[: PASTE.max_line_chars])} "
        for entry, phrase, alias, background in index.phrases_in(text):
            pos = text.find(phrase)
            if pos < 0 or text[pos - 1].isalnum() or text[pos + len(phrase)].isalnum():
                continue
            line = query.lines[message.line_index]
            strength = SCORE.alias_strength * message.weight * _brevity(len(phrase))
            hits.setdefault(entry, []).append(
                Evidence(
                    line.number,
                    line.text.strip(),
                    alias,
                    None,
                    strength,
                    message.line_index,
                    "alias",
                    _widely_printed(background),
                    frozenset(terms(alias)),
                )
            )
    return hits


def _bm25(
    index: Index, query_terms: list[str], background: dict[str, float]
) -> tuple[dict[int, float], dict[int, float]]:
    """BM25 over the paste's most informative words (a long log's rarest ones carry the signal):
    with every word at full weight, and with each word at its ``background`` weight (1.0 when absent).

    The first holds at least every entry that can rank among the ``prose_candidates`` best (ties
    included), the second at least the best one; each entry in it has its whole score, summed word
    by word as a full pass sums it, and the entries stand in a full pass's order. A full pass over a
    large catalogue's common words costs most of a query; `_contenders` shows when it can be skipped.
    """
    counts: dict[str, int] = {}
    for term in query_terms:
        if term in index.idf:
            counts[term] = counts.get(term, 0) + 1
    chosen = heapq.nlargest(SCORE.max_query_terms, counts, key=index.idf.__getitem__)
    boosts, lows = [], []
    for term in chosen:
        idf, repeats = index.idf[term], min(counts[term], SCORE.max_term_repeats) ** 0.5
        boosts.append(idf * repeats)
        lows.append(idf * background.get(term, 1.0) * repeats)
    plain_docs = _contenders(index, chosen, boosts, SCORE.prose_candidates)
    if not any(term in background for term in chosen):
        plain = _summed(index, chosen, boosts, plain_docs)
        return plain, plain
    low_docs = _contenders(index, chosen, lows, 1)
    if plain_docs is None and low_docs is None:  # both in one pass
        scores: dict[int, float] = {}
        weighted: dict[int, float] = {}
        for term, boost, low in zip(chosen, boosts, lows, strict=True):
            get, get_low = scores.get, weighted.get
            for doc, weight in index.posting(term):
                scores[doc] = get(doc, 0.0) + boost * weight
                weighted[doc] = get_low(doc, 0.0) + low * weight
        return scores, weighted
    return _summed(index, chosen, boosts, plain_docs), _summed(index, chosen, lows, low_docs)


_BOUND_MARGIN = 1e-9  # relative slack for rounding: sums in another order may differ in their last bits
_PRUNE_FROM = 5000  # postings below which a full pass is cheaper than bounding it (a 200-entry catalogue has ~600)
_REFILTER = 0.75  # share of the bounds left at the last pruning below which entries are pruned again


def _contenders(index: Index, terms: list[str], boosts: list[float], best: int) -> list[int] | None:
    """Entries, by number, among which the ``best`` highest BM25 scores all lie (ties included), or
    None when every entry with a word must be scored (or the words have too few postings to be worth it).

    Max-score pruning: words are added strongest bound first (a word's bound is its boost times its
    largest posting weight). Once the bounds of the words left add up to less than the ``best``-th
    partial score, an entry none of the added words holds cannot reach that score, so the words
    left are looked up only for the entries that still can: those whose partial score plus the
    bounds left reaches it. Every weight is positive, so a partial score never exceeds the whole.
    """
    if len(terms) < 2 or sum(len(index.posting(term)) for term in terms) < _PRUNE_FROM:
        return None
    bounds = [boost * index.max_weight(term) for term, boost in zip(terms, boosts, strict=True)]
    order = sorted(range(len(terms)), key=bounds.__getitem__, reverse=True)
    partial: dict[int, float] = {}
    done = 0
    for at in order:
        done += 1
        if done == len(order):
            return None
        boost, get = boosts[at], partial.get
        for doc, weight in index.posting(terms[at]):
            partial[doc] = get(doc, 0.0) + boost * weight
        left = _reach(bounds, order[done:])
        if len(partial) >= best and left < max(partial.values()) and left < _floor(partial, best):
            break
    filtered_at = math.inf
    for at in order[done:]:
        left = _reach(bounds, order[done:])
        if left <= _REFILTER * filtered_at:  # dropping entries costs a pass over them: worth it as the bounds fall
            cut, filtered_at = _floor(partial, best) - left, left
            partial = {doc: score for doc, score in partial.items() if score * (1 + _BOUND_MARGIN) >= cut}
        boost, done = boosts[at], done + 1
        posting = index.posting(terms[at])
        if len(posting) <= len(partial):
            for doc, weight in posting:
                if doc in partial:
                    partial[doc] += boost * weight
        else:
            weights = index.posting_weights(terms[at])
            for doc in partial:
                if (found := weights.get(doc)) is not None:
                    partial[doc] += boost * found
    floor = _floor(partial, best)
    return sorted(doc for doc, score in partial.items() if score * (1 + _BOUND_MARGIN) >= floor)


def _reach(bounds: list[float], left: list[int]) -> float:
    """The most that the words numbered ``left`` can add to an entry's score, rounding allowed for."""
    return sum(bounds[n] for n in left) * (1 + _BOUND_MARGIN)


def _floor(partial: dict[int, float], best: int) -> float:
    """The ``best``-th highest partial score, less rounding: the whole ``best``-th score is at least this."""
    return sorted(partial.values(), reverse=True)[best - 1] * (1 - _BOUND_MARGIN)  # nlargest, at C speed


def _summed(index: Index, terms: list[str], boosts: list[float], docs: list[int] | None) -> dict[int, float]:
    """Each entry's BM25 score, word after word in ``terms`` order, entries in order of first appearance
    (postings run by entry number); only ``docs`` (sorted) when given, else every entry with a word."""
    scores: dict[int, float] = {}
    wanted = None if docs is None else set(docs)
    for term, boost in zip(terms, boosts, strict=True):
        get, posting = scores.get, index.posting(term)
        if wanted is None or docs is None:
            for doc, weight in posting:
                scores[doc] = get(doc, 0.0) + boost * weight
        elif len(posting) <= len(docs):  # the shorter of the two is walked, by entry number either way
            for doc, weight in posting:
                if doc in wanted:
                    scores[doc] = get(doc, 0.0) + boost * weight
        else:
            weights = index.posting_weights(term)
            for doc in docs:
                if (found := weights.get(doc)) is not None:
                    scores[doc] = get(doc, 0.0) + boost * found
    return scores


def _alias_cover(
    index: Index,
    query_terms: set[str],
    candidates: list[int],
    weight: dict[str, float],
) -> dict[int, float]:
    """How completely (idf-weighted) a title or alias of each candidate appears in the paste.

    A word many failure reports share covers only its background weight of the alias.
    """
    best: dict[int, float] = {}
    for entry in candidates:
        for words, total in index.aliases.get(entry, ()):
            if len(words) < SCORE.min_alias_words or total <= 0:
                continue
            cover = sum(index.idf.get(w, 0.0) * weight.get(w, 1.0) for w in words if w in query_terms) / total
            best[entry] = max(best.get(entry, 0.0), cover * min(1.0, len(words) / SCORE.full_alias_words))
    return best


def _noise(index: Index, query_terms: list[str]) -> bool:
    """True when the paste has many distinct words and few of them occur anywhere in the catalogue."""
    distinct = {term for term in query_terms if len(term) >= SCORE.noise_min_chars}
    if len(distinct) < SCORE.noise_min_terms:
        return False
    return sum(1 for term in distinct if term in index.idf) < SCORE.noise_known_share * len(distinct)


def _prose(index: Index, query: Query, skip: frozenset[str] = frozenset()) -> dict[int, float]:
    """BM25 relative to the best-scoring entry, blended with title/alias coverage, as 0-100.

    Words in ``skip`` (those of a message many root causes print) are left out: they cannot
    tell those causes apart. Words many failure reports share weigh less, except in the failure's
    own exception message, where they are the symptom's wording.
    """
    query_terms = [t for t in terms(query.prose) if t not in skip]
    failures = {m.text for m in query.messages[-SCORE.max_message_segments :] if m.weight >= FAILURE_WEIGHT and m.type}
    symptom = {t for text in failures for t in terms(text)}
    background = index.background  # looked up for the paste's own words only: the table is hundreds long
    weight = {t: background[t] for t in set(query_terms) if t in background and t not in symptom}
    # which entries the words point to (every word counts), and how telling they are without shared words
    raw, without_shared = _bm25(index, query_terms, weight)
    if not raw:
        return {}
    top = max(raw.values())
    candidates = sorted(raw, key=raw.__getitem__, reverse=True)[: SCORE.prose_candidates]  # nlargest, at C speed
    covered = _alias_cover(index, set(query_terms), candidates, weight)
    # saturating absolute strength: a handful of rare shared terms is already telling; how telling
    # is measured without the words many failure reports share
    strength = 1 - math.exp(-max(without_shared.values()) / SCORE.prose_saturation)
    out = {}
    for doc in candidates:
        relative = raw[doc] / top
        out[doc] = 100.0 * (
            SCORE.bm25_share * strength * relative**2 + SCORE.cover_share * covered.get(doc, 0.0) * relative
        )
    return out


_Hits = dict[int, list[Evidence]]


@dataclass(frozen=True)
class _Paste:
    """What the whole paste says, which every entry's rules read."""

    owners: list[Message | None]  # the message each line belongs to
    cut: bool  # the paste stops inside a traceback, before its exception
    no_failure: bool  # the paste ends in no exception
    failure_known: bool  # a signature names the failure's cause
    ambiguously_known: bool  # the failure is known only as a message many causes print
    noise: bool  # a paste of words the catalogue never uses is not prose
    excluded: frozenset[int]  # entries whose excludes the paste holds


def score_entries(index: Index, query: Query) -> list[Scored]:
    """Entries with signature evidence or among the best prose matches, best first.

    A sequence of named rules, which site/static/engine.js mirrors function for function
    (``scoreEntries``, ``hits``, ``readPaste``, ``scoreEntry``, ...).
    """
    exact, fuzzy = _hits(index, query)
    owners = _owners(query)
    prose = _prose(index, query, _ambiguous_words(query, owners, exact, fuzzy))
    paste = _read_paste(index, query, owners, exact, fuzzy)
    scored = [
        _score_entry(entry, exact.get(entry, []) + fuzzy.get(entry, []), prose.get(entry, 0.0), paste)
        for entry in set(exact) | set(fuzzy) | set(prose)
    ]
    return _ranked(index, scored)


def _hits(index: Index, query: Query) -> tuple[_Hits, _Hits]:
    """Exact hits, then fuzzy alignments and verbatim aliases, per entry.

    A line one signature matched exactly is explained: near-misses of others there are other errors.
    """
    exact = _exact(index, query)
    segments = _segments(query)
    explained = {ev.at for evs in exact.values() for ev in evs}
    fuzzy = _fuzzy(index, query, [s for s in segments if s[0] not in explained])
    for entry, found in _phrases(index, query, segments).items():
        fuzzy.setdefault(entry, []).extend(found)
    return exact, fuzzy


def _ambiguous_words(query: Query, owners: list[Message | None], exact: _Hits, fuzzy: _Hits) -> frozenset[str]:
    """The words of a message many root causes print (and of its lines): they cannot tell those causes apart."""
    return frozenset(
        w
        for found in (exact, fuzzy)
        for evs in found.values()
        for ev in evs
        if ev.ambiguous
        for w in (*ev.words, *terms(_message_text(query, owners, ev.at)))
    )


def _ends_in_no_exception(query: Query) -> bool:
    """No exception of the paste's last traceback chain: any line may stand for the failure."""
    return not any(m.weight >= FAILURE_WEIGHT and m.type for m in query.messages)


def _hits_on_failure(owners: list[Message | None], exact: _Hits, fuzzy: _Hits) -> list[Evidence]:
    """Strong hits on the exception the paste ends in."""
    return [
        ev
        for found in (exact, fuzzy)
        for evs in found.values()
        for ev in evs
        if ev.strength >= SCORE.known_failure
        and (owner := owners[ev.at]) is not None
        and owner.weight >= FAILURE_WEIGHT
    ]


def _failure_known(query: Query, no_failure: bool, on_failure: list[Evidence]) -> bool:
    """A signature names the failure's cause (a launcher's summary says a worker failed, not why)."""
    return (no_failure or any(not ev.ambiguous for ev in on_failure)) and not query.launcher_only


def _ambiguously_known(query: Query, on_failure: list[Evidence], failure_known: bool) -> bool:
    """Known only as a message many causes print: known to the entries that claim it, unknown to the others."""
    return bool(on_failure) and not failure_known and not query.launcher_only


def _excluded(index: Index, query: Query) -> frozenset[int]:
    """Entries whose excludes the paste holds: output only a different failure prints."""
    data = b"\n".join(utf8(line.text) for line in query.lines)
    return frozenset(
        entry
        for entry, pattern in index.excludes
        if (matcher := compile_signature(pattern)) is not None and matcher.search(data)
    )


def _read_paste(index: Index, query: Query, owners: list[Message | None], exact: _Hits, fuzzy: _Hits) -> _Paste:
    no_failure = _ends_in_no_exception(query)
    on_failure = _hits_on_failure(owners, exact, fuzzy)
    known = _failure_known(query, no_failure, on_failure)
    return _Paste(
        owners,
        query.cut,
        no_failure,
        known,
        _ambiguously_known(query, on_failure, known),
        _noise(index, terms(query.prose)),
        _excluded(index, query),
    )


def _worth(e: Evidence) -> float:
    """A message many root causes print is worth little alone: the entry's own words must add the rest."""
    return e.strength * SCORE.ambiguous_share if e.ambiguous else e.strength


def _signature_score(evidence: list[Evidence]) -> float:
    """The best hit, plus a little per further distinct signature (an alias adds no second witness)."""
    best = max((_worth(e) for e in evidence), default=0.0)
    distinct = {e.signature for e in evidence if e.via == "signature"}
    return min(100.0, best + SCORE.extra_signature * max(len(distinct) - 1, 0))


def _cause_score(evidence: list[Evidence], on_it: list[Evidence], paste: _Paste) -> float:
    """An answer is only as sure as its evidence: the best match of a message that names this entry's cause.

    A symptom many causes share, or an alias, ranks the entry but cannot vouch for it; nor can a
    cause-naming line of an entry that does not explain the exception the paste ends in.
    """
    if not paste.no_failure and not on_it:
        return 0.0
    return max((_worth(e) for e in evidence if e.names_cause), default=0.0)


def _on_the_failure(evidence: list[Evidence], paste: _Paste) -> list[Evidence]:
    """Evidence on the exception the paste ends in: a deprecation warning above an unrelated traceback is
    not that traceback's cause. When the paste stops before its exception, any line but a warning."""
    owners = paste.owners
    return [
        e
        for e in evidence
        if e.strength >= SCORE.some_evidence
        and (not _warning(owners[e.at]) if paste.cut else _on_failure(owners[e.at]))
    ]


def _witnesses(evidence: list[Evidence], on_it: list[Evidence], paste: _Paste) -> list[Evidence]:
    """The signature hits that say which symptom line the entry explains (an alias names none)."""
    return [e for e in (evidence if paste.no_failure else on_it) if e.via == "signature"]


def _symptom_messages(witnesses: list[Evidence], paste: _Paste) -> tuple[int, ...]:
    """The messages (first line of each) the strong witnesses belong to: entries sharing the first
    entry's are the candidates for one symptom."""
    return tuple(dict.fromkeys(_message_at(paste.owners, e.at) for e in witnesses if e.strength >= SCORE.some_evidence))


def _words_capped(evidence: list[Evidence], paste: _Paste) -> bool:
    """Words alone must not look like a match: of a noisy paste, or of a failure the entry's signatures do not know."""
    known = paste.failure_known or (paste.ambiguously_known and bool(evidence))
    return paste.noise or not known


def _prose_score(prose: float, capped: bool) -> float:
    return min(prose, SCORE.unknown_error_cap) if capped else prose


def _combined(signature: float, prose: float, capped: bool) -> float:
    """The stronger kind of evidence, plus a share of the weaker; topic words and sibling messages only stay capped."""
    best, other = max(signature, prose), min(signature, prose)
    total = min(100.0, best + SCORE.other_kind_share * other)
    if capped and signature < SCORE.some_evidence:
        total = min(total, SCORE.unknown_error_cap)
    return total


def _score_entry(entry: int, evidence: list[Evidence], prose: float, paste: _Paste) -> Scored:
    evidence = sorted(evidence, key=lambda e: -e.strength)
    capped = _words_capped(evidence, paste)
    text_score = _prose_score(prose, capped)
    total = _combined(_signature_score(evidence), text_score, capped)
    if entry in paste.excluded:  # listed, never an answer
        return Scored(entry, round(min(total, SCORE.excluded_cap), 1), text_score, _dedupe(evidence))
    on_it = _on_the_failure(evidence, paste)
    witnesses = _witnesses(evidence, on_it, paste)
    return Scored(
        entry,
        round(total, 1),
        text_score,
        _dedupe(evidence),
        _cause_score(evidence, on_it, paste),
        witnesses[0].text.strip() if witnesses else None,
        _symptom_messages(witnesses, paste),
        bool(witnesses) and witnesses[0].partial,
    )


def _ranked(index: Index, scored: list[Scored]) -> list[Scored]:
    """Best first; a tie goes to more prose, then to the record id."""
    return sorted(scored, key=lambda s: (-s.score, -s.prose, index.entries[s.entry]["id"]))


def _dedupe(evidence: list[Evidence]) -> list[Evidence]:
    """The strongest few, one per (line, signature): a log repeating one error shows it once."""
    seen, out = set(), []
    for item in evidence:
        key = (item.line, item.signature)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out[: SCORE.max_evidence]
