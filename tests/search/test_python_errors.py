"""Python's own errors that share words with a torch message are not that message's family.

`IndexError: list index out of range` shares "index out of range" with the embedding lookup's
`IndexError: index out of range in self` (T7, T8, L3); Python prints it for any list, tuple or
string, so it must never become a differential of token-id causes
(https://github.com/google-research/google-research/issues/743: a custom dataset's empty list).
"""

from __future__ import annotations

import pytest

from trainkb.search import get_index, search


@pytest.mark.parametrize("kind", ["list", "tuple", "string"])
def test_sequence_index_error_is_not_the_embedding_family(kind: str) -> None:
    paste = (
        'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\n'
        f"    train_ds = train_datasets[0]\nIndexError: {kind} index out of range"
    )
    response = search(paste, catalogue=get_index())
    assert (response.status, response.candidates) == ("unknown", 0)
    assert all(r.score <= 25 for r in response.results if r.id in {"T7", "T8", "L3"})  # listed, never answered


def test_the_embedding_message_still_is() -> None:
    response = search("IndexError: index out of range in self", catalogue=get_index())
    assert response.status == "differential"
    assert {"T7", "T8"} <= {r.id for r in response.results[: response.candidates]}
