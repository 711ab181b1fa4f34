"""The TUI is tested against a small fixed catalogue so snapshots change only when the UI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainkb.tui import KnowledgeBase, TrainKBApp

CATALOGUE = Path(__file__).parent / "catalogue"


@pytest.fixture
def kb(tmp_path, monkeypatch) -> KnowledgeBase:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINKB_SITE_URL", raising=False)
    return KnowledgeBase.load(CATALOGUE)


@pytest.fixture
def app(kb) -> TrainKBApp:
    return TrainKBApp(kb, blink=False)
