"""A rebuild of the site replaces the old one in one step: a killed build leaves the old site whole.

The old site used to be removed before the new one was written, so a build killed midway left a
partial site (no home page, some entry pages) that `kb site serve` went on serving.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import kill_while_rendering, record


def _tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.rglob("*") if p.is_file()
    }


def _build(catalogue: Path, out: Path) -> subprocess.Popen[bytes]:
    env = dict(os.environ, SOURCE_DATE_EPOCH="946684800")
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(catalogue), "site", "build", "-o", str(out)]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _built(catalogue: Path, out: Path) -> int:
    kb = _build(catalogue, out)
    try:
        return kb.wait(timeout=600)
    finally:
        kb.kill()


# Three builds of 120 pages: `make test` runs it; a killed build leaving the old site is in
# test_site_in_place.py's quick test_a_killed_in_place_build_leaves_the_old_site_readable
@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.timeout(1800)
def test_a_build_killed_midway_leaves_the_old_site_and_no_litter(make_catalogue, tmp_path):
    # Enough entries that the pages render in worker processes, whose start marks "midway".
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 121)})
    out = tmp_path / "site"
    assert _built(catalogue, out) == 0
    before = _tree(out)
    assert "index.html" in before
    kb = _build(catalogue, out)
    kill_while_rendering(kb)
    assert _tree(out) == before
    assert _built(catalogue, out) == 0  # the next build removes what the killed one left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue", "site"]
    assert _tree(out) == before  # same input, same stamp: the same site
