"""kb's forkserver cannot be reached, crashed or outlived by a check, and nothing a check starts outlives kb.

Each test runs `kb check` as a real process with a unique TMPDIR; every process kb starts carries
it in its start-up environment, so a scan of /proc finds whatever is left when kb returns.
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
from leftovers import marked_tmpdir, survivors, wait_for_file

# Every unix socket this user can reach under the check's TMPDIR (where multiprocessing puts a
# forkserver's listener) or listed in /proc/net/unix under it.
FIND_SOCKETS = """\
import os, socket, stat
tmp = os.environ["TMPDIR"]
paths = set()
for line in open("/proc/net/unix").read().splitlines()[1:]:
    fields = line.split()
    if len(fields) == 8 and fields[7].startswith(tmp):
        paths.add(fields[7])
for folder, _dirs, files in os.walk(tmp):
    for name in files:
        path = os.path.join(folder, name)
        if stat.S_ISSOCK(os.lstat(path).st_mode):
            paths.add(path)
print("sockets found:", sorted(paths))
"""

# Connects to each and sends nothing: multiprocessing's forkserver died of this with a traceback.
POKE = (
    FIND_SOCKETS
    + """\
for path in paths:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(path)
        except OSError:
            pass
"""
)

# Speaks multiprocessing's forkserver protocol: the forked child unpickles a payload that starts
# `sleep 4242` (a pickle runs whatever its reduce names).
SPAWN_THROUGH_IT = (
    FIND_SOCKETS
    + """\
import pickle, subprocess, time
from multiprocessing import reduction
class Sleep:
    def __reduce__(self):
        return (subprocess.Popen, (["sleep", "4242"],))
for path in paths:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(path)
        except OSError:
            continue
        child_r, feed = os.pipe()
        status, child_w = os.pipe()
        reduction.sendfds(sock, [child_r, child_w, child_w, child_w])
        os.write(feed, pickle.dumps(Sleep()) * 2)
time.sleep(1)
"""
)

# Starts a process in a session of its own, then stops or kills the supervisor (its parent),
# which would have reaped it.
BEHEAD = """\
import os, signal, subprocess
subprocess.Popen(["sleep", "{seconds}"], start_new_session=True)
os.kill(os.getppid(), signal.{signal})
"""

# each test runs kb check as a process (its worker imports torch): minutes on a loaded machine
pytestmark = pytest.mark.timeout(900)

INNOCENT = {"name": "after", "code": "import torch\nassert torch.ones(2).sum() == 2\n", "expect": "ok"}


@pytest.fixture
def tmp() -> Iterator[Path]:
    with marked_tmpdir() as path:
        yield path


def _kb(root: Path, tmp: Path, report: Path, *args: str) -> tuple[int, str]:
    kb = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift"]
    proc = subprocess.run(
        [*kb, "-o", str(report), *args],
        env=dict(os.environ, TMPDIR=str(tmp)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    return proc.returncode, proc.stdout + proc.stderr


def _results(report: Path) -> dict[str, dict]:
    return {r["check"]: r for r in json.loads(report.read_text())["results"]}


def _leftover_dirs(tmp: Path) -> list[str]:
    return [p.name for p in tmp.iterdir() if p.name.startswith("kb-check-")]


@pytest.mark.slow
def test_a_snippet_that_connects_to_the_forkserver_cannot_crash_it(make_catalogue, tmp_path, tmp):
    checks = checks_yaml({"name": "poke", "code": POKE, "expect": "ok"}, INNOCENT)
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    report = tmp_path / "report.json"
    code, output = _kb(root, tmp, report, "-j", "1")
    assert code == 0, output
    assert "Traceback" not in output
    assert _results(report)["after"]["status"] == "passed"
    assert survivors(str(tmp)) == []
    assert _leftover_dirs(tmp) == []


@pytest.mark.slow
def test_a_snippet_cannot_start_processes_through_the_forkserver(make_catalogue, tmp_path, tmp):
    checks = checks_yaml({"code": SPAWN_THROUGH_IT, "expect": "ok"})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    code, output = _kb(root, tmp, tmp_path / "report.json")
    assert "Traceback" not in output
    assert survivors(str(tmp)) == [], output
    assert code == 0, output


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
@pytest.mark.slow
def test_what_a_snippet_started_dies_with_kb_even_without_its_supervisor(make_catalogue, tmp_path, tmp, how):
    seconds = 4243 if how == "SIGKILL" else 4244
    code = BEHEAD.format(seconds=seconds, signal=how)
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    _code, output = _kb(root, tmp, tmp_path / "report.json")
    assert "Traceback" not in output
    assert survivors(str(tmp)) == [], output


@pytest.mark.slow
def test_nothing_kb_started_is_left_when_kb_check_returns(make_catalogue, tmp_path, tmp):
    """Checked the moment kb's process ends (a pipe to read would also wait for whoever holds it)."""
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    log = tmp_path / "log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "--no-drift"],
            env=dict(os.environ, TMPDIR=str(tmp)),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        code = proc.wait(timeout=600)
        left = survivors(str(tmp))
    assert code == 0, log.read_text()
    assert left == []


def _default_stops() -> None:
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.slow
def test_a_check_cut_short_by_stopping_kb_is_reported_as_interrupted(make_catalogue, tmp_path, tmp, signum):
    started = tmp_path / "started"
    code = f"import time\nfrom pathlib import Path\nPath({str(started)!r}).write_text('x')\ntime.sleep(600)\n"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "--no-drift"],
        env=dict(os.environ, TMPDIR=str(tmp)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=_default_stops,
    )
    wait_for_file(started, proc)
    proc.send_signal(signum)
    output, _ = proc.communicate(timeout=240)
    assert proc.returncode == 128 + signum, output
    assert "D1:c0" in output and "interrupted" in output, output
    assert "SIGKILL" not in output and "ERROR" not in output, output
    assert survivors(str(tmp)) == []
