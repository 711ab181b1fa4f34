"""SVG snapshots of the main screens at 80×24 and 120×40 (cursor blink off)."""

from __future__ import annotations

import pytest
from conftest import TRACEBACK


async def _paste(pilot):
    pilot.app.query_one("#paste").load_text(TRACEBACK)
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.3)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_empty(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_traceback_pasted(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, run_before=_paste)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_browse(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, press=["ctrl+b"])
