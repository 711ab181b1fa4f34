"""Two layers holding the same relative path: each lint finding names the file it is about.

The finding carries its real file from where it is made, so neither the annotation nor the text line
has to guess the layer from a shown path that both layers share.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import TEAM_AREAS, TEAM_RECORD

from trainkb.catalogue import ENV_VAR
from trainkb.cli import main

REL = "catalogue/cluster/Q1-negative-shard-length.yaml"


@pytest.fixture
def layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tA (lower) has a bad title; tB (upper) the same file name, a clean record overriding it."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    bad = re.sub(r"(?m)^title: .*$", "title: TODO", TEAM_RECORD)
    for name, text in (("tA", bad), ("tB", TEAM_RECORD)):
        root = tmp_path / name / "catalogue"
        (root / "cluster").mkdir(parents=True)
        (root / "catalogue.yaml").write_text(f"name: {name}\n", encoding="utf-8")
        (root / "areas.yaml").write_text(TEAM_AREAS if name == "tA" else "areas: []\n", encoding="utf-8")
        (root / "cluster" / "Q1-negative-shard-length.yaml").write_text(text, encoding="utf-8")
    return tmp_path


def _lint(fmt: str, capsys: pytest.CaptureFixture[str]) -> list[str]:
    assert main(["--catalogue", "tA/catalogue:tB/catalogue", "lint", "--format", fmt]) == 1
    return [line for line in capsys.readouterr().out.splitlines() if "title" in line and "8 characters" in line]


def test_the_annotation_lands_on_the_file_with_the_fault(layers, monkeypatch, capsys):
    monkeypatch.chdir(layers)
    assert _lint("github", capsys) == [
        f"::error file=tA/{REL},line=3,col=1,title=kb lint schema::title: String should have at least 8 characters"
    ]


def test_the_text_line_names_the_layer_from_the_working_directory(layers, monkeypatch, capsys):
    monkeypatch.chdir(layers)
    assert _lint("text", capsys) == [f"tA/{REL}:3:1: title: String should have at least 8 characters [schema]"]


def test_outside_the_working_directory_the_path_is_absolute(layers, monkeypatch, capsys):
    (layers / "elsewhere").mkdir()
    monkeypatch.chdir(layers / "elsewhere")
    args = ["--catalogue", f"{layers}/tA/catalogue{os.pathsep}{layers}/tB/catalogue", "lint"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert f"{layers}/tA/{REL}:3:1: title: String should have at least 8 characters [schema]" in out
