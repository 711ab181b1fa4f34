"""The search rules keep the relations the confidence bands, the parser and the normaliser rely on.

Each value of trainkb.search._policy is tuned on its own; these are the orderings between them that
the answers' meaning depends on (an unknown error is never "medium", a shared symptom line alone
never answers, an alias never outranks an exact signature, the stemmer reaches every suffix), so a
retune that breaks one fails here, not in a user's paste.
"""

from __future__ import annotations

import dataclasses

import pytest

from trainkb.search._policy import ANSWER, PASTE, SCORE, SIGNATURES, WORDS


def test_the_confidence_bands_are_ordered() -> None:
    assert 0 < ANSWER.min_score < ANSWER.medium < ANSWER.high <= 100
    assert ANSWER.signature_lead > 0


def test_an_entry_without_real_evidence_stays_below_medium() -> None:
    assert SCORE.unknown_error_cap < ANSWER.medium
    assert SCORE.excluded_cap < SCORE.unknown_error_cap
    assert SCORE.some_evidence < ANSWER.medium


def test_signature_strengths_are_ordered() -> None:
    # an exact hit of a cause's line outranks a fuzzy alignment, which outranks a verbatim alias
    assert SCORE.alias_strength < SCORE.fuzzy_strength < SCORE.exact_strength
    assert SCORE.exact_strength + SCORE.type_bonus <= 100
    # a known failure is a signature hit, and an exact one always makes it known
    assert SCORE.some_evidence < SCORE.known_failure < SCORE.alias_strength
    # "high" needs a cause strength that "medium" alone does not
    assert ANSWER.medium < ANSWER.high and SCORE.some_evidence < SCORE.known_failure


def test_a_shared_symptom_line_alone_never_answers() -> None:
    best_hit = SCORE.exact_strength + SCORE.type_bonus + SCORE.extra_signature
    assert SCORE.ambiguous_share * best_hit < ANSWER.medium
    # ... nor names a cause as strongly as "high" needs
    assert SCORE.ambiguous_share * (SCORE.exact_strength + SCORE.type_bonus) < SCORE.known_failure
    # the per-sibling discount shrinks a shared signature without ever erasing it
    assert 0 < SIGNATURES.shared_discount * SIGNATURES.max_shared < 1


def test_weights_and_shares_are_fractions() -> None:
    assert all(0 < w <= 1 for w in SCORE.role_weight.values())
    assert SCORE.role_weight["message"] == max(SCORE.role_weight.values())
    assert set(SCORE.role_weight) == {"message", "text", "header", "frame"}  # "text" is every other role's weight
    assert 0 < SIGNATURES.brevity_base < 1 and SIGNATURES.brevity_chars > 0
    assert 0 < SCORE.other_kind_share < 1
    assert 0 < SCORE.substitution_penalty < 1
    assert 0 < SCORE.shared_terms_share <= 1
    assert 0 < SCORE.noise_known_share < 1
    assert 0 < SCORE.ambiguous_share < 1
    assert 0 < SCORE.fuzzy_floor < SCORE.fuzzy_strength and SCORE.fuzzy_floor < 100


def test_prose_is_on_the_same_scale() -> None:
    # a perfect prose match (relative 1, saturated, fully covered) scores exactly 100
    assert SCORE.bm25_share + SCORE.cover_share == pytest.approx(1.0)
    assert SCORE.bm25_share > 0 and SCORE.cover_share > 0 and SCORE.prose_saturation > 0
    # a full alias is longer than the shortest one that counts
    assert 1 <= SCORE.min_alias_words <= SCORE.full_alias_words


def test_failure_weights_and_role_weights_agree() -> None:
    # an exception of the failure outweighs any other exception, which outweighs a wrapper relaying one
    assert 0 < PASTE.wrapper_weight < PASTE.other_weight < PASTE.failure_weight <= 1


def test_paste_limits_are_ordered() -> None:
    # a raw line is cut before its escapes and prefixes go, so it must keep more than a clean line's bound
    assert PASTE.max_line_chars <= PASTE.raw_line_chars
    assert PASTE.max_line_chars <= PASTE.max_chars <= PASTE.max_output_chars
    assert PASTE.max_lines >= 1 and PASTE.max_prefixes >= 1 and PASTE.max_continuation >= 0
    assert PASTE.min_options >= 2  # one option is a remark about a setting, not a command line
    assert PASTE.wrapper_types and PASTE.quotes and PASTE.warning_suffix


def test_the_first_masks_are_the_locations() -> None:
    """terms() blanks urls and paths by the first two masks (and engine.js by the first two it is sent)."""
    assert [holder for holder, _ in WORDS.masks[:2]] == ["<url>", "<path>"]
    # wider constructs first: the bare number comes last, so a path's or a shape's digits are not masked piecemeal
    assert WORDS.masks[-1][0] == "<num>"


def test_limits_are_positive_and_ordered() -> None:
    assert SCORE.max_hits_per_sig >= 1 and SCORE.max_evidence >= 1
    assert SCORE.min_shared_terms >= 1 and SCORE.min_fuzzy_chars >= 1 and SCORE.min_line_chars >= 1
    assert SCORE.max_term_repeats >= 1 and SCORE.prose_candidates >= 1 and SCORE.max_query_terms >= 1
    assert SCORE.max_text_segments >= 1 and SCORE.max_message_segments >= 1
    assert SCORE.noise_min_terms >= 1 and SCORE.noise_min_chars >= 1
    assert ANSWER.why_chars > 0 and "{matched}" in ANSWER.why_vouched


def test_a_differential_lists_two_to_five_causes() -> None:
    assert ANSWER.min_candidates == 2
    assert ANSWER.min_candidates <= ANSWER.max_candidates <= 5


def test_every_stem_suffix_can_be_reached() -> None:
    """A suffix listed after a shorter one it ends with would never be stripped ('ings' after 's')."""
    suffixes = WORDS.stem_suffixes
    for i, later in enumerate(suffixes):
        assert all(not later.endswith(earlier) for earlier in suffixes[:i]), later
    assert len(set(suffixes)) == len(suffixes) and all(suffixes)
    # a word kept whole is never long enough to lose a suffix and keep a stem anyway
    assert WORDS.stem_min_chars <= WORDS.stem_keep_chars
    assert WORDS.part_min_chars >= 2  # a one-letter part of an identifier is no word


def test_stop_words_are_lower_case_words() -> None:
    assert all(w.isalpha() and w == w.lower() for w in WORDS.stop)


@pytest.mark.parametrize("rules", [PASTE, WORDS, SIGNATURES, SCORE, ANSWER], ids=lambda r: type(r).__name__)
def test_rules_are_frozen(rules: object) -> None:
    field = dataclasses.fields(rules)[0]  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(rules, field.name, None)
