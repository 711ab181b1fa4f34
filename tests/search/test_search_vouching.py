"""What may vouch for an answer: a cause-naming line counts only where it explains the failure itself.

Every paste here is real output (torch 2.13 and Python 3.11, captured for these tests; the cut one is
the same output stopped inside its traceback, as pastes often are). Each names the rule it guards.
"""

from __future__ import annotations

from trainkb.search import search

# O23's cause-naming warning (get_lr() called outside step()), then a traceback that ends in a KeyError
WARNING_THEN_KEYERROR = """\
/work/main/.venv/lib/python3.11/site-packages/torch/optim/lr_scheduler.py:654: UserWarning: To get the last\
 learning rate computed by the scheduler, please use `get_last_lr()`.
  _warn_get_lr_called_within_step(self)
Traceback (most recent call last):
  File "/tmp/an/cap3.py", line 7, in <module>
    labels = batch["labels"]
             ~~~~~^^^^^^^^^^
KeyError: 'labels'
"""
# a sibling of E4's message: the same words, another keyword (Python's own TypeError)
SIBLING_KEYWORD = """\
Traceback (most recent call last):
  File "/tmp/an/cap4.py", line 6, in <module>
    trainer = Trainer(max_epochs=3, use_distributed_sampler=False)
              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
TypeError: Trainer.__init__() got an unexpected keyword argument 'use_distributed_sampler'
"""


def test_a_cause_naming_warning_above_an_unrelated_exception_does_not_answer() -> None:
    response = search(WARNING_THEN_KEYERROR)
    assert response.results and response.results[0].id == "O23"  # still the closest entry, for the warning
    assert response.abstained and all(r.confidence == "low" for r in response.results)
    # the advice is about the exception no entry knows, not "several root causes print" the warning
    assert response.symptom is None
    assert response.advice is not None and "KeyError: 'labels'" in response.advice


def test_the_same_warning_alone_still_answers() -> None:
    warning_only = "\n".join(WARNING_THEN_KEYERROR.splitlines()[:2])
    response = search(warning_only)
    assert not response.abstained and response.results[0].id == "O23"
    assert response.results[0].confidence in {"medium", "high"}


def test_a_paste_cut_inside_its_traceback_is_not_explained_by_a_warning_above_it() -> None:
    lines = WARNING_THEN_KEYERROR.splitlines()
    cut = "\n".join(lines[: next(i for i, line in enumerate(lines) if line.startswith("KeyError"))])
    response = search(cut)
    assert response.results[0].id == "O23" and response.abstained
    assert response.advice is not None and response.advice.startswith("The traceback stops before its last line")


def test_an_alignment_with_a_sibling_message_ranks_but_does_not_vouch() -> None:
    response = search(SIBLING_KEYWORD)
    top = response.results[0]
    # masking aligns 'use_distributed_sampler' with E4's 'tokenizer' (and with E8's removed Lightning flags):
    # the entries are close, not confirmed
    assert top.id in {"E4", "E8"} and top.confidence == "low" and response.abstained
    assert search(SIBLING_KEYWORD.replace("use_distributed_sampler", "tokenizer")).results[0].confidence != "low"
