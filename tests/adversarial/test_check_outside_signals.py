"""A signal someone sent is no evidence about a check's code: a mutant that dies of SIGKILL (as the OOM
killer or a memory limit would kill it) is an error, not killed; a snippet that interrupts its own
supervisor is told so, not blamed on kb's forkserver."""

from __future__ import annotations

import pytest
from helpers import checks_yaml, record, run_sample_checks

from trainkb.catalogue import CheckStatus, load_catalogue
from trainkb.check import RunOptions, environment_block, select_tasks
from trainkb.check._mutants import MutantStatus, run_mutants

CODE = "x = 1\nassert x == 1\n"


def _mutant(replace: str) -> dict:
    return {"code": CODE, "expect": "ok", "mutation": {"find": "x = 1", "replace": replace, "why": "probe"}}


# The adversarial pass's mutant: it kills itself with SIGKILL, which reads the same as the OOM killer.
SIGKILLED = _mutant("import os; os.kill(os.getpid(), 9); x = 1")
# A crash of the mutated code itself, and a failed assertion: both are the mutant's doing.
ABORTED = _mutant("import os; os.abort()")
ASSERTS = _mutant("x = 2")


@pytest.mark.slow
def test_a_mutant_killed_by_a_signal_from_outside_is_not_counted_killed(make_catalogue, pool):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(SIGKILLED, ABORTED, ASSERTS))})
    cat = load_catalogue(root)
    assert cat.problems == []
    env = environment_block(pool.env | {"packages": {}}, root)
    run = run_mutants(select_tasks(cat), RunOptions(timeout=120, jobs=2), pool, env)
    sigkilled, aborted, asserts = run.results
    assert sigkilled.status == CheckStatus.ERROR, sigkilled.message
    assert "SIGKILL" in sigkilled.message and "not counted as killed" in sigkilled.message
    assert aborted.status == MutantStatus.KILLED, aborted.message
    assert "SIGABRT" in aborted.message
    assert asserts.status == MutantStatus.KILLED, asserts.message
    assert not run.ok


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGINT", "SIGHUP"])
def test_a_snippet_that_interrupts_its_supervisor_is_told_so(make_catalogue, pool, name):
    code = f"import os, signal, time\nos.kill(os.getppid(), signal.{name})\ntime.sleep(2)\n"
    [result] = run_sample_checks(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == CheckStatus.ERROR, result.message
    assert f"interrupted by {name}" in result.message and "kb never sends" in result.message
    assert "forkserver" not in result.message
