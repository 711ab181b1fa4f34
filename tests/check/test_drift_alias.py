"""Signature drift on a line several causes print, when an alias of the same words is the entry's first evidence.

P27's check prints T4's `expected m1 and m2 to have the same dtype` (a line several causes print); search ranks T4
first and says "unknown", as it should. Drift read only the first evidence, an alias, and failed the check.
"""

from __future__ import annotations

from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.check._drift import apply_drift_check
from trainkb.check._runner import CheckResult

# the traceback's last frame and message as torch 2.13 prints them for the check (kb check P27 --json)
EVIDENCE = """Traceback (most recent call last):
  File "<check>", line 8, in <module>
  File "/usr/lib/python3/site-packages/torch/nn/modules/linear.py", line 134, in forward
    return F.linear(input, self.weight, self.bias)
           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: expected m1 and m2 to have the same dtype, but got: c10::Half != float
"""


def _result(entry: str, check: str) -> CheckResult:
    return CheckResult(entry, check, "passed", 0.1, "", "failure", "", "raises", "x.yaml", 1, evidence=[EVIDENCE])


def test_a_generic_line_ranked_first_is_no_drift_even_behind_an_alias():
    root = find_catalogue()
    cat = load_catalogue(root)
    [checked] = apply_drift_check([_result("P27", "fp32-adapter-on-half-base-raises")], cat, root)
    assert checked.status == "passed", checked.message


def test_a_generic_line_ranked_first_for_another_entry_is_still_drift():
    root = find_catalogue()
    cat = load_catalogue(root)
    # A1 (backward through a freed graph) prints no dtype line; P4 and P27 both carry this one now
    [checked] = apply_drift_check([_result("A1", "two-backward-calls-raise")], cat, root)
    assert checked.status == "failed" and "signature drift" in checked.message
