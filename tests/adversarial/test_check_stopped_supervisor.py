"""A snippet that stops its supervisor (SIGSTOP) leaves nothing behind when kb or its forkserver dies.

A stopped process acts on no signal but SIGKILL: the supervisor's parent-death SIGTERM stayed
pending, and it, its snippet and what the snippet started outlived kb (and held its pipes open).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, survivors, wait_for_no_survivors

STOP_SUPERVISOR = (
    "import os, signal, subprocess, time\n"
    "subprocess.Popen(['setsid', 'sleep', '5050'])\n"
    "os.kill(os.getppid(), signal.SIGSTOP)\n"
)
KILL_SERVER = (
    "import os, signal, time\n"
    "sup = os.getppid()\n"
    "server = int(open(f'/proc/{sup}/stat').read().rsplit(')', 1)[1].split()[1])\n"
    "os.kill(server, signal.SIGKILL)\n"
    "time.sleep(1)\n"
)


def _kill_left(tmp: str) -> None:
    for line in survivors(tmp):
        os.kill(int(line.split()[0]), signal.SIGKILL)


def _kb(root, tmp, *extra: str, group: bool = False) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TMPDIR=tmp)
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-j1", "--no-drift", *extra]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=group
    )


def _await_sleep(proc: subprocess.Popen[bytes], tmp: str) -> None:
    deadline = time.monotonic() + 300
    while not any("sleep 5050" in line for line in survivors(tmp)):
        assert proc.poll() is None and time.monotonic() < deadline, "the check never started"
        time.sleep(0.1)
    time.sleep(1)  # the snippet stops its supervisor right after starting sleep


@pytest.mark.timeout(600)
def test_a_stopped_supervisor_goes_when_kb_is_killed(make_catalogue):
    code = STOP_SUPERVISOR + "time.sleep(300)\n"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    with marked_tmpdir() as path:
        tmp = str(path)
        proc = _kb(root, tmp, "--timeout", "200")
        try:
            _await_sleep(proc, tmp)
            proc.kill()
            proc.wait()
            assert wait_for_no_survivors(tmp, 60) == []
        finally:
            proc.kill()
            _kill_left(tmp)


# a stopped supervisor going with kb is test_a_stopped_supervisor_goes_when_kb_is_killed (quick);
# killing the forkserver under it needs another real kb check run
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_stopped_supervisor_goes_when_its_forkserver_is_killed(make_catalogue):
    checks = checks_yaml({"code": STOP_SUPERVISOR, "expect": "ok"}, {"code": KILL_SERVER, "expect": "ok"})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    with marked_tmpdir() as path:
        tmp = str(path)
        proc = _kb(root, tmp, "--timeout", "10")
        try:
            proc.wait(timeout=400)
            assert wait_for_no_survivors(tmp, 60) == []
        finally:
            proc.kill()
            _kill_left(tmp)


# as above: test_a_stopped_supervisor_goes_when_kb_is_killed (quick) covers a stopped supervisor's end
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_stopped_supervisor_goes_when_kbs_process_group_is_killed(make_catalogue):
    """`kill -9 -- -PGID` (a CI runner's cancel, the OOM killer's group kill) takes kb and its forkserver at once."""
    code = STOP_SUPERVISOR + "time.sleep(300)\n"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    with marked_tmpdir() as path:
        tmp = str(path)
        proc = _kb(root, tmp, "--timeout", "200", group=True)
        try:
            _await_sleep(proc, tmp)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            assert wait_for_no_survivors(tmp, 10) == []
        finally:
            proc.kill()
            _kill_left(tmp)
