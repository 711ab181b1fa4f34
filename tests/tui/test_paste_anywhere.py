"""Pilot tests (through Textual's real input parser): after a paste with no single answer, Enter opens the first
candidate; a crash pasted while Browse or the command palette is open leaves it and runs as a new search."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import TRACEBACK
from test_flows import bracketed_paste, settle
from textual.command import CommandPalette
from textual.widgets import ContentSwitcher, Input, OptionList, Static

from trainkb.tui import TrainKBApp
from trainkb.tui._entry import EMPTY
from trainkb.tui._paste import PasteBox

ROOT = Path(__file__).resolve().parents[2]
GLOO_HANG = ROOT / "tests/triage/fixtures/gloo/hang-n4-r1/combined.log"  # a differential
NCCL_SIGKILL = ROOT / "tests/triage/fixtures/nccl/sigkill-n2-r1/combined.log"  # no confident match


# one Pilot app per case: the closest entries in `make quick`; Enter on a differential's first candidate is also
# test_paste_focus_copy.py's test_an_unconfirmed_candidate_is_marked_until_the_user_moves_on (quick)
@pytest.mark.parametrize(
    "log", [pytest.param(GLOO_HANG, marks=pytest.mark.slow), NCCL_SIGKILL], ids=["differential", "closest"]
)
async def test_enter_after_an_unanswered_paste_opens_the_first_candidate(real_app: TrainKBApp, log: Path) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, log.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and response.status != "answered" and response.results
        results = app.query_one("#results", OptionList)
        assert app.focused is results and results.highlighted is not None
        assert app.current_entry is None  # the pane still shows the candidates, not one of them
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.current_entry == response.results[0].id
        assert app.focused is app.query_one("#detail")


# one Pilot app per case: one case in `make quick`, the rest in `make test` too
@pytest.mark.parametrize(
    "eol", [pytest.param("\n", marks=pytest.mark.slow), "\r"], ids=["LF", "CR"]
)  # most terminals paste a line break as CR
async def test_a_crash_pasted_into_browse_leaves_it_and_searches(app: TrainKBApp, eol: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, "ModuleNotFoundError: No module named 'foo_bar_baz'")
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert app.focused is app.query_one("#filter")
        await bracketed_paste(pilot, app, TRACEBACK.replace("\n", eol))
        assert app.query_one("#switcher", ContentSwitcher).current == "search-pane"
        assert app.query_one("#paste", PasteBox).text.splitlines() == TRACEBACK.splitlines()
        assert app.query_one("#filter", Input).value == ""
        assert app.current_entry == "D1" and app.focused is app.query_one("#results")


async def test_one_line_pasted_into_the_browse_filter_filters(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+b")
        await pilot.pause()
        await bracketed_paste(pilot, app, "watchdog")
        assert app.query_one("#filter", Input).value == "watchdog"
        assert app.query_one("#switcher", ContentSwitcher).current == "browse-pane"
        assert app.query_one("#paste", PasteBox).text == ""


async def test_a_crash_pasted_into_the_palette_closes_it_and_searches(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause(0.3)
        assert isinstance(app.screen, CommandPalette)
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.pause(0.2)
        assert not isinstance(app.screen, CommandPalette)
        assert app.query_one("#paste", PasteBox).text == TRACEBACK
        assert app.current_entry == "D1" and app.focused is app.query_one("#results")


async def test_a_new_paste_clears_the_answer_of_the_last_one(app: TrainKBApp) -> None:
    """Ctrl+N after a paste nothing answered: the closest entries of a paste that is gone are not left on screen."""
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, "ModuleNotFoundError: No module named 'foo_bar_baz'")
        detail = app.query_one("#detail")
        assert detail.border_title == "No confident match"
        await pilot.press("ctrl+n")
        await settle(pilot, app)
        assert detail.border_title == "Entry"
        assert str(app.query_one("#title", Static).render()) == EMPTY
        assert not app.query_one("#doc").display and not app.query_one("#summary").display
