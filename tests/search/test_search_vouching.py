"""A cause-naming line vouches for an entry only when that entry also explains the failure the paste ends in.

The paste is real output of torch 2.13 (captured for this test): reentrant checkpointing's warning,
which A5 names as its cause, printed above a traceback that ends in an unrelated KeyError. Users paste
logs like this all the time; the warning is context there, not the failure.
"""

from __future__ import annotations

from trainkb.search import search

WARNING_THEN_KEYERROR = """\
/work/main/.venv/lib/python3.11/site-packages/torch/utils/checkpoint.py:238: \
UserWarning: None of the inputs have requires_grad=True. Gradients will be None
  check_backward_validity(args)
Traceback (most recent call last):
  File "/tmp/an/cap2.py", line 6, in <module>
    labels = batch["labels"]
             ~~~~~^^^^^^^^^^
KeyError: 'labels'
"""


def test_a_cause_naming_warning_above_an_unrelated_exception_does_not_answer() -> None:
    response = search(WARNING_THEN_KEYERROR)
    assert response.results and response.results[0].id == "A5"  # still the closest entry, for the warning
    assert response.abstained and all(r.confidence == "low" for r in response.results)
    # the advice is about the exception no entry knows, not "several root causes print" the warning
    assert response.symptom is None
    assert response.advice is not None and "KeyError: 'labels'" in response.advice


def test_the_same_warning_alone_still_answers() -> None:
    warning_only = "\n".join(WARNING_THEN_KEYERROR.splitlines()[:2])
    response = search(warning_only)
    assert not response.abstained and response.results[0].id == "A5"
    assert response.results[0].confidence in {"medium", "high"}
