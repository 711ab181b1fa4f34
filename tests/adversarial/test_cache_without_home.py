"""Where the search index is kept when there is no home folder: HOME=/nonexistent is the home of
nobody, of daemons and of many CI users, whose absence must stay as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainkb.search import _index

pytestmark = pytest.mark.slow  # a cold `kb search` builds the index


def test_kb_search_makes_nothing_under_a_missing_home(tmp_path):
    home, temp = tmp_path / "nonexistent", tmp_path / "tmp"
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "XDG_CACHE_HOME"} | {"HOME": str(home), "TMPDIR": str(temp)}
    command = [sys.executable, "-m", "trainkb", "search", "CUDA out of memory. Tried to allocate 2.00 GiB"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert not home.exists()
    assert list((temp / f"trainkb-{os.getuid()}").glob("index-*.marshal"))  # still kept, for this user


def test_a_temp_folder_someone_else_could_write_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    planted = tmp_path / f"trainkb-{os.getuid()}"
    planted.mkdir(mode=0o777)
    planted.chmod(0o777)
    _index._temp_cache.cache_clear()
    try:
        assert _index._temp_cache() != planted
    finally:
        _index._temp_cache.cache_clear()


# kb with the password database's home pointed at a test folder: where HOME="" must lead.
_WITH_PASSWD_HOME = """\
import pwd, sys
home = sys.argv[1]
pwd.getpwuid = lambda uid: type("Entry", (), {"pw_dir": home})()
if sys.argv[2] == "hook":
    import trainkb
    trainkb.install()
    raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
from trainkb.cli import main
sys.exit(main(sys.argv[2:]))
"""
_OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"
_LOGS = Path(__file__).parent.parent / "own_output"
_READING_THE_CACHE = {
    "search": ["search", _OOM],
    "run": ["run", "--", "sh", "-c", f"echo '{_OOM}' >&2; exit 1"],
    "triage": ["triage", str(_LOGS / "kb-run-ddp-unused-2rank.log")],
    "new": ["new", "--dry-run", "--from", str(_LOGS / "kb-run-view-shape.log")],
    "hook": ["hook"],
}


@pytest.mark.parametrize("args", _READING_THE_CACHE.values(), ids=list(_READING_THE_CACHE))
def test_an_empty_home_is_no_home(tmp_path, args):
    """HOME="" is treated as unset (the password database's home), not as "/" or the current folder."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_")} | {"HOME": ""}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    command = [sys.executable, "-c", _WITH_PASSWD_HOME, str(home), *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=work, timeout=300)
    assert done.stderr.count("Traceback") == (args == ["hook"]), done.stderr  # the hook's is the script's own
    assert list((home / ".cache" / "trainkb").glob("index-*.marshal")), done.stderr
    assert list(work.iterdir()) == []
