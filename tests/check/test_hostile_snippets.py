"""Snippets that fork, close kb's descriptors or poke kb's forkserver get an honest verdict.

A verdict comes only from what the snippet's own process reported; anything that stops kb from
hearing it is an error of the run, never a PASS or a FAIL of the check.
"""

from __future__ import annotations

import errno
import os
import signal
import tempfile
import threading
import time

import pytest
from helpers import run_sample_checks

from trainkb.check._verdict import RankRun, verdict_of


def _run(make_catalogue, pool, *checks, timeout=120.0):
    return run_sample_checks(make_catalogue, pool, *checks, timeout=timeout)


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


SPOOFED = {
    "own class of the same name": "class TypeError(Exception):\n    pass\nraise TypeError('spoofed')\n",
    "renamed to a builtin": (
        "class Fake(BaseException):\n    pass\n"
        "Fake.__module__, Fake.__qualname__ = 'builtins', 'TypeError'\nraise Fake('spoofed')\n"
    ),
    "own warning of the same name": (
        "import warnings\nclass UserWarning(Warning):\n    pass\nwarnings.warn('spoofed', UserWarning)\n"
    ),
    "class of a module the snippet builds": (
        "import sys, types\nfake = types.ModuleType('fakelib')\nsys.modules['fakelib'] = fake\n"
        "exec('class TypeError(Exception):\\n    pass', fake.__dict__)\nfake.TypeError.__module__ = 'fakelib'\n"
        "raise fake.TypeError('spoofed')\n"
    ),
    "class of a module file the snippet writes": (
        "import pathlib, sys\npathlib.Path('helpers_mod.py').write_text('class TypeError(Exception):\\n    pass\\n')\n"
        "sys.path.insert(0, '.')\nimport helpers_mod\nraise helpers_mod.TypeError('spoofed')\n"
    ),
    "builtin rebound to the snippet's class": (
        "import builtins\nclass Fake(BaseException):\n    pass\n"
        "Fake.__module__, Fake.__qualname__ = 'builtins', 'TypeError'\n"
        "builtins.TypeError = Fake\nraise Fake('spoofed')\n"
    ),
    "warning renamed to a builtin": (
        "import warnings\nclass Fake(Warning):\n    pass\n"
        "Fake.__module__, Fake.__qualname__ = 'builtins', 'UserWarning'\nwarnings.warn('spoofed', Fake)\n"
    ),
}


@pytest.mark.parametrize("how", sorted(SPOOFED))
def test_a_class_named_like_the_expected_one_does_not_pass(make_catalogue, pool, how):
    """The verdict compares classes, not the names a snippet can give its own."""
    code = SPOOFED[how]
    kind = {"warns": {"category": "UserWarning", "match": "spoofed"}}
    expect = kind if "warning" in how else {"raises": {"type": "TypeError", "match": "spoofed"}}
    [result] = _run(make_catalogue, pool, {"code": code, "expect": expect})
    assert result.status == "failed", result.message


def test_a_library_class_imported_by_the_snippet_still_passes(make_catalogue, pool):
    """A module the snippet imports from an installed file is a library: its classes keep their short name."""
    code = "import tomllib\ntomllib.loads('x')\n"
    expect = {"raises": {"type": "TOMLDecodeError", "match": "Expected '=' after a key"}}
    [result] = _run(make_catalogue, pool, {"code": code, "expect": expect})
    assert result.status == "passed", result.message


def test_a_snippets_subclass_of_the_expected_class_still_passes(make_catalogue, pool):
    code = "import warnings\nclass Mine(UserWarning):\n    pass\nwarnings.warn('own', Mine)\n"
    code += "class Local(TypeError):\n    pass\nraise Local('own')\n"
    [raised, warned] = _run(
        make_catalogue,
        pool,
        {"code": code, "expect": {"raises": {"type": "TypeError", "match": "own"}}},
        {"code": code.split("class Local")[0], "expect": {"warns": {"category": "UserWarning", "match": "own"}}},
    )
    assert (raised.status, warned.status) == ("passed", "passed"), (raised.message, warned.message)


# Finds kb's result pipe and sends an object whose unpickling runs a command: kb must never run it.
SENDS_CODE = """\
import gc, os
from multiprocessing.connection import Connection
class Payload:
    def __reduce__(self):
        return (os.system, ("touch {marker}",))
pipes = [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed and o.writable]
for pipe in pipes:
    try:
        pipe.send(Payload())
    except OSError:
        pass
assert pipes, "no pipe found"
"""


def test_what_a_snippet_sends_on_the_result_pipe_runs_no_code_in_kb(make_catalogue, pool, tmp_path):
    marker = tmp_path / "ran-in-kb"
    [result] = _run(make_catalogue, pool, {"code": SENDS_CODE.format(marker=marker), "expect": "ok"})
    assert not marker.exists()
    assert result.status != "passed", result.message


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
    state = RankRun(0, outcome=outcome, exitcode=outcome["exit_code"], reported=True)
    verdicts = []
    thread = threading.Thread(target=lambda: verdicts.append(verdict_of(check, [state], 0.1, False, 60)), daemon=True)
    thread.start()
    thread.join(10)
    assert verdicts, "matching the expected pattern hung"
    assert verdicts[0].status == "failed"


@pytest.mark.parametrize(
    "code",
    [
        "import os\nos.closerange(0, 1024)\nraise ValueError('after closing')\n",
        "import sys\nsys.stdout.close()\nsys.stderr.close()\nraise ValueError('after closing')\n",
    ],
    ids=["stdio-descriptors", "stdio-streams"],
)
def test_a_snippet_that_closes_its_stderr_still_raised_what_it_raised(make_catalogue, pool, code):
    """kb's own traceback print used to fail on the closed stderr and turn the raise into 'exit 1'."""
    expect = {"raises": {"type": "ValueError", "match": "after closing"}}
    [result] = _run(make_catalogue, pool, {"code": code, "expect": expect})
    assert result.status == "passed", result.message


def test_an_exception_whose_str_raises_is_still_the_exception_raised(make_catalogue, pool):
    code = "class Odd:\n    def __str__(self):\n        raise RuntimeError('no text')\nraise ValueError(Odd())\n"
    [result] = _run(make_catalogue, pool, {"code": code, "expect": {"raises": {"type": "ValueError", "match": ".*"}}})
    assert result.status == "passed", result.message


def test_an_exec_that_ends_the_snippet_is_no_pass(make_catalogue, pool):
    code = "import os, sys\nos.execv(sys.executable, [sys.executable, '-c', 'pass'])\nassert False, 'never reached'\n"
    [result] = _run(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == "error", result.message
    assert "did not run to its end" in result.message


def test_os_exit_in_the_snippet_gives_its_status_as_in_a_script(make_catalogue, pool):
    """`os._exit(0)` as the last line (a process group that would hang at teardown) passes, as the
    script would; `os._exit(3)` fails with its status; a forked child's `os._exit` decides nothing."""
    fork = "import os\nif os.fork() == 0:\n    os._exit(5)\nos.wait()\nraise ValueError('parent')\n"
    passes, fails, forked = _run(
        make_catalogue,
        pool,
        {"code": "import os, warnings\nwarnings.warn('seen')\nos._exit(0)\n", "expect": "ok"},
        {"code": "import os\nos._exit(3)\n", "expect": "ok"},
        {"code": fork, "expect": {"raises": {"type": "ValueError", "match": "parent"}}},
    )
    assert passes.status == "passed", passes.message
    assert fails.status == "failed" and "exited with status 3" in fails.message, fails.message
    assert forked.status == "passed", forked.message


def test_a_check_that_cannot_start_all_its_ranks_leaves_no_folder(make_catalogue, pool, monkeypatch, tmp_path):
    """Out of descriptors (`ulimit -n`) when the second rank starts: an error, and the check's
    folder and its first rank go (the folders used to stay in TMPDIR)."""
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    real_slot = pool.slot
    calls = []

    def slot():
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.EMFILE, "Too many open files")
        return real_slot()

    monkeypatch.setattr(pool, "slot", slot)
    check = {"code": "pass\n", "expect": "ok", "requires": {"processes": 2}}
    [result] = _run(make_catalogue, pool, check)
    assert result.status == "error" and "Too many open files" in result.message, result.message
    assert [p.name for p in temp.iterdir() if p.name.startswith("kb-check-")] == []


_WRITE_RESULT_PIPE = (
    "import gc, os, struct, time\n"
    "from multiprocessing.connection import Connection\n"
    "for c in [o for o in gc.get_objects() if isinstance(o, Connection) and not o.closed and o.writable]:\n"
    "    os.write(c.fileno(), {data})\n"
    "time.sleep({sleep})\n"
)


def test_a_part_message_on_the_result_pipe_does_not_hold_kb_past_the_timeout(make_catalogue, pool):
    # A length header and one byte, then silence: a blocking read never reached the deadline.
    code = _WRITE_RESULT_PIPE.format(data="struct.pack('!i', 1000) + b'x'", sleep=600)
    started = time.monotonic()
    [result] = _run(make_catalogue, pool, {"code": code, "expect": "ok", "timeout": 3})
    assert time.monotonic() - started < 60
    assert result.status == "failed", result.message
    assert "timed out" in result.message


def test_a_message_over_the_cap_is_refused_unread_and_said_so(make_catalogue, pool):
    code = _WRITE_RESULT_PIPE.format(data="struct.pack('!i', -1) + struct.pack('!Q', 700 * 1024**2)", sleep=1)
    [result] = _run(make_catalogue, pool, {"code": code, "expect": "ok", "timeout": 30})
    assert result.status != "passed", result.message
    assert "more than the 64 MiB" in result.message
    assert "kill its parent" not in result.message


def test_a_message_cut_short_by_the_snippets_exit_is_said_to_be_so(make_catalogue, pool):
    code = _WRITE_RESULT_PIPE.format(data="struct.pack('!i', 1000) + b'x'", sleep=0)
    [result] = _run(make_catalogue, pool, {"code": code, "expect": "ok", "timeout": 30})
    assert result.status != "passed", result.message
    assert "incomplete message" in result.message, result.message
