"""What can take over a second says so on a terminal's stderr, and writes nothing there for a pipe."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

import pytest
from helpers import record

from trainkb._status import status

DDP = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"


def _run(args: list[str], env: dict[str, str], terminal: bool) -> tuple[int, str, str]:
    """(status, stdout, stderr) of a kb process whose stderr is a pseudo-terminal or a pipe."""
    cmd = [sys.executable, "-m", "trainkb", *args]
    full_env = {**os.environ, **env}
    if not terminal:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=300)
        return proc.returncode, proc.stdout, proc.stderr
    ours, theirs = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=theirs, stdin=subprocess.DEVNULL, env=full_env)
    os.close(theirs)
    err = b""
    while True:
        try:
            chunk = os.read(ours, 65536)
        except OSError:  # EIO: the process closed its end
            break
        if not chunk:
            break
        err += chunk
    os.close(ours)
    out = proc.stdout.read() if proc.stdout else b""
    return proc.wait(timeout=300), out.decode(), err.decode()


@pytest.fixture
def small(make_catalogue) -> str:
    return str(make_catalogue({"alpha/D1-sample.yaml": record()}))


def test_first_index_build_is_shown_on_a_terminal_only(small, tmp_path):
    for terminal in (True, False):
        env = {"XDG_CACHE_HOME": str(tmp_path / f"cache-{terminal}")}
        first = _run(["--catalogue", small, "search", "A sample failure for tests"], env, terminal)
        again = _run(["--catalogue", small, "search", "A sample failure for tests"], env, terminal)
        assert first[1] == again[1] and "D1" in first[1]  # the same answer, cold or warm
        if terminal:
            assert "kb: building the search index" in first[2]
            assert first[2].endswith("\r\x1b[2K")  # erased once the index is built
            assert "building the search index" not in again[2]  # read from the cache
        else:
            assert first[2] == again[2] == ""


@pytest.mark.slow
def test_kb_doctor_says_what_it_is_doing(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err = _run(["doctor"], env, terminal=True)
    assert code in (0, 1) and "P1" in out
    assert "kb doctor: importing torch…" in err and "kb doctor: probing this environment…" in err
    assert "kb: reading the catalogue…" in err
    code, out, err = _run(["doctor"], env, terminal=False)
    assert code in (0, 1) and "P1" in out and err == ""


def test_kb_site_build_says_what_it_is_doing(small, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    code, out, err = _run(["--catalogue", small, "site", "build", "-o", str(tmp_path / "a")], env, terminal=True)
    assert code == 0 and out.startswith("built ")
    assert "kb site build: rendering 1 entry pages and the search index…" in err
    code, out, err = _run(["--catalogue", small, "site", "build", "-o", str(tmp_path / "b")], env, terminal=False)
    assert code == 0 and out.startswith("built ") and err == ""


def test_status_writes_nothing_to_a_stream_that_is_not_a_terminal(capsys):
    with status("kb: working") as say:
        say("one step")
    assert capsys.readouterr().err == ""


def test_status_on_a_terminal_is_rewritten_then_erased(monkeypatch, tmp_path):
    class Terminal:
        def __init__(self) -> None:
            self.text = ""

        def isatty(self) -> bool:
            return True

        def write(self, text: str) -> None:
            self.text += text

        def flush(self) -> None:
            pass

    shown = Terminal()
    monkeypatch.setattr(sys, "stderr", shown)
    with status("kb: working") as say:
        say("one step")
    assert shown.text == "\r\x1b[2Kkb: working…\r\x1b[2Kkb: working: one step…\r\x1b[2K"
