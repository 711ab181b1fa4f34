"""Snippets that fork, close kb's descriptors or poke kb's forkserver get an honest verdict.

A verdict comes only from what the snippet's own process reported; anything that stops kb from
hearing it is an error of the run, never a PASS or a FAIL of the check.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check import RunOptions, environment_block, run_tasks, select_tasks
from trainkb.check._verdict import RankState, decide


def _run(make_catalogue, pool, *checks, timeout=120.0):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*checks))})
    cat = load_catalogue(root)
    assert cat.problems == []
    env = environment_block(pool.env | {"packages": {}}, root)
    return run_tasks(select_tasks(cat), RunOptions(timeout=timeout, jobs=1), pool, env)


def test_a_forked_child_that_exits_cleanly_does_not_pass_a_failing_parent(make_catalogue, pool):
    code = "import os, sys\nif os.fork() == 0:\n    sys.exit(0)\nos.wait()\nassert False, 'the parent fails'\n"
    [result] = _run(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == "failed", result.message
    assert "the parent fails" in result.message


def test_a_forked_child_that_raises_does_not_fail_a_passing_parent(make_catalogue, pool):
    code = "import os\nif os.fork() == 0:\n    raise ValueError('from the child')\nos.wait()\n"
    [ok, raises] = _run(
        make_catalogue,
        pool,
        {"code": code, "expect": "ok"},
        {"code": code, "expect": {"raises": {"type": "ValueError", "match": "from the child"}}},
    )
    assert ok.status == "passed", ok.message
    assert raises.status == "failed", raises.message


def test_closing_inherited_descriptors_keeps_the_outcome(make_catalogue, pool):
    code = "import os\nos.closerange(3, 1024)\nraise ValueError('after closing')\n"
    [result] = _run(
        make_catalogue, pool, {"code": code, "expect": {"raises": {"type": "ValueError", "match": "after closing"}}}
    )
    assert result.status == "passed", result.message


def test_a_snippet_that_exits_without_an_outcome_is_not_said_to_have_completed(make_catalogue, pool):
    code = "import os\nos._exit(1)\n"
    [result] = _run(make_catalogue, pool, {"code": code, "expect": {"raises": {"type": "ValueError", "match": "x"}}})
    assert result.status == "failed", result.message
    assert "exited with status 1" in result.message and "completed" not in result.message


# Writes the pid of its forkserver (the supervisor's parent), then sleeps while the test kills it.
REPORTS_ITS_SERVER = """\
import os, time
from pathlib import Path
stat = Path(f"/proc/{{os.getppid()}}/stat").read_text()
Path({path!r}).write_text(stat.rsplit(")", 1)[1].split()[1])
time.sleep(3)
"""


@pytest.mark.slow
def test_a_killed_forkserver_does_not_blame_the_check_it_was_running(make_catalogue, pool, tmp_path):
    """The forkserver dies (as under the OOM killer) while a check runs: the check is run again, not blamed."""
    marker = tmp_path / "server"
    killed = []

    def kill_the_server() -> None:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        pid = int(marker.read_text())
        marker.unlink()  # the run after the kill writes it again
        os.kill(pid, signal.SIGKILL)
        killed.append(pid)

    killer = threading.Thread(target=kill_the_server, daemon=True)
    killer.start()
    [result] = _run(make_catalogue, pool, {"code": REPORTS_ITS_SERVER.format(path=str(marker)), "expect": "ok"})
    killer.join(5)
    assert killed, "the forkserver was never killed"
    assert result.status == "passed", result.message
    assert marker.read_text() != str(killed[0]), "the check ran again under a new forkserver"


@pytest.mark.parametrize("expect", ["raises", "warns"])
def test_a_catastrophic_pattern_does_not_hang_the_verdict(expect):
    from trainkb.catalogue import Check

    text = "a" * 40 + "!"
    spec = {"type": "ValueError"} if expect == "raises" else {"category": "UserWarning"}
    check = Check.model_validate(
        {
            "name": "c",
            "claim": "c",
            "demonstrates": "failure",
            "code": "pass",
            "expect": {expect: {**spec, "match": "(a+)+$"}},
        }
    )
    if expect == "raises":
        outcome = {
            "raised": {
                "type": "builtins.ValueError",
                "mro": ["builtins.ValueError"],
                "message": text,
                "traceback": text,
            },
            "warnings": [],
            "exit_code": 1,
        }
    else:
        warning = {"category": "builtins.UserWarning", "mro": ["builtins.UserWarning"], "message": text, "text": text}
        outcome = {"raised": None, "warnings": [warning], "exit_code": 0}
    state = RankState(0, outcome=outcome, exitcode=outcome["exit_code"], reported=True)
    verdicts = []
    thread = threading.Thread(target=lambda: verdicts.append(decide(check, [state], 0.1, False, 60)), daemon=True)
    thread.start()
    thread.join(10)
    assert verdicts, "matching the expected pattern hung"
    assert verdicts[0].status == "failed"
