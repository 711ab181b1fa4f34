"""The TUI is tested against a small fixed catalogue so snapshots change only when the UI does, and against the
bundled one where a real record's text matters. Each knowledge base is loaded once per session: the app only
reads it, and a test that patches it (monkeypatch) has the patch undone before the next test."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainkb.catalogue import find_catalogue
from trainkb.tui import KnowledgeBase, TrainKBApp

CATALOGUE = Path(__file__).parent / "catalogue"


def _load(catalogue: Path, cache: Path) -> KnowledgeBase:
    """Load with the index cache in ``cache``, none of it the user's (the app reads no cache after loading)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(cache))
        return KnowledgeBase.load(catalogue)


@pytest.fixture(scope="session")
def _small_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return _load(CATALOGUE, tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="session")
def _bundled_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return _load(find_catalogue(), tmp_path_factory.mktemp("cache"))


@pytest.fixture
def kb(_small_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> KnowledgeBase:
    monkeypatch.delenv("TRAINKB_SITE_URL", raising=False)
    return _small_kb


@pytest.fixture
def app(kb: KnowledgeBase) -> TrainKBApp:
    return TrainKBApp(kb, blink=False)


@pytest.fixture
def real_app(_bundled_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch) -> TrainKBApp:
    """The app over the bundled catalogue."""
    monkeypatch.delenv("TRAINKB_SITE_URL", raising=False)
    return TrainKBApp(_bundled_kb, blink=False)
