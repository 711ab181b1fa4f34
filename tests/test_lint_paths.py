"""Where `kb lint` says a finding is: GitHub annotations name a file from the working directory, and an id
taken in another layer names both layers."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import AREAS, TEAM_AREAS, TEAM_RECORD, record

from trainkb.cli import main


def _catalogue(root: Path) -> Path:
    """A catalogue whose one record lacks its modeline: a finding at line 1."""
    (root / "alpha").mkdir(parents=True)
    (root / "areas.yaml").write_text(AREAS, encoding="utf-8")
    (root / "alpha" / "D1-sample.yaml").write_text(record(modeline=False), encoding="utf-8")
    return root


def _annotations(args: list[str], capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main([*args, "lint", "--format", "github"]) == 1
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("::error")]


def test_an_annotation_names_the_file_from_the_working_directory(tmp_path, monkeypatch, capsys):
    _catalogue(tmp_path / "deep" / "kb" / "records")
    monkeypatch.chdir(tmp_path)
    lines = _annotations(["--catalogue", "deep/kb/records"], capsys)
    modeline = [line for line in lines if "kb lint modeline" in line]
    assert modeline and modeline[0].startswith("::error file=deep/kb/records/alpha/D1-sample.yaml,line=1,")
    assert all(
        (tmp_path / line.split("file=", 1)[1].split(",", 1)[0]).exists() for line in lines if "schema.json" not in line
    )


def test_an_annotation_outside_the_working_directory_is_absolute(tmp_path, monkeypatch, capsys):
    root = _catalogue(tmp_path / "kb" / "catalogue")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    modeline = [line for line in _annotations(["--catalogue", str(root)], capsys) if "kb lint modeline" in line]
    assert modeline[0].startswith(f"::error file={root / 'alpha' / 'D1-sample.yaml'},")


def _layer(folder: Path, entry_id: str) -> Path:
    (folder / "cluster").mkdir(parents=True)
    (folder / "catalogue.yaml").write_text("", encoding="utf-8")
    (folder / "areas.yaml").write_text(TEAM_AREAS, encoding="utf-8")
    text = TEAM_RECORD.replace("id: Q1", f"id: {entry_id}")
    (folder / "cluster" / f"{entry_id}-negative-shard-length.yaml").write_text(text, encoding="utf-8")
    return folder


def test_an_id_taken_in_another_layer_of_the_same_name_names_both_layers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    one, two = _layer(tmp_path / "one" / "catalogue", "Q7"), _layer(tmp_path / "two" / "catalogue", "Q7")
    assert main(["--catalogue", f"{one}:{two}", "lint"]) == 1
    clash = [line for line in capsys.readouterr().out.splitlines() if "[id-collision]" in line]
    assert len(clash) == 1 and clash[0].startswith(f"{two}/cluster/Q7-negative-shard-length.yaml:")  # the real file
    assert f"of the layer {str(one)!r}, below this record's layer {str(two)!r}" in clash[0]
