"""A catalogue folder or record file whose name is not UTF-8 is searched, built and hooked like any other.

Linux file names are bytes; Python holds a byte it cannot decode as a lone surrogate, which
``str.encode()`` refuses. The cache key hashes the name's bytes, and shown names spell the byte out.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import TEAM_AREAS, TEAM_RECORD, team_paste

from trainkb.catalogue import ENV_VAR
from trainkb.cli import main

BAD = os.fsdecode(b"d\xff")  # 'd\udcff': the folder name as Python holds it


@pytest.fixture
def layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    root = tmp_path / BAD / "catalogue"
    (root / "cluster").mkdir(parents=True)
    (root / "catalogue.yaml").write_text("name: team-x\n", encoding="utf-8")
    (root / "areas.yaml").write_text(TEAM_AREAS, encoding="utf-8")
    (root / "cluster" / "Q1-negative-shard-length.yaml").write_text(TEAM_RECORD, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def paste() -> str:
    return team_paste()


def _kb(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "UnicodeEncodeError" not in out + err
    return code, out + err


def test_a_folder_name_that_is_not_utf8_is_searched(layer, paste, capsys):
    code, out = _kb(["--catalogue", str(layer), "search", paste], capsys)
    assert code == 0 and "Q1" in out


@pytest.mark.slow  # a site build and a lint of the whole layered catalogue
def test_a_record_file_name_that_is_not_utf8_is_searched_and_built(layer, paste, tmp_path, capsys):
    odd = layer / "cluster" / os.fsdecode(b"Q9-x\xff.yaml")
    odd.write_text(TEAM_RECORD.replace("id: Q1", "id: Q9"), encoding="utf-8")
    code, out = _kb(["--catalogue", str(layer), "search", paste], capsys)
    assert code == 0 and "Q1" in out
    code, out = _kb(["--catalogue", str(layer), "site", "build", "-o", str(tmp_path / "site")], capsys)
    assert code == 0 and (tmp_path / "site" / "index.html").is_file()
    code, out = _kb(["--catalogue", str(layer), "lint"], capsys)
    assert "Q9-x\\xff.yaml" in out  # the byte spelled out, as every terminal-safe line does


def test_the_hook_advises_through_such_a_layer(layer, paste, tmp_path):
    env = {**os.environ, ENV_VAR: str(layer), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-c", "import trainkb, torch; trainkb.install(); torch.empty(3 - 4)"],
        env=env,
        capture_output=True,
        timeout=300,
    )
    err = run.stderr.decode("utf-8", "replace")
    assert "negative dimension" in err
    assert "Q1" in err and "UnicodeEncodeError" not in err
