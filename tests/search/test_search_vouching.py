"""A cause-naming line vouches for an entry only when that entry also explains the failure the paste ends in.

The paste is real output of torch 2.13 (captured for this test): a deprecation warning that P4 names
as its cause, printed above a traceback that ends in an unrelated KeyError. Users paste logs like this
all the time; the warning is context, not the failure.
"""

from __future__ import annotations

from trainkb.search import search

WARNING_THEN_KEYERROR = """\
/tmp/an/cap1.py:4: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use \
`torch.amp.autocast('cuda', args...)` instead.
  with torch.cuda.amp.autocast():
/work/main/.venv/lib/python3.11/site-packages/torch/cuda/amp/autocast_mode.py:54: UserWarning: CUDA is not \
available or torch_xla is imported. Disabling autocast.
  super().__init__(
Traceback (most recent call last):
  File "/tmp/an/cap1.py", line 5, in <module>
    images = batch["pixel"]
             ~~~~~^^^^^^^^^
KeyError: 'pixel'
"""


def test_a_cause_naming_warning_above_an_unrelated_exception_does_not_answer() -> None:
    response = search(WARNING_THEN_KEYERROR)
    assert response.results and response.results[0].id == "P4"  # still the closest entry, for the warning
    assert response.abstained and all(r.confidence == "low" for r in response.results)
    # the advice is about the exception no entry knows, not "several root causes print" the warning
    assert response.symptom is None
    assert response.advice is not None and "KeyError: 'pixel'" in response.advice


def test_the_same_warning_alone_still_answers() -> None:
    warning_only = "\n".join(WARNING_THEN_KEYERROR.splitlines()[:2])
    response = search(warning_only)
    assert not response.abstained and response.results[0].id == "P4"
    assert response.results[0].confidence in {"medium", "high"}
