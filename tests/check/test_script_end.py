"""A check ends as the script it stands for ends: threads joined, atexit run, Ctrl-C a KeyboardInterrupt.

A script whose main code has finished still waits for its non-daemon threads and runs its atexit
callbacks; a hang, a warning or an exit status there is part of what the script did. A snippet
that breaks the traceback or linecache module, or empties sys.modules, still raised what it raised.
"""

from __future__ import annotations

import pytest
from helpers import run_sample_checks


def _run(make_catalogue, pool, *checks, timeout=60.0):
    return run_sample_checks(make_catalogue, pool, *checks, timeout=timeout, jobs=2)


HANGS = {"hangs": {"seconds": 3}}


def test_what_runs_after_the_main_code_decides_as_in_a_script(make_catalogue, pool):
    thread_hangs = "import threading, time\nthreading.Thread(target=time.sleep, args=(600,)).start()\n"
    atexit_hangs = "import atexit, time\natexit.register(time.sleep, 600)\n"
    atexit_exits = "import atexit, os\natexit.register(os._exit, 3)\n"
    late_warning = (
        "import threading, time, warnings\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        "    warnings.warn('emitted after the main code')\n"
        "threading.Thread(target=late).start()\n"
    )
    results = _run(
        make_catalogue,
        pool,
        {"code": thread_hangs, "expect": HANGS},
        {"code": atexit_hangs, "expect": HANGS},
        {"code": atexit_exits, "expect": "ok"},
        {"code": late_warning, "expect": {"warns": {"category": "UserWarning", "match": "after the main code"}}},
    )
    assert [r.status for r in results] == ["passed", "passed", "failed", "passed"], [r.message for r in results]
    assert "status 3" in results[2].message


def test_a_check_that_finishes_everything_still_ends_at_once(make_catalogue, pool):
    code = "import threading\nthreading.Thread(target=print, args=('done',)).start()\n"
    [ok, hangs] = _run(make_catalogue, pool, {"code": code, "expect": "ok"}, {"code": code, "expect": HANGS})
    assert (ok.status, hangs.status) == ("passed", "failed"), (ok.message, hangs.message)


def test_ctrl_c_is_a_keyboard_interrupt_as_in_a_script(make_catalogue, pool):
    code = "import _thread, threading, time\nthreading.Thread(target=_thread.interrupt_main).start()\ntime.sleep(30)\n"
    expect = {"raises": {"type": "KeyboardInterrupt", "match": ".*"}}
    [result] = _run(make_catalogue, pool, {"code": code, "expect": expect})
    assert result.status == "passed", result.message


@pytest.mark.parametrize(
    "breakage",
    [
        "import traceback\ntraceback.format_exception = None\n",
        "import linecache\nlinecache.cache = None\n",
        "import sys\nsys.modules.clear()\n",
        "import sys, types\nsys.modules['builtins'] = types.ModuleType('builtins')\n",
    ],
)
def test_a_snippet_that_breaks_the_interpreters_bookkeeping_still_raised_what_it_raised(make_catalogue, pool, breakage):
    code = breakage + "raise ValueError('raised after the breakage')\n"
    expect = {"raises": {"type": "ValueError", "match": "after the breakage"}}
    [result] = _run(make_catalogue, pool, {"code": code, "expect": expect})
    assert result.status == "passed", result.message


def test_an_exit_status_beyond_a_c_long_fails_as_in_a_script(make_catalogue, pool):
    [result] = _run(make_catalogue, pool, {"code": "import sys\nsys.exit(2**70)\n", "expect": "ok"})
    assert result.status == "failed", result.message


@pytest.mark.timeout(300)  # the checks' own limit is far beyond this: waiting for it would be a hang, failed here
def test_what_the_main_code_raised_decides_even_when_the_exit_then_hangs(make_catalogue, pool):
    code = "import atexit, time\natexit.register(time.sleep, 3600)\nraise ValueError('raised before the exit')\n"
    raises = {"raises": {"type": "ValueError", "match": "before the exit"}}
    checks = ({"code": code, "expect": raises}, {"code": code, "expect": "ok"}, {"code": code, "expect": HANGS})
    [raised, ok, hangs] = _run(make_catalogue, pool, *checks, timeout=3600.0)
    assert (raised.status, hangs.status) == ("passed", "passed"), (raised.message, hangs.message)
    assert ok.status == "failed" and "ValueError" in ok.message, ok.message
