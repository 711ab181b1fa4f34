"""A hostile catalogue gives clear, located messages in every command: never a traceback, never a hang.

Aliases (a self-containing list, "billion laughs"), non-regular files bearing a record's name
(a directory, a symlink loop, a FIFO), and a record far over the size limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import record

from trainkb.cli import main

SELF_ALIAS = "links: &a [*a]\n"
LAUGHS = "".join([f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]\n" for i in range(1, 10)]).replace(
    "*l0", '"lol"'
)  # ~1 KB expanding to 9**9 strings


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _bytes_read() -> int:
    """Bytes this process has read through read() calls so far (a sparse file's zeros count too)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def _run_all(root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """lint, list, search, show and site build on ``root``; every one returns, none raises."""
    outputs = []
    for argv in (
        ["lint"],
        ["list"],
        ["search", "A sample failure for tests"],
        ["show", "D1"],
        ["site", "build", "-o", str(tmp_path / "site")],
    ):
        code = main(["--catalogue", str(root), *argv])
        assert code in (0, 1, 2), argv
        captured = capsys.readouterr()
        assert "Traceback" not in captured.out + captured.err
        outputs.append(captured.out + captured.err)
    return "\n".join(outputs)


def test_self_containing_alias_is_a_located_error(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(), "alpha/D2-loop.yaml": record("D2", extra=SELF_ALIAS)})
    out = _run_all(root, tmp_path, capsys)
    assert "catalogue/alpha/D2-loop.yaml:13:" in out
    assert "anchors and aliases are not allowed" in out


def test_billion_laughs_is_refused_at_once(make_catalogue, tmp_path, capsys):
    assert len(LAUGHS) < 2000
    root = make_catalogue({"alpha/D1-sample.yaml": record(), "alpha/D2-lol.yaml": record("D2", extra=LAUGHS)})
    out = _run_all(root, tmp_path, capsys)
    assert "catalogue/alpha/D2-lol.yaml:" in out and "anchors and aliases are not allowed" in out


def test_non_regular_files_named_like_records(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    (root / "alpha" / "D2-dir.yaml").mkdir()
    os.symlink("D3-loop.yaml", root / "alpha" / "D3-loop.yaml")
    os.mkfifo(root / "alpha" / "D4-fifo.yml")
    out = _run_all(root, tmp_path, capsys)
    assert "catalogue/alpha/D2-dir.yaml:1:1: is a directory" in out
    assert "catalogue/alpha/D3-loop.yaml:1:1: cannot read" in out
    assert "catalogue/alpha/D4-fifo.yml:1:1: is not a regular file" in out


def test_huge_record_is_never_read_in_full(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    with (root / "alpha" / "D2-huge.yaml").open("wb") as handle:
        handle.truncate(300 * 1024 * 1024)  # sparse: 300 MB to whoever reads it, no disk used
    before = _bytes_read()
    out = _run_all(root, tmp_path, capsys)
    assert _bytes_read() - before < 64 * 1024 * 1024  # five commands, and not one read the 300 MB
    assert "catalogue/alpha/D2-huge.yaml:1:1: file is 314.6 MB; records are limited to 256 KB" in out


def _search_title(root: Path, text: str) -> str:
    """The top title from a fresh `kb search` process (the index cache on disk is what is under test)."""
    done = subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "--catalogue", str(root), "search", "--json", text],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)["results"][0]["title"]


def test_yml_record_renamed_and_edited_is_searched_fresh(make_catalogue):
    """The cache key covers `.yml` records too: an edit to one must reach `kb search`."""
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    assert _search_title(root, "sample failure") == "A sample failure for tests"
    old = root / "alpha" / "D1-sample.yaml"
    new = old.with_suffix(".yml")
    new.write_text(old.read_text().replace("A sample failure for tests", "A renamed failure about zebras"))
    old.unlink()
    assert _search_title(root, "renamed failure about zebras") == "A renamed failure about zebras"
    new.write_text(new.read_text().replace("about zebras", "about giraffes"))
    assert _search_title(root, "renamed failure about giraffes") == "A renamed failure about giraffes"
