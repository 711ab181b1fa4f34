"""A check that stops kb's forkserver (SIGSTOP) cannot make `kb check` wait forever.

The server is killed and started afresh, so the checks after it still run; stopping kb then ends it
at once, with no process or folder left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, survivors

# The supervisor's parent is kb's forkserver.
STOP_SERVER = """\
import os, signal
supervisor = os.getppid()
server = int(open(f'/proc/{supervisor}/stat').read().rsplit(')', 1)[1].split()[1])
os.kill(server, signal.SIGSTOP)
"""

pytestmark = [pytest.mark.timeout(600), pytest.mark.slow]  # a real kb check process and a forkserver of its own


def _default_stops() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def test_a_stopped_forkserver_is_replaced_and_the_run_ends(make_catalogue, tmp_path):
    innocent = [{"name": f"after{i}", "code": f"print('innocent {i}')\n", "expect": "ok"} for i in range(3)]
    checks = checks_yaml({"name": "stopper", "code": STOP_SERVER, "expect": "ok"}, *innocent)
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    report = tmp_path / "report.json"
    kb = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift", "-j", "1"]
    with marked_tmpdir() as tmp:
        proc = subprocess.Popen(
            [*kb, "--timeout", "5", "-o", str(report)],
            env=dict(os.environ, TMPDIR=str(tmp)),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=_default_stops,
        )
        started = time.monotonic()
        try:
            output, _ = proc.communicate(timeout=150)
        except subprocess.TimeoutExpired:  # the hang: Ctrl-C must still end kb, and quickly
            proc.send_signal(signal.SIGINT)
            try:
                output, _ = proc.communicate(timeout=60)
            finally:
                proc.kill()
            pytest.fail(f"kb check still ran {time.monotonic() - started:.0f} s later; SIGINT gave {proc.returncode}")
        left = survivors(str(tmp))
        folders = [p.name for p in tmp.iterdir() if p.name.startswith("kb-check-")]
    assert proc.returncode == 0, output
    statuses = {r["check"]: r["status"] for r in json.loads(report.read_text())["results"]}
    assert statuses == {"stopper": "passed", "after0": "passed", "after1": "passed", "after2": "passed"}, output
    assert left == [] and folders == []
