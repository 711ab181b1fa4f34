"""A check that replaces the run folder's `forkserver.log` with a FIFO or a symlink, then kills the server.

kb restarted the server with its stderr opened on that path: a FIFO nobody reads blocked the open
for ever (and reading the dead server's last words blocked the same way), and a symlink had kb
truncate and fill whatever file it named.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import checks_yaml, record

# The snippet's folder is <run folder>/kb-check-<ID>-*/rank0; its parent is its supervisor, whose
# parent is kb's forkserver.
PLANT = """\
import os, signal
log = os.path.join(os.path.dirname(os.path.dirname(os.getcwd())), "forkserver.log")
os.unlink(log)
{plant}
supervisor = os.getppid()
with open(f"/proc/{{supervisor}}/stat") as stat:
    server = int(stat.read().rsplit(")", 1)[1].split()[1])
os.kill(server, signal.SIGKILL)
"""


def _run(make_catalogue, plant: str) -> subprocess.CompletedProcess[str]:
    checks = checks_yaml({"code": PLANT.format(plant=plant), "expect": "ok"}, {"code": "x = 2\n", "expect": "ok"})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "-j1", "--no-drift"]
    # a hang lasts for ever; a loaded 2-core machine once took over 120 s to finish both checks
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


# a killed forkserver is started again in tests/check/test_stopped_server.py (quick); a hostile
# file at its log path needs a real kb check run and a killed server
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_fifo_at_the_log_path_does_not_hang_kb(make_catalogue):
    try:
        done = _run(make_catalogue, "os.mkfifo(log)")
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"kb check hung on the FIFO: {exc}")
    assert "Traceback" not in done.stderr, done.stderr
    assert "2 checks" in done.stdout, done.stdout + done.stderr


# as above: the restart is quick (tests/check/test_stopped_server.py), the symlinked log path is not
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_symlink_at_the_log_path_is_not_followed(make_catalogue, tmp_path: Path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    done = _run(make_catalogue, f"os.symlink({str(victim)!r}, log)")
    assert "Traceback" not in done.stderr, done.stderr
    assert "2 checks" in done.stdout, done.stdout + done.stderr
    assert victim.read_text() == "precious\n"
