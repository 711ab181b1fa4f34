"""`kb check` leaves nothing behind: signals, new sessions, SIGKILL, snippets that kill their parent.

Each test runs `kb check` as a real process with a unique TMPDIR (see ``leftovers``) and then
scans /proc for any process that still carries it, and the folder for `kb-check-*` leftovers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, wait_for_file, wait_for_no_survivors

# Starts one grandchild in a new session via fork+setsid and one via Popen(start_new_session=True),
# then says so in a file and sleeps: the kind of thing torchrun's workers do.
ESCAPES = """\
import os, subprocess, sys, time
from collections.abc import Iterator
from pathlib import Path
if os.fork() == 0:
    os.setsid()
    time.sleep(600)
    os._exit(0)
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
Path({started!r}).write_text("x")
time.sleep({sleep})
"""


# each test starts kb check (torch imported in its worker) and waits for it to clean up: minutes on a loaded machine
pytestmark = pytest.mark.timeout(900)

STOPS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


def _default_stops() -> None:
    """kb starts as from an interactive shell: a background job of a script inherits SIGINT ignored."""
    for signum in STOPS:
        signal.signal(signum, signal.SIG_DFL)


def _kb(root: Path, tmp: Path, *args: str, **popen) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmp))
    popen.setdefault("preexec_fn", _default_stops)
    return subprocess.Popen(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


@pytest.fixture
def tmp() -> Iterator[Path]:
    with marked_tmpdir() as path:
        yield path


def _sleeping_check(make_catalogue, tmp_path: Path) -> tuple[Path, Path]:
    """A catalogue whose one check starts escaping grandchildren, says so in ``started`` and sleeps."""
    started = tmp_path / "started"
    code = ESCAPES.format(started=str(started), sleep=600)
    checks = checks_yaml({"code": code, "expect": "ok", "timeout": 300})
    return make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)}), started


def _leftover_dirs(tmp: Path) -> list[str]:
    return [p.name for p in tmp.iterdir() if p.name.startswith("kb-check-")]


@pytest.mark.parametrize("signum", STOPS)
@pytest.mark.slow
def test_a_signal_to_kb_check_stops_every_check_and_cleans_up(make_catalogue, tmp_path, tmp, signum):
    root, started = _sleeping_check(make_catalogue, tmp_path)
    proc = _kb(root, tmp, "-q")
    wait_for_file(started, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 128 + signum, out + err
    assert f"stopped by {signal.Signals(signum).name}" in err
    assert "Traceback" not in out + err
    assert wait_for_no_survivors(str(tmp)) == []
    assert _leftover_dirs(tmp) == []


def _ignore_hangups() -> None:
    _default_stops()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


@pytest.mark.slow
def test_kb_check_under_nohup_outlives_a_hangup(make_catalogue, tmp_path, tmp):
    """A signal kb was started ignoring stays ignored; it used to stop kb check under `nohup` on a hangup."""
    root, started = _sleeping_check(make_catalogue, tmp_path)
    proc = _kb(root, tmp, "-q", preexec_fn=_ignore_hangups)
    wait_for_file(started, proc)
    proc.send_signal(signal.SIGHUP)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 128 + signal.SIGTERM, out + err
    assert wait_for_no_survivors(str(tmp)) == []


@pytest.mark.slow
def test_processes_in_new_sessions_end_with_their_check_and_a_pipe_reaches_eof(make_catalogue, tmp_path, tmp):
    """`kb check ID | tail` returns: no escaped process keeps kb's output pipe open."""
    code = ESCAPES.format(started=str(tmp_path / "started"), sleep=0)
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    proc = _kb(root, tmp, "--no-drift")
    out, err = proc.communicate(timeout=240)  # reads both pipes to EOF: the behaviour under test
    assert proc.returncode == 0, out + err
    assert "1 passed" in out
    assert wait_for_no_survivors(str(tmp)) == []
    assert _leftover_dirs(tmp) == []


@pytest.mark.slow
def test_sigkill_of_kb_check_leaves_no_process_and_no_folder(make_catalogue, tmp_path, tmp):
    root, started = _sleeping_check(make_catalogue, tmp_path)
    proc = _kb(root, tmp, "-q")
    wait_for_file(started, proc)
    proc.kill()
    proc.communicate(timeout=240)
    assert wait_for_no_survivors(str(tmp)) == []
    assert _leftover_dirs(tmp) == []


@pytest.mark.slow
def test_a_snippet_that_kills_its_parent_fails_alone_and_clearly(make_catalogue, tmp_path, tmp):
    report = tmp_path / "report.json"
    checks = checks_yaml(
        {
            "name": "killer",
            "code": "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nimport time\ntime.sleep(60)\n",
            "expect": "ok",
        },
        {"name": "bystander", "code": "import time\ntime.sleep(2)\n", "expect": "ok"},
        {"name": "after", "code": "import torch\nassert torch.ones(2).sum() == 2\n", "expect": "ok"},
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    proc = _kb(root, tmp, "-q", "-j", "2", "--no-drift", "-o", str(report))
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    results = {r["check"]: r for r in json.loads(report.read_text())["results"]}
    assert results["bystander"]["status"] == "passed"
    assert results["after"]["status"] == "passed"
    assert results["killer"]["status"] == "error"
    assert "must not kill its parent" in results["killer"]["message"]
    assert wait_for_no_survivors(str(tmp), 5) == []
    assert _leftover_dirs(tmp) == []


@pytest.mark.parametrize(
    "option",
    [
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "-5"],
        ["--timeout", "0"],
        ["--timeout", "soon"],
        ["--memory-limit", "junk"],
        ["--memory-limit", "1K"],
        ["--memory-limit", "inf"],
    ],
)
def test_bad_limits_are_usage_errors(make_catalogue, tmp_path, tmp, option):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    proc = _kb(root, tmp, *option)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 2, out + err
    assert f"argument {option[0]}" in err and "Traceback" not in err
    assert _leftover_dirs(tmp) == []
