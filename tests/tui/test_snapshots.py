"""SVG snapshots of the main screens at 80×24 and 120×40 (cursor blink off).

`make snapshots` rewrites them after a deliberate UI change; look at the SVGs before committing.
"""

from __future__ import annotations

import pytest
from helpers import TRACEBACK
from textual._xterm_parser import XTermParser


async def _paste(pilot):
    """A bracketed paste, as a terminal sends it: the box collapses and the matches take focus."""
    for event in XTermParser().feed("\x1b[200~" + TRACEBACK + "\x1b[201~"):
        pilot.app._driver.process_message(event)
    for _ in range(4):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.5)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_empty(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_traceback_pasted(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, run_before=_paste)


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_browse(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, press=["ctrl+b"])
