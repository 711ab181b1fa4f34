"""Real CUDA out-of-memory failures, one per cause, are each answered with their own entry.

tests/fixtures/oom/ holds the full output of small training scripts (tests/fixtures/oom/scripts/) run on an
H100 with torch 2.11 (README there). Every OOM prints the same message; what decides between M1-M7 is the
rest of the output, read by the entries' tells. The tells come from check captures and public threads, never
from these files, so these outputs test them on failures they were not written from.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trainkb.search import get_index, search

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "oom"
CAUSES = {
    "m1_activations.txt": "M1",  # 32 blocks' activations of a 64 x 2048 batch on the first forward
    "m2_growing.txt": "M2",  # every batch's logits kept with their graph, memory logged every 5 steps
    "m3_eval.txt": "M3",  # validation with a 4x batch in eval mode but without torch.no_grad()
    "m4_fragmented.txt": "M4",  # kept slices pin every cached segment; a long batch finds no hole
    "m5_other_process.txt": "M5",  # a second process holds 85% of the card
    "m6_absurd.txt": "M6",  # a similarity matrix over every token of the batch: 256 GiB
    "m7_adam.txt": "M7",  # weights and gradients fit, AdamW's state at the first step does not
}


@pytest.mark.parametrize(("name", "entry"), sorted(CAUSES.items()))
def test_pasted_output_is_answered_with_its_cause(name: str, entry: str) -> None:
    response = search((FIXTURES / name).read_text(encoding="utf-8"), catalogue=get_index())
    top = response.results[0]
    assert (response.status, top.id) == ("answered", entry), [(r.id, r.confidence) for r in response.results[:5]]
    assert top.confidence in ("medium", "high")
    assert response.why


@pytest.mark.parametrize(("name", "entry"), sorted(CAUSES.items()))
def test_whole_captured_output_answers_from_its_tail(name: str, entry: str) -> None:
    """`kb run` and the hook search the tail and hand the tells the whole output."""
    output = (FIXTURES / name).read_text(encoding="utf-8")
    tail = "\n".join(output.splitlines()[-8:])
    response = search(tail, catalogue=get_index(), output=output)
    assert (response.status, response.results[0].id) == ("answered", entry)
    assert response.results[0].confidence in ("medium", "high")


def test_the_message_alone_does_not_name_a_cause() -> None:
    """Without the rest of the output the same OOM line is a differential among the M entries, not a guess."""
    line = next(
        line
        for line in (FIXTURES / "m1_activations.txt").read_text(encoding="utf-8").splitlines()
        if "Tried to" in line
    )
    response = search(line, catalogue=get_index())
    assert response.status == "differential"
    assert {r.id for r in response.results[: response.candidates]} <= {f"M{i}" for i in range(1, 10)}
