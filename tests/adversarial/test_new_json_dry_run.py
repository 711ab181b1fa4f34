"""`kb new --json --dry-run`: a script that asked for JSON gets JSON, and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import team_paste

from trainkb.cli import main


def test_json_dry_run_prints_json_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    layer = tmp_path / "team"
    layer.mkdir()
    (layer / "catalogue.yaml").write_text("name: team\n", encoding="utf-8")
    crash = tmp_path / "crash.log"
    crash.write_text(team_paste(), encoding="utf-8")
    args = ["new", "--catalogue", str(layer), "--from", str(crash), "--area", "runtime-errors"]
    assert main([*args, "--json", "--dry-run"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["written"] is False and shown["area"] == "runtime-errors"
    assert shown["record"].startswith("# yaml-language-server:") and f"id: {shown['id']}" in shown["record"]
    assert not Path(shown["path"]).exists() and list(layer.rglob("*.yaml")) == [layer / "catalogue.yaml"]
    assert main([*args, "--json"]) == 0  # the same draft, written this time
    written = json.loads(capsys.readouterr().out)
    assert written["written"] is True and Path(written["path"]).read_text(encoding="utf-8") == shown["record"]
    assert {k: v for k, v in written.items() if k != "written"} == {
        k: v for k, v in shown.items() if k not in ("written", "record")
    }
