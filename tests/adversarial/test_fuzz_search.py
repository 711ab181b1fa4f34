"""Property: search never answers medium or high for random bytes or random words.

Bounded: a fixed number of examples, each input a few KB; the large ones run in `make test` only.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainkb.search import get_index, search

WORD = st.text(alphabet=string.ascii_lowercase, min_size=2, max_size=4)
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _answers_nothing(text: str | bytes) -> None:
    response = search(text, catalogue=get_index())
    assert all(r.confidence == "low" for r in response.results), [(r.id, r.confidence) for r in response.results]
    assert response.abstained


@pytest.mark.slow
@FUZZ
@given(st.binary(min_size=2_000, max_size=20_000))
def test_random_bytes_never_answer(data: bytes) -> None:
    _answers_nothing(data)


@pytest.mark.slow
@FUZZ
@given(st.lists(WORD, min_size=200, max_size=3_000))
def test_random_words_never_answer(words: list[str]) -> None:
    _answers_nothing(" ".join(words))


@pytest.mark.slow
@FUZZ
@given(st.lists(WORD, min_size=200, max_size=3_000), st.sampled_from([" ", "\n", ". "]))
def test_random_words_in_lines_never_answer(words: list[str], sep: str) -> None:
    _answers_nothing(sep.join(words))


@FUZZ
@given(st.text(alphabet=st.characters(exclude_categories=()), min_size=500, max_size=5_000))
def test_any_unicode_text_never_raises_or_answers(text: str) -> None:
    """Lone surrogates included: RE2 searches UTF-8 bytes, and such a str must not raise."""
    _answers_nothing(text)
