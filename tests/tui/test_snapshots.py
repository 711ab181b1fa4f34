"""SVG snapshots of the main screens at 80×24 and 120×40 (cursor blink off).

`make snapshots` rewrites them after a deliberate UI change; look at the SVGs before committing. `make quick`
compares the 80×24 ones (the tighter fit); `make test` compares both sizes.
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


@pytest.mark.parametrize("size", [(80, 24), pytest.param((120, 40), marks=pytest.mark.slow)], ids=["80x24", "120x40"])
def test_empty(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size)


@pytest.mark.parametrize("size", [(80, 24), pytest.param((120, 40), marks=pytest.mark.slow)], ids=["80x24", "120x40"])
def test_traceback_pasted(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, run_before=_paste)


async def _browse(pilot):
    """Ctrl+B, then wait for the filter box to take focus (its cursor is part of the picture)."""
    await pilot.press("ctrl+b")
    for _ in range(40):  # under load the focus can land after the first frames
        await pilot.pause(0.05)
        focused = pilot.app.focused
        if focused is not None and focused.id == "filter":
            break
    await pilot.pause(0.3)


@pytest.mark.parametrize("size", [(80, 24), pytest.param((120, 40), marks=pytest.mark.slow)], ids=["80x24", "120x40"])
def test_browse(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, run_before=_browse)


async def _five_oom_candidates(pilot):
    """The real OOM message pasted as a terminal sends it, then the M1–M5 differential it belongs to (real records)."""
    from test_differential_fits import _differential, _oom_line

    for event in XTermParser().feed("\x1b[200~" + _oom_line() + "\x1b[201~"):
        pilot.app._driver.process_message(event)
    for _ in range(4):
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
    await pilot.app.query_one("#detail").show_diagnosis(_differential(["M1", "M2", "M3", "M4", "M5"]))
    await pilot.pause(0.5)


def test_five_candidate_differential(snap_compare, real_app):
    """A differential of ANSWER.max_candidates real entries at 120×40: every head, sign and fix on screen (the real
    catalogue's M1–M5: `make snapshots` after their tells or fixes change)."""
    assert snap_compare(real_app, terminal_size=(120, 40), run_before=_five_oom_candidates)


async def _ranks(pilot):
    """A real two-rank torchrun log whose Root Cause names a victim: every rank line and the next-time steps."""
    from pathlib import Path

    log = Path(__file__).resolve().parents[1] / "triage/fixtures/nccl/exit-n2-r1/combined.log"
    for event in XTermParser().feed("\x1b[200~" + log.read_text(encoding="utf-8") + "\x1b[201~"):
        pilot.app._driver.process_message(event)
    for _ in range(40):  # under load the search can land late, and would then take focus back
        await pilot.pause(0.05)
        await pilot.app.workers.wait_for_complete()
        if pilot.app.current_response is not None and pilot.app.query_one("#triage").display:
            break
    await pilot.pause(0.3)
    pilot.app.query_one("#triage").focus()
    await pilot.pause(0.5)


@pytest.mark.parametrize("size", [(80, 24), pytest.param((120, 40), marks=pytest.mark.slow)], ids=["80x24", "120x40"])
def test_ranks_panel(snap_compare, app, size):
    assert snap_compare(app, terminal_size=size, run_before=_ranks)
