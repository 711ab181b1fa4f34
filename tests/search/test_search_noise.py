"""The noise rule's edge: a paste of exactly ``noise_min_terms`` distinct unknown words is noise, one fewer is not."""

from __future__ import annotations

from helpers import bare_record

from trainkb.search import _score
from trainkb.search._index import Index, build_data
from trainkb.search._normalize import terms
from trainkb.search._policy import SCORE


def _index() -> Index:
    record = bare_record(
        "R0",
        title="unused parameters in ddp",
        symptom="reduction did not finish before the next iteration",
        root_cause="a parameter never reaches the loss",
    )
    return Index(build_data([record], "synthetic"))


def _unknown_words(count: int) -> str:
    """``count`` distinct words of ``noise_min_chars`` letters or more that no record uses."""
    return " ".join(f"zq{chr(ord('a') + n)}" for n in range(count))


def test_noise_starts_at_exactly_noise_min_terms_distinct_words() -> None:
    index = _index()
    edge = terms(_unknown_words(SCORE.noise_min_terms))
    below = terms(_unknown_words(SCORE.noise_min_terms - 1))
    assert len(set(edge)) == SCORE.noise_min_terms and not any(term in index.idf for term in edge)
    assert _score._noise(index, edge)
    assert not _score._noise(index, below)
    # a repeated word is one distinct term: it cannot carry the paste over the edge
    assert not _score._noise(index, below + below[:1])
