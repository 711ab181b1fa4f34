"""The pruned BM25 pass gives the prose candidates a full pass gives: the same entries, scores and order."""

from __future__ import annotations

import heapq
import random
from types import SimpleNamespace

from helpers import bare_record

from trainkb.search import _score
from trainkb.search._index import Index, build_data
from trainkb.search._policy import SCORE

WORDS = [f"w{n}x" for n in range(120)]


def _records(count: int) -> list[SimpleNamespace]:
    """Records of words drawn unevenly (some common, some rare), every fifth a copy of another: ties."""
    rng = random.Random(3)
    weights = [1 / (n + 1) for n in range(len(WORDS))]
    records: list[SimpleNamespace] = []
    for number in range(count):
        words = lambda n: " ".join(rng.choices(WORDS, weights, k=n))  # noqa: E731
        text = records[rng.randrange(number)].symptom if number % 5 == 4 else words(rng.randint(5, 60))
        records.append(bare_record(f"R{number}", title=words(3), symptom=text, root_cause=words(10)))
    return records


def _full(index: Index, query_terms: list[str], background: dict[str, float]) -> tuple[dict[int, float], float]:
    """Every entry's BM25 score as one pass over all postings sums it, and the best background-weighted one."""
    counts: dict[str, int] = {}
    for term in query_terms:
        if term in index.idf:
            counts[term] = counts.get(term, 0) + 1
    plain: dict[int, float] = {}
    weighted: dict[int, float] = {}
    for term in heapq.nlargest(SCORE.max_query_terms, counts, key=index.idf.__getitem__):
        idf, repeats = index.idf[term], min(counts[term], SCORE.max_term_repeats) ** 0.5
        for doc, weight in index.posting(term):
            plain[doc] = plain.get(doc, 0.0) + idf * repeats * weight
            weighted[doc] = weighted.get(doc, 0.0) + idf * background.get(term, 1.0) * repeats * weight
    return plain, max(weighted.values(), default=0.0)


def test_pruned_bm25_keeps_the_candidates_their_scores_and_their_order() -> None:
    index = Index(build_data(_records(600), "synthetic"))
    rng = random.Random(11)
    pruned = 0
    for _ in range(60):
        query = rng.choices(WORDS, k=rng.randint(2, 90))
        background = {word: 0.25 for word in rng.sample(WORDS, 15)}
        plain, weighted = _score._bm25(index, query, background)
        full, best_weighted = _full(index, query, background)
        top = SCORE.prose_candidates
        assert [(d, plain[d]) for d in sorted(plain, key=plain.__getitem__, reverse=True)[:top]] == [
            (d, full[d]) for d in sorted(full, key=full.__getitem__, reverse=True)[:top]
        ]
        assert max(weighted.values(), default=0.0) == best_weighted
        pruned += len(plain) < len(full)
    assert pruned >= 30  # the bound cut most passes short, so the comparison above tested it
