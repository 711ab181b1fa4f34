"""A snippet that keeps stopping its own supervisor (SIGSTOP, again and again) still ends at --timeout.

Waking the supervisor (SIGCONT) once is not enough when the snippet stops it again at once: kb ends
the check without the supervisor's help (SIGKILL of its process group after a grace), so the run
ends soon after the check's limit and leaves no process behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, wait_for_file, wait_for_no_survivors

STOP_AGAIN_AND_AGAIN = """\
import os, signal, time
open({started!r}, "w").close()
while True:
    os.kill(os.getppid(), signal.SIGSTOP)
    time.sleep(0.001)
"""


# a stopped supervisor that kb ends: test_check_stopped_supervisor.py's test_a_stopped_supervisor_goes_when_kb_is_killed
# (quick); one stopped again and again shows only by waiting out the check's --timeout in a real kb check run
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_supervisor_stopped_again_and_again_does_not_outlast_the_timeout(make_catalogue, tmp_path):
    started = tmp_path / "started"
    checks = checks_yaml({"code": STOP_AGAIN_AND_AGAIN.format(started=str(started)), "expect": "ok"})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift", "--timeout", "3"]
    with marked_tmpdir() as tmp:
        proc = subprocess.Popen(
            command, env=dict(os.environ, TMPDIR=str(tmp)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            wait_for_file(started, proc)
            began = time.monotonic()
            stdout, stderr = proc.communicate(timeout=120)
        finally:
            proc.kill()
        took = time.monotonic() - began
        assert took < 3 + 30, f"kb check ran {took:.0f} s past a 3 s timeout"
        assert proc.returncode == 1 and "Traceback" not in stderr, stdout + stderr
        assert "1 error" in stdout or "1 failed" in stdout, stdout
        assert wait_for_no_survivors(str(tmp), 60) == []
