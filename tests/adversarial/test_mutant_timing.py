"""A mutant is judged under its check's own timeout: one that only runs slower is no kill.

The mutant's deadline used to be four times the check's own time (at least 3 s), so a mutant that
slept 4 s instead of 0.1 s was reported KILLED "timed out after 3 s" although the mutated code
completes well inside the check's timeout and meets the expectation (it survives).
"""

from __future__ import annotations

import json

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main

SLOWER = {
    "code": "import time\ntime.sleep(0.1)\n",
    "expect": "ok",
    "mutation": {"find": "time.sleep(0.1)", "replace": "time.sleep(4)", "why": "only slower"},
}
# The fix (setting the event) removed, the wait never ends: still killed, at the check's own timeout.
DEADLOCK = {
    "code": "import threading\ndone = threading.Event()\ndone.set()\ndone.wait()\n",
    "expect": "ok",
    "timeout": 8,
    "mutation": {"find": "done.set()\n", "replace": "", "why": "nobody sets the event"},
}


# the mutant's deadline is its check's timeout: tests/check/test_mutants.py's test_a_mutant_keeps_its_checks_timeout
# (quick); this one waits out a deadlocked mutant's timeout in a real kb check run
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_slower_mutant_survives_and_a_deadlocked_one_is_killed_at_the_checks_timeout(make_catalogue, tmp_path):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(SLOWER, DEADLOCK))})
    out = tmp_path / "r.json"
    code = main(["--catalogue", str(root), "check", "-q", "--no-drift", "-j2", "--mutants", "-o", str(out)])
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [r["status"] for r in report["results"]] == ["passed", "passed"]
    mutants = {r["check"]: r for r in report["mutants"]["results"]}
    slower, deadlock = mutants["c0"], mutants["c1"]
    assert slower["status"] == "survived" and slower["seconds"] >= 4, slower
    assert deadlock["status"] == "killed" and deadlock["message"].startswith("timed out after 8 s"), deadlock
    assert code == 1  # a surviving mutant fails the run
