"""Real anomaly-mode failures, one per cause, are each answered with their own entry.

`Function 'XBackward0' returned nan values` names the op, not the cause: a root at zero is a
hand-written distance (P20), a fractional power of a zero (P8) or an angular-margin sine (P22).
What decides is the forward line anomaly mode prints above it, read by the entries' tells.
tests/fixtures/anomaly/ holds the whole output of scripts written apart from the entries'
checks (README there); the line alone stays a differential.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trainkb.search import get_index, search

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "anomaly"
CAUSES = {
    "p20_triplet.txt": "P20",  # sqrt(((a - b) ** 2).sum()) with a positive equal to its anchor
    "p8_rms.txt": "P8",  # mean(h ** 2) ** 0.5 over masked all-zero rows
    "p21_logcounts.txt": "P21",  # torch.where(x > 0, log(x), 0) over counts with zeros
}


@pytest.mark.parametrize(("name", "entry"), sorted(CAUSES.items()))
def test_anomaly_output_is_answered_with_its_cause(name: str, entry: str) -> None:
    response = search((FIXTURES / name).read_text(encoding="utf-8"), catalogue=get_index())
    top = response.results[0]
    assert (response.status, top.id) == ("answered", entry), [(r.id, r.confidence) for r in response.results[:5]]
    assert top.confidence in ("medium", "high")
    assert top.tell is not None and top.tell.fired


@pytest.mark.parametrize(("name", "entry"), sorted(CAUSES.items()))
def test_the_bare_line_is_a_differential_or_unconfirmed(name: str, entry: str) -> None:
    """Without the forward trace nothing decides: never a confident answer from the op's name alone."""
    last = (FIXTURES / name).read_text(encoding="utf-8").strip().splitlines()[-1]
    response = search(last, catalogue=get_index())
    assert response.abstained
    ids = [r.id for r in response.results[: max(response.candidates, 1)]]
    assert entry in ids if response.status == "differential" else ids == [entry], (response.status, ids)


def test_an_op_no_entry_explains_is_not_a_differential() -> None:
    """'SolveBackward' is not a retyped 'SqrtBackward0': a long name with other letters is another op."""
    response = search(
        "RuntimeError: Function 'SolveBackward' returned nan values in its 0th output.", catalogue=get_index()
    )
    assert response.status == "unknown"
