"""A render worker killed mid-build (as the OOM killer kills) ends `kb site build` with one line and the
old site as it was. It used to end in a raw BrokenProcessPool traceback with the status 1."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import child_pids, record

from trainkb.cli import main
from trainkb.site import _build


def _killed(ids: list[str]) -> dict[str, list[dict[str, object]]]:
    """Stands in for the page renderer in the forked workers: the worker dies of SIGKILL at once."""
    os.kill(os.getpid(), signal.SIGKILL)
    raise AssertionError("still alive after SIGKILL")


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*")}


@pytest.mark.skipif(sys.platform != "linux", reason="the pages render in forked workers")
def test_a_killed_render_worker_ends_in_one_line_and_leaves_the_old_site(make_catalogue, tmp_path, capsys, monkeypatch):
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 5)})
    out = tmp_path / "site"
    out.mkdir()
    (out / _build.MARKER).write_text("old\n", encoding="utf-8")
    (out / "index.html").write_text("the old site\n", encoding="utf-8")
    old = _tree(out)
    monkeypatch.setattr(_build, "_workers", lambda _count: 2)
    monkeypatch.setattr(_build, "_entry_chunk", _killed)

    status = main(["--catalogue", str(catalogue), "site", "build", "-o", str(out)])

    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and "BrokenProcessPool" not in err
    lines = [line for line in err.splitlines() if line.startswith("kb: error:")]
    assert len(lines) == 1, err
    assert "died (signal 9) while rendering the 4 entry pages: out of memory?" in lines[0]
    assert _tree(out) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue", "site"]  # no half-built folder beside it


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.timeout(600)
def test_a_worker_killed_from_outside_ends_the_build_in_one_line(make_catalogue, tmp_path):
    """The reported case: SIGKILL sent to one of a running build's workers, as the OOM killer sends it."""
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 121)})
    out = tmp_path / "site"
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(catalogue), "site", "build", "-o", str(out)]
    kb = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    deadline = time.monotonic() + 120
    while not workers and kb.poll() is None and time.monotonic() < deadline:
        workers = child_pids(kb.pid)
        time.sleep(0.01)
    try:
        os.kill(workers[0], signal.SIGKILL)
    except (IndexError, ProcessLookupError):
        kb.kill()
        kb.communicate()
        pytest.skip("no render worker to kill (one CPU, or the build ended first)")
    _, err = kb.communicate(timeout=300)
    if kb.returncode == 0:
        pytest.skip("the worker had finished its pages before the kill landed")
    assert kb.returncode == 2, err
    assert err.count("\n") == 1 and err.startswith(f"kb: error: render worker {workers[0]} died (signal 9)"), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue"]  # no site, no half-built folder
