"""SIGKILL of `kb check` in the middle of many short checks leaves no `kb-check-*` folder.

kb runs no code after SIGKILL; its checks' folders live in one run folder that kb keeps locked,
and the forkserver (which outlives kb by a moment) removes it once the lock is free. Before,
about half of such kills left empty `kb-check-<ID>-*` folders: a check's folder was made before
any process knew of it, and removed by kb alone after its supervisor had gone.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, wait_for_no_survivors

from trainkb.check._scratch import PREFIX, sweep_abandoned

KILLS = 5
SHORT = [{"code": f"import time\ntime.sleep(0.0{i % 5})\n", "expect": "ok"} for i in range(40)]
TWO_RANKS = [{"code": "import time\ntime.sleep(0.05)\n", "expect": "ok", "requires": {"processes": 2}}] * 10


@pytest.fixture
def tmp() -> Iterator[Path]:
    with marked_tmpdir() as path:
        yield path


def _kb(root: Path, tmp: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, TMPDIR=str(tmp))
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-j2", "-q", "--no-drift"]
    return subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _left(tmp: Path) -> list[str]:
    """The `kb-check-*` folders under tmp; os.walk skips a folder removed while it is being listed."""
    found = []
    for parent, dirs, _files in os.walk(tmp):
        found += [str(Path(parent, name).relative_to(tmp)) for name in dirs if name.startswith("kb-check-")]
    return sorted(found)


def _wait_until_checks_run(tmp: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 300  # kb imports torch first: a minute and more on a loaded machine
    while not any(name.startswith(PREFIX) and "/" in name for name in _left(tmp)):
        assert proc.poll() is None, "kb check ended before a check ran"
        assert time.monotonic() < deadline, "no check started"
        time.sleep(0.01)


def _wait_for_no_folders(tmp: Path, seconds: float = 30.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while (left := _left(tmp)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_repeated_sigkill_of_kb_check_leaves_no_folder(make_catalogue, tmp):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*SHORT, *TWO_RANKS))})
    rng = random.Random(30)
    for kill in range(KILLS):
        proc = _kb(root, tmp)
        _wait_until_checks_run(tmp, proc)
        time.sleep(rng.uniform(0.0, 2.0))
        proc.kill()
        proc.wait()
        assert _wait_for_no_folders(tmp) == [], f"after kill {kill + 1}"
    assert wait_for_no_survivors(str(tmp)) == []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_next_run_removes_the_folder_of_a_run_whose_forkserver_died_too(make_catalogue, tmp):
    """`kill -9` of kb's whole process group (kb and its forkserver): nobody is left to clean up until
    the next `kb check`, which finds the folder unlocked and removes it."""
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*SHORT[:20]))})
    proc = _kb(root, tmp)
    _wait_until_checks_run(tmp, proc)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert wait_for_no_survivors(str(tmp)) == []
    assert [p.name for p in tmp.glob(f"{PREFIX}*")] != []  # nothing ran after the kill to remove it
    again = _kb(root, tmp)
    assert again.wait(timeout=600) == 0
    assert _left(tmp) == []


HOLD = (
    "import time\nfrom trainkb.check._scratch import RunFolder\nprint(RunFolder().path, flush=True)\ntime.sleep(600)\n"
)


def _holder(tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    env = dict(os.environ, TMPDIR=str(tmp))
    proc = subprocess.Popen([sys.executable, "-c", HOLD], env=env, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, Path(proc.stdout.readline().strip())


def test_a_sweep_removes_only_folders_whose_kb_is_gone(tmp):
    dead, dead_folder = _holder(tmp)
    alive, alive_folder = _holder(tmp)
    try:
        (dead_folder / "kb-check-D1-x").mkdir()
        dead.kill()
        dead.wait()
        assert dead_folder.is_dir()  # no process of it is left to remove it
        assert sweep_abandoned(str(tmp)) == [str(dead_folder)]
        assert not dead_folder.exists() and alive_folder.is_dir()
    finally:
        alive.kill()
        alive.wait()
    assert sweep_abandoned(str(tmp)) == [str(alive_folder)]


@pytest.mark.parametrize("kind", ["fifo", "symlink to fifo"])
def test_a_sweep_skips_a_lock_that_is_not_a_regular_file_instead_of_blocking_on_it(tmp, kind):
    # Any process of the user can plant one (a snippet sees the same TMPDIR); opening a FIFO
    # for reading blocks until a writer comes, so every later `kb check` hung at start.
    folder = tmp / f"{PREFIX}planted"
    folder.mkdir()
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    if kind == "fifo":
        fifo.rename(folder / ".lock")
    else:
        (folder / ".lock").symlink_to(fifo)
    env = dict(os.environ, TMPDIR=str(tmp))
    code = "from trainkb.check._scratch import sweep_abandoned\nprint(sweep_abandoned())\n"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert folder.is_dir()
