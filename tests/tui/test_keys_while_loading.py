"""Pilot tests (through Textual's real input parser) for the footer's keys right after a paste and while the entry
pane loads: a key the footer shows does what it says, and an entry is marked unconfirmed only when it was picked
from a differential's candidates."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DJANGO, TRACEBACK
from test_busy import _slow_markdown
from test_flows import bracketed_paste, palette_jump, settle
from textual._xterm_parser import XTermParser
from textual.widgets import Static

from trainkb._present import view
from trainkb.search import MAX_CHARS, paste_tail
from trainkb.tui import TrainKBApp
from trainkb.tui._help import KeysHelp
from trainkb.tui._paste import PasteBox

ROOT = Path(__file__).resolve().parents[2]
SIGKILL = ROOT / "tests/triage/fixtures/nccl/sigkill-n2-r1/combined.log"  # a differential: D25 or M8
D1_FIX = "model = DDP(model, find_unused_parameters=True)\n"


def _type(app: TrainKBApp, keys: str) -> None:
    """Bytes from the terminal, parsed as real input, with no pause for the app to catch up."""
    for event in XTermParser().feed(keys):
        app._driver.process_message(event)


def _footer(app: TrainKBApp) -> set[str]:
    return {key.description for key in app.query("FooterKey")}


# a Pilot app of its own: a copy asked for before the entry shows is made once it shows in
# test_c_while_the_entry_loads_copies_it_once_shown (quick)
@pytest.mark.slow
async def test_c_right_after_a_paste_copies_the_new_fix_and_types_nothing(
    app: TrainKBApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(TrainKBApp, "NOTIFICATION_TIMEOUT", 600)
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, DJANGO)
        await pilot.press("ctrl+l")  # in the paste box, as after typing in it
        await pilot.pause()
        _type(app, "\x1b[200~" + TRACEBACK + "\x1b[201~c")  # `c` in the same read as the paste
        await settle(pilot, app)
        await pilot.pause(0.2)
        await settle(pilot, app)
        assert app.query_one("#paste", PasteBox).text == TRACEBACK
        assert app.current_entry == "D1" and app.clipboard == D1_FIX
        assert any("copied as soon as it shows" in str(n.message) for n in app._notifications)


async def test_c_while_the_entry_loads_copies_it_once_shown(app: TrainKBApp, monkeypatch: pytest.MonkeyPatch) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, DJANGO)
        _slow_markdown(monkeypatch, 1.0)
        _type(app, "\x1b[200~" + TRACEBACK + "\x1b[201~")
        for _ in range(100):  # until the match shows and its entry is loading
            await pilot.pause(0.05)
            if app.query_one("#detail").border_title.startswith("Loading"):
                break
        await pilot.pause()
        assert "Copy fix" in _footer(app)
        _type(app, "c")
        await pilot.pause()
        assert app.clipboard == ""  # nothing of the last paste's answer
        await pilot.pause(1.2)
        await settle(pilot, app)
        assert app.clipboard == D1_FIX


# a Pilot app of its own: a candidate picked with Enter is marked unconfirmed and a move elsewhere clears it in
# test_paste_focus_copy.py's test_an_unconfirmed_candidate_is_marked_until_the_user_moves_on (quick)
@pytest.mark.slow
async def test_only_an_entry_picked_from_the_candidates_is_marked_unconfirmed(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, SIGKILL.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and view(response).kind == "differential"
        candidates = [r.id for r in response.results]
        assert "D8" not in candidates[:3] and candidates[0] in ("D25", "M8")
        detail = app.query_one("#detail")
        for target in ("D8", candidates[1]):  # not a candidate, and a candidate reached by Ctrl+P
            await palette_jump(pilot, app, target)
            assert app.current_entry == target, target
            assert "unconfirmed" not in detail.border_title, target
            assert not str(app.query_one("#title", Static).render()).startswith("UNCONFIRMED")
        app.query_one("#results").focus()  # the candidates list, its first highlighted: Enter opens it
        await pilot.pause()
        _type(app, "\r")
        await settle(pilot, app)
        assert app.current_entry == candidates[0] and "unconfirmed" in detail.border_title


async def test_enter_on_the_entry_on_screen_keeps_it_on_screen(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        detail = app.query_one("#detail")
        blocks = list(app.query_one("#doc").children)
        assert app.current_entry == "D1" and app.focused is app.query_one("#results") and blocks
        _type(app, "\r")  # Enter on the match whose entry is shown
        await pilot.pause()
        assert detail.border_title == "D1"
        await settle(pilot, app)
        assert list(app.query_one("#doc").children) == blocks  # the same widgets: nothing was rendered again
        assert app.focused is detail


async def test_f1_shows_quit_at_80x24_and_lists_no_copy_or_follow_over_a_differential(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, SIGKILL.read_text(encoding="utf-8"))
        assert app.current_response is not None and view(app.current_response).kind == "differential"
        _type(app, "\x1bOP")  # F1
        await pilot.pause()
        await pilot.pause()
        panel = app.screen.query_one(KeysHelp)
        shown = "\n".join(panel.render_line(y).text for y in range(min(panel.size.height, app.size.height - 1)))
        assert "Quit" in shown
        assert "Copy fix" not in shown and "Follow the link" not in shown
        assert "Copy diagnosis" in shown  # the differential's summary is there to copy


async def test_the_ranks_panel_says_a_killed_rank_was_killed(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, SIGKILL.read_text(encoding="utf-8"))
        subtitle = str(app.query_one("#triage").border_subtitle)
        assert "killed by a signal" in subtitle and "own-error" not in subtitle, subtitle


# a Pilot app of its own: a paste over MAX_CHARS cut to its tail and searched is test_flows.py's
# test_huge_paste_keeps_the_tail_and_is_searched (quick)
@pytest.mark.slow
async def test_a_paste_cut_to_its_tail_says_so_and_numbers_lines_as_the_users(app: TrainKBApp) -> None:
    steps = "".join(f"[rank0]: step {n} loss 0.{n % 97:02d}\n" for n in range(9000))
    text = steps + TRACEBACK
    assert len(text) > MAX_CHARS
    kept, dropped = paste_tail(text)
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, text)
        box = app.query_one("#paste", PasteBox)
        assert box.text == kept and dropped > 0
        assert box.line_number_start == dropped + 1 and f"{dropped} before cut" in str(box.border_title)
        assert app.current_entry == "D1"
        await pilot.press("ctrl+n")
        await settle(pilot, app)  # clearing fires the box's change handlers: wait for them and any worker
        assert box.line_number_start == 1 and "cut" not in str(box.border_title)


# a Pilot app of its own: the unconfirmed mark is test_paste_focus_copy.py's
# test_an_unconfirmed_candidate_is_marked_until_the_user_moves_on, back and forward test_flows.py's
# test_follow_link_back_and_forward (both quick)
@pytest.mark.slow
async def test_back_and_forward_keep_a_picked_candidate_a_candidate(real_app: TrainKBApp) -> None:
    """Back from a candidate returns to the differential it was picked from; Forward opens it marked unconfirmed
    again, and a second Back reaches the entry read before the paste."""
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        before = app.current_entry
        assert before is not None
        await bracketed_paste(pilot, app, SIGKILL.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and view(response).kind == "differential"
        first = response.results[0].id
        detail = app.query_one("#detail")
        _type(app, "\r")  # the candidates list has focus, its first highlighted
        await settle(pilot, app)
        assert app.current_entry == first and "unconfirmed" in detail.border_title
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        assert app.current_entry is None and "unconfirmed" not in detail.border_title  # the differential again
        await pilot.press("right_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == first and "unconfirmed" in detail.border_title
        for _ in range(2):
            await pilot.press("left_square_bracket")
            await settle(pilot, app)
        assert app.current_entry == before and detail.border_title == before
