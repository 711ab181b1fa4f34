"""`kb site build -o DIR` where DIR cannot be swapped whole: a mount point, or a folder in a read-only parent.

Both used to end in exit 2 (`Device or resource busy`, `Permission denied`) on every build. They now
build inside DIR, and a build killed while it renders leaves the old site readable.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import kill_while_rendering, record

from trainkb.site._inplace import HIDDEN

ENV = dict(os.environ, SOURCE_DATE_EPOCH="946684800")


def _tree(folder: Path) -> dict[str, str]:
    """The site's files, leaving out a build's hidden working folders."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and HIDDEN.fullmatch(p.relative_to(folder).parts[0]) is None
    }


def _kb(catalogue: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "trainkb", "--catalogue", str(catalogue), "site", "build", "-o", str(out), "--json"]


def _works(command: list[str]) -> bool:
    try:
        return subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _unprivileged() -> list[str]:
    """A prefix that runs a command without the power to write where the mode forbids it."""
    if os.geteuid() != 0:
        return []
    drop = ["setpriv", "--bounding-set=-dac_override", "--inh-caps=-dac_override"]
    if shutil.which("setpriv") is None or not _works([*drop, "true"]):
        pytest.skip("setpriv cannot drop CAP_DAC_OVERRIDE here")
    return drop


@pytest.fixture
def read_only_parent(tmp_path: Path) -> Iterator[Path]:
    parent = tmp_path / "parent"
    parent.mkdir()
    yield parent
    parent.chmod(0o755)  # so that tmp_path can be removed


@pytest.mark.skipif(sys.platform != "linux", reason="mount namespaces are Linux-only")
def test_a_mount_point_is_built_in_place(make_catalogue, tmp_path):
    if shutil.which("unshare") is None or not _works(["unshare", "-rm", "true"]):
        pytest.skip("unshare cannot make a user and mount namespace here")
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 4)})
    out = tmp_path / "out"
    out.mkdir()
    build = " ".join(_kb(catalogue, out))
    script = f"mount -t tmpfs none {out} && {build} && {build} && ls -A {out}"
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    first, second, *listing = done.stdout.splitlines()
    assert json.loads(first)["in_place"] is json.loads(second)["in_place"] is True
    assert f"kb: built in place: {out} is a mount point, so the swap is not atomic" in done.stderr.splitlines()
    assert {"index.html", "D1", "static", ".trainkb-site"} <= set(listing)
    assert [name for name in listing if HIDDEN.fullmatch(name)] == []
    assert list(out.iterdir()) == []  # the site lived on the tmpfs, not beneath it


def test_a_folder_in_a_read_only_parent_is_rebuilt_in_place(make_catalogue, read_only_parent):
    drop = _unprivileged()
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 4)})
    out = read_only_parent / "site"
    assert subprocess.run(_kb(catalogue, out), env=ENV, capture_output=True).returncode == 0
    before = _tree(out)
    read_only_parent.chmod(0o555)
    done = subprocess.run([*drop, *_kb(catalogue, out)], env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["in_place"] is True
    note = f"kb: built in place: the folder holding {out} is not writable, so the swap is not atomic"
    assert note in done.stderr.splitlines()
    assert _tree(out) == before
    assert [p.name for p in read_only_parent.iterdir()] == ["site"]
    assert [p.name for p in out.iterdir() if HIDDEN.fullmatch(p.name)] == []


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.timeout(1800)
def test_a_killed_in_place_build_leaves_the_old_site_readable(make_catalogue, read_only_parent):
    drop = _unprivileged()
    # Enough entries that the pages render in worker processes, whose start marks "midway".
    catalogue = make_catalogue({f"alpha/D{i}-sample.yaml": record(f"D{i}") for i in range(1, 121)})
    out = read_only_parent / "site"
    assert subprocess.run(_kb(catalogue, out), env=ENV, capture_output=True, timeout=600).returncode == 0
    before = _tree(out)
    read_only_parent.chmod(0o555)
    kb = subprocess.Popen([*drop, *_kb(catalogue, out)], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    kill_while_rendering(kb)
    assert [p.name for p in out.iterdir() if HIDDEN.fullmatch(p.name)]  # it was building inside the site
    assert _tree(out) == before
    rebuilt = subprocess.run([*drop, *_kb(catalogue, out)], env=ENV, capture_output=True, timeout=600)
    assert rebuilt.returncode == 0
    assert [p.name for p in out.iterdir() if HIDDEN.fullmatch(p.name)] == []  # it cleared what the killed one left
    assert _tree(out) == before
