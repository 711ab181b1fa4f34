"""The scoring constants keep the relations the confidence bands rely on.

Each constant is tuned on its own; these are the orderings between them that the answers' meaning
depends on (an unknown error is never "medium", a shared symptom line alone never answers, an alias
never outranks an exact signature), so a retune that breaks one fails here, not in a user's paste.
"""

from __future__ import annotations

from trainkb.search import _score as score
from trainkb.search import _search as search


def test_the_confidence_bands_are_ordered() -> None:
    assert 0 < search.MIN_SCORE < search.MEDIUM < search.HIGH <= 100
    assert search.SIGNATURE_LEAD > 0


def test_an_entry_without_real_evidence_stays_below_medium() -> None:
    assert score.UNKNOWN_ERROR_CAP < search.MEDIUM
    assert score.EXCLUDED_CAP < score.UNKNOWN_ERROR_CAP
    assert score.SOME_EVIDENCE < search.MEDIUM


def test_signature_strengths_are_ordered() -> None:
    # an exact hit of a cause's line outranks a fuzzy alignment, which outranks a verbatim alias
    assert score.ALIAS_STRENGTH < score.FUZZY_STRENGTH < score.EXACT_STRENGTH
    assert score.EXACT_STRENGTH + score.TYPE_BONUS <= 100
    # a known failure is a signature hit, and an exact one always makes it known
    assert score.SOME_EVIDENCE < score.KNOWN_FAILURE < score.ALIAS_STRENGTH


def test_a_shared_symptom_line_alone_never_answers() -> None:
    best_hit = score.EXACT_STRENGTH + score.TYPE_BONUS + score.EXTRA_SIGNATURE
    assert score.AMBIGUOUS_SHARE * best_hit < search.MEDIUM
    # the per-sibling discount shrinks a shared signature without ever erasing it
    assert 0 < score.SHARED_DISCOUNT * score.MAX_SHARED < 1


def test_weights_and_shares_are_fractions() -> None:
    assert all(0 < w <= 1 for w in score.ROLE_WEIGHT.values())
    assert score.ROLE_WEIGHT["message"] == max(score.ROLE_WEIGHT.values())
    assert 0 < score.BREVITY_BASE < 1
    assert 0 < score.OTHER_KIND_SHARE < 1
    assert 0 < score.SUBSTITUTION_PENALTY < 1
    assert 0 < score.SHARED_TERMS_SHARE <= 1
    assert 0 < score.NOISE_KNOWN_SHARE < 1
    assert 0 < score.FUZZY_FLOOR < score.FUZZY_STRENGTH


def test_a_differential_lists_two_to_five_causes() -> None:
    assert search.MIN_CANDIDATES == 2
    assert search.MIN_CANDIDATES <= search.MAX_CANDIDATES <= 5
