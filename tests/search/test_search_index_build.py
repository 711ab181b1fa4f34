"""The index build's shortcuts give what the plain computation gives, on the real catalogue.

Weighted term counts summed field by field, one occurrence at a time, and shared-signature
counts matched signature by signature, example by example: the build's faster ways must
yield the same floats, in the same order, and the same counts.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.search._index import (
    FIELD_WEIGHTS,
    _count_shared,
    _field_texts,
    _required_terms,
    _signature_data,
    _weighted_terms,
)
from trainkb.search._normalize import terms
from trainkb.search._sigregex import compile_signature, utf8


@pytest.fixture(scope="module")
def entries() -> list[Any]:
    return load_catalogue(find_catalogue(None)).ordered()


def test_weighted_terms_are_the_occurrence_by_occurrence_sums(entries: list[Any]) -> None:
    for entry in entries:
        plain: dict[str, float] = defaultdict(float)
        for name, text in _field_texts(entry).items():
            for term in terms(text):
                plain[term] += FIELD_WEIGHTS[name]
        assert list(_weighted_terms(entry).items()) == list(plain.items()), entry.id


def test_shared_counts_are_those_of_matching_every_candidate(entries: list[Any]) -> None:
    sigs = [_signature_data(i, sig) for i, entry in enumerate(entries) for sig in entry.signatures]
    examples = [(i, sig.example) for i, entry in enumerate(entries) for sig in entry.signatures]
    _count_shared(sigs, examples)
    expected = []
    for sig in sigs:
        required = _required_terms(sig)
        pattern = compile_signature(sig["pattern"])
        others = {
            entry
            for entry, text in examples
            if entry != sig["entry"]
            and required <= set(terms(text))
            and pattern is not None
            and pattern.search(utf8(text))
        }
        expected.append(len(others))
    assert [sig["shared"] for sig in sigs] == expected
    assert any(expected)  # the catalogue has generic signatures: the comparison is not all zeros
