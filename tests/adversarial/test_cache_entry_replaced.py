"""A search index or stamp file in the cache replaced by a FIFO, or by a link to /dev/zero, is a cache
miss. Before, a FIFO hung `kb search` (index and stamp alike) and /dev/zero grew its memory without bound."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.skipif(sys.platform != "linux", reason="FIFOs and /dev/zero")]

PASTE = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"


def _search(cache: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache))
    command = [sys.executable, "-m", "trainkb", "search", "--json", PASTE]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("cache")
    assert _search(cache).returncode == 0
    return cache / "trainkb"


def _replace(path: Path, kind: str) -> None:
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero-link"])
@pytest.mark.parametrize("pattern", ["index-*.marshal", "stamp-*"])
def test_a_replaced_cache_entry_is_a_miss(warm, tmp_path, pattern, kind):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "trainkb").mkdir()
    for entry in warm.iterdir():
        (cache / "trainkb" / entry.name).write_bytes(entry.read_bytes())
    (entry,) = (cache / "trainkb").glob(pattern)
    _replace(entry, kind)
    done = _search(cache)  # the timeout fails the test where a FIFO blocked the read
    assert done.returncode == 0, done.stderr
    assert '"status": "answered"' in done.stdout and '"id": "D8"' in done.stdout
