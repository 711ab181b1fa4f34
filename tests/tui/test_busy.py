"""Pilot tests (through Textual's real input parser) for a slow machine: the entry pane never mixes two entries
or shows a stale verdict while a search or a render is under way; the F1 panel, palette and paste box."""

from __future__ import annotations

import asyncio
import threading

import pytest
from helpers import DJANGO, TRACEBACK
from test_flows import bracketed_paste, settle
from textual.widgets import Markdown, Static

from trainkb.tui import TrainKBApp
from trainkb.tui._code import EntryMarkdown
from trainkb.tui._paste import PasteBox

UNRELATED = "ModuleNotFoundError: No module named 'foo_bar_baz'"


def _slow_markdown(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The entry body takes ``seconds`` to render, as Markdown mounting does on a loaded machine."""
    update = EntryMarkdown.update

    def slow(self: Markdown, markdown: str):  # type: ignore[no-untyped-def]
        from textual.await_complete import AwaitComplete

        async def later() -> None:
            await asyncio.sleep(seconds)
            await update(self, markdown)

        return AwaitComplete(later())

    monkeypatch.setattr(EntryMarkdown, "update", slow)


def _text(app: TrainKBApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


async def test_a_new_entry_never_sits_over_the_last_ones_body(app: TrainKBApp, monkeypatch) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_entry("P1")
        await settle(pilot, app)
        _slow_markdown(monkeypatch, 1.5)
        app.jump("D1")
        await pilot.pause(0.5)  # D1's body is still rendering
        doc = app.query_one("#doc", Markdown)
        title = _text(app, "#title")
        assert not ("D1" in title and doc.display and "fp16" in doc.source.lower()), title
        await pilot.press("c")  # never P1's code under D1's title: the copy waits for D1's body
        assert app.clipboard in ("", "model = DDP(model, find_unused_parameters=True)\n")
        assert any("copied as soon as it shows" in str(n.message) for n in app._notifications)
        await pilot.pause(1.5)
        await settle(pilot, app)
        assert "D1" in _text(app, "#title") and doc.display and "find_unused_parameters" in doc.source
        await pilot.press("c")
        assert app.clipboard.startswith("model = DDP(")


async def test_a_new_paste_says_searching_until_its_answer_is_shown(app: TrainKBApp, monkeypatch) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, UNRELATED)
        assert app.query_one("#detail").border_title == "No confident match"
        release = threading.Event()
        search = app.kb.search

        def slow_search(text: str, top: int = 10):  # type: ignore[no-untyped-def]
            release.wait(10)
            return search(text, top)

        monkeypatch.setattr(app.kb, "search", slow_search)
        for event in (
            __import__("textual._xterm_parser")._xterm_parser.XTermParser().feed("\x1b[200~" + TRACEBACK + "\x1b[201~")
        ):
            app._driver.process_message(event)
        detail = app.query_one("#detail")
        for _ in range(300):  # the search is held back: wait for the paste to reach it, however loaded the machine
            await pilot.pause(0.1)
            if "Searching" in str(detail.border_title):
                break
        assert "No confident match" not in str(detail.border_title)
        assert "Searching" in str(detail.border_title) and "Searching" in _text(app, "#title")
        assert not app.query_one("#summary").display
        release.set()
        await settle(pilot, app)
        await pilot.pause(0.2)
        await settle(pilot, app)
        assert app.current_entry == "D1" and detail.border_title == "D1"


# one Pilot app per case: one case in `make quick`, the rest in `make test` too
@pytest.mark.parametrize(
    "focus",
    ["#paste", pytest.param("#results", marks=pytest.mark.slow), pytest.param("#related", marks=pytest.mark.slow)],
)
async def test_f1_fits_at_80_columns_and_names_no_widget_class(app: TrainKBApp, focus: str) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        detail = app.query_one("#detail")
        width = detail.region.width
        app.query_one(focus).focus()
        await pilot.press("f1")
        await pilot.pause(0.3)
        help_panel = app.screen.query_one("KeysHelp")
        assert help_panel.region.width <= 40 and help_panel.region.right == 80
        assert detail.region.width == width  # the entry is not squeezed; the panel lies over it
        described = [str(cell) for cell in help_panel.table.columns[1]._cells]
        heading = next(line for line in described if line.startswith("In the focused"))
        assert heading in {"In the focused paste box", "In the focused matches", "In the focused links"}, heading
        assert not any(name in line for line in described for name in ("OptionList", "ResultsList", "PasteBox"))


# the palette's own paste path is driven in `make quick` by test_paste_anywhere.py's
# test_a_crash_pasted_into_the_palette_closes_it_and_searches; this ranking runs in `make test`
@pytest.mark.slow
async def test_palette_ranks_the_oom_entries_first_for_oom(real_app: TrainKBApp) -> None:
    from textual.command import CommandList

    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"oom")
        options = app.screen.query_one(CommandList)
        for _ in range(50):  # the palette fills in as its provider yields, slowly on a loaded machine
            await pilot.pause(0.1)
            if options.option_count >= 20:
                break
        await pilot.pause(0.3)
        top = [str(options.get_option_at_index(i).prompt).split()[0] for i in range(6)]
        assert all(entry_id[0] == "M" and entry_id[1:].isdigit() for entry_id in top), top


async def test_a_paste_nothing_matched_reads_from_its_start(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, DJANGO)
        await pilot.pause(0.2)
        box = app.query_one("#paste", PasteBox)
        assert app.current_response is not None and not app.current_response.results
        assert box.max_scroll_y > 0  # the paste is longer than the box
        assert box.scroll_offset == (0, 0)
        assert "File" in "".join(s.text for s in box.render_line(0)._segments)
