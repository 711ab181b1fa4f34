"""The TUI is tested against a small fixed catalogue so snapshots change only when the UI does."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainkb.tui import KnowledgeBase, TrainKBApp

CATALOGUE = Path(__file__).parent / "catalogue"

TRACEBACK = """\
Epoch 0:  12%|█▏        | 12/100 [00:03<00:22,  3.9it/s]
[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/me/train.py", line 88, in <module>
[rank1]:     loss = model(batch).sum()
[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.
"""


@pytest.fixture
def kb(tmp_path, monkeypatch) -> KnowledgeBase:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TRAINKB_SITE_URL", raising=False)
    return KnowledgeBase.load(CATALOGUE)


@pytest.fixture
def app(kb) -> TrainKBApp:
    return TrainKBApp(kb, blink=False)
