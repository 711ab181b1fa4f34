"""Pilot tests for narrow terminals: every width down to 20 columns lays the panes out with room for what they
hold, an entry showing or not (a pane squeezed to 0 columns made Textual's option list raise)."""

from __future__ import annotations

import pytest
from helpers import TRACEBACK
from test_flows import bracketed_paste, settle
from textual.widget import Widget

from trainkb.tui import TrainKBApp

D8_LINE = TRACEBACK.splitlines()[-1].removeprefix("[rank1]: ")  # the one line a user pastes
WIDTHS = (99, 80, 60, 50, 40, 34, 30, 25, 20)
# the first and last width of each layout (TrainKBApp.NARROW, STACKED, TOO_NARROW), at the tallest and shortest height
EDGES = ((99, 40), (60, 12), (59, 40), (20, 12))


def _squeezed(app: TrainKBApp) -> list[str]:
    """The shown widgets of the screen with no column to draw in."""
    return [
        repr(widget)
        for widget in app.screen.walk_children(Widget)
        if widget.display and widget.visible and widget.region.height and not widget.region.width
    ]


async def test_a_paste_at_40_columns_opens_the_entry(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(40, 20)) as pilot:
        await bracketed_paste(pilot, app, D8_LINE)
        assert app.current_entry == "D8" and app.is_running
        assert not _squeezed(app)


# each size is a resize and a settle of the whole screen: `make quick` draws each layout's edges, `make test` every size
@pytest.mark.parametrize(
    "sizes",
    [
        pytest.param(EDGES, id="edges"),
        pytest.param([(w, h) for w in WIDTHS for h in (40, 20, 12)], marks=pytest.mark.slow, id="every"),
    ],
)
async def test_every_width_down_to_20_columns_with_an_entry_showing(
    real_app: TrainKBApp, sizes: list[tuple[int, int]]
) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, D8_LINE)
        assert app.current_entry == "D8"
        for width, height in sizes:
            await pilot.resize_terminal(width, height)
            await settle(pilot, app)
            assert app.is_running and app.current_entry == "D8", (width, height)
            assert not _squeezed(app), (width, height, _squeezed(app))
        await pilot.press("f")  # the links, in view and focused, still follow at the narrowest
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.current_entry not in (None, "D8")


async def test_below_20_columns_a_note_stands_in_and_the_entry_comes_back(real_app: TrainKBApp) -> None:
    """At 7 columns or fewer the entry pane's option list was asked its height at width 0 and the app died."""
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, D8_LINE)
        assert app.current_entry == "D8"
        for width, height in ((19, 40), (7, 40), (4, 40), (1, 1), (10, 3)):
            await pilot.resize_terminal(width, height)
            await settle(pilot, app)
            assert app.is_running, (width, height)
            assert app.query_one("#too-narrow").display and not app.query_one("#body").display
        await pilot.resize_terminal(120, 40)
        await settle(pilot, app)
        assert app.is_running and app.current_entry == "D8" and app.query_one("#body").display
        assert not app.query_one("#too-narrow").display


async def test_a_frame_drawn_before_the_layout_follows_does_not_crash(real_app: TrainKBApp, monkeypatch) -> None:
    """Under load a frame can be drawn at the new width before the app's classes follow it: at 120 columns' layout
    squeezed to 7 the entry pane had no column and its option list raised (CI saw it; the note came too late)."""
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, D8_LINE)
        assert app.current_entry == "D8"
        monkeypatch.setattr(app, "_fit", lambda width: None)  # the classes stay those of 120 columns
        for width in (19, 7, 1):
            await pilot.resize_terminal(width, 40)
            await settle(pilot, app)
            assert app.is_running, width
            assert app.query_one("#related").region.width > 0 or not app.query_one("#related").display
