"""Where the search index is kept when there is no home folder: HOME=/nonexistent is the home of
nobody, of daemons and of many CI users, whose absence must stay as it is."""

from __future__ import annotations

import os
import subprocess
import sys

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
