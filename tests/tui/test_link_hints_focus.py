"""One key follows a link, and after every move (a paste, a followed link, Back, Forward) focus sits where the
footer's keys act, in plain view. Keys go through Textual's real input parser, as a terminal sends them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import DJANGO, TRACEBACK
from test_flows import bracketed_paste, palette_jump, settle, visible
from textual.widgets import OptionList

from trainkb._present import diagnosis
from trainkb.tui import TrainKBApp
from trainkb.tui._hints import HINTS
from trainkb.tui._paste import PasteBox

ROOT = Path(__file__).resolve().parents[2]
SIGKILL = ROOT / "tests/triage/fixtures/nccl/sigkill-n2-r1/combined.log"  # several causes print it
D1_CODE = "model = DDP(model, find_unused_parameters=True)\n"


def footer(app: TrainKBApp) -> dict[str, str]:
    return {key.description: key.key_display for key in app.query("FooterKey")}


def focused_in_view(app: TrainKBApp) -> bool:
    """The focused widget is on screen: not a list scrolled out of its pane."""
    widget = app.focused
    assert widget is not None
    return widget.region.height > 0 and widget.region.bottom <= app.size.height - 1


async def test_a_links_letter_follows_it_in_one_key_and_back_returns(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        assert app.current_entry == "D1" and app.focused.id == "results"
        assert footer(app).get("Follow") == "a-z"
        related = app.query_one("#related", OptionList)
        assert str(related.get_option_at_index(0).prompt).startswith(f"{HINTS[0]} ")  # the letter is shown
        await pilot.press(HINTS[0])
        await settle(pilot, app)
        assert app.current_entry == "D2" and app.focused.id == "detail" and focused_in_view(app)
        await pilot.press("d")  # the footer's keys act on the entry now shown
        await pilot.pause()
        assert app.clipboard.startswith("**D2: ")
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D1" and app.focused.id == "detail" and focused_in_view(app)
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == D1_CODE and app.query_one("#paste", PasteBox).text == TRACEBACK


async def test_a_letter_without_a_link_does_nothing(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        assert app.query_one("#related", OptionList).option_count == 1
        await pilot.press(HINTS[1])
        await settle(pilot, app)
        assert app.current_entry == "D1" and app.history == ["D1"]
        assert "q" not in HINTS and not {"c", "d", "f", "o"} & set(HINTS)  # no letter shadows another key


# a Pilot app of its own: back and forward are test_flows.py's test_follow_link_back_and_forward, back
# after a followed link test_a_links_letter_follows_it_in_one_key_and_back_returns (both quick)
@pytest.mark.slow
async def test_following_from_the_links_list_back_and_forward_focus_the_entry(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.press("f")
        await settle(pilot, app)
        assert app.focused.id == "related" and visible(app, "#related")
        await pilot.press("enter")
        await settle(pilot, app)
        detail = app.query_one("#detail")
        assert app.current_entry == "D2" and app.focused is detail and detail.scroll_offset.y == 0
        assert detail.styles.border_top[0] == "heavy"  # the focused pane is the one with the heavy border
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D1" and app.focused is detail and focused_in_view(app)
        await pilot.press("right_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D2" and app.focused is detail and focused_in_view(app)


# a Pilot app of its own: the same log's candidates take the focus in test_paste_anywhere.py's
# test_enter_after_an_unanswered_paste_opens_the_first_candidate[closest] (quick)
@pytest.mark.slow
async def test_a_paste_without_one_answer_moves_focus_to_the_candidates(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        before = app.current_entry
        assert before is not None
        log = SIGKILL.read_text(encoding="utf-8")
        await bracketed_paste(pilot, app, log)
        response = app.current_response
        assert response is not None and response.status != "answered"
        assert app.focused.id == "results" and app.current_entry is None  # the last answer is gone
        await pilot.press("c", HINTS[0])  # the keys type nothing, and copy no stale entry
        await settle(pilot, app)
        assert app.query_one("#paste", PasteBox).text == log and app.clipboard == ""
        assert app.current_entry is None
        await pilot.press("d")  # what the pane shows now: this paste's candidates, not the last answer
        await pilot.pause()
        assert app.clipboard == diagnosis(response, lambda _: None) and f"**{before}:" not in app.clipboard
        await pilot.press("left_square_bracket")  # Back: the entry read before this paste
        await settle(pilot, app)
        assert app.current_entry == before and app.focused.id == "detail"


async def test_every_footer_key_fits_at_80_columns(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        keys = list(app.query("FooterKey"))
        assert {"Copy fix", "Copy diagnosis", "Follow", "Back", "New paste"} <= {k.description for k in keys}
        assert all(key.region.right <= 80 for key in keys), [(k.description, k.region) for k in keys]
        await pilot.resize_terminal(120, 40)  # wide again: room for the palette key and the spacing
        await pilot.pause(0.3)
        assert "palette" in {k.description for k in app.query("FooterKey")}


# a Pilot app of its own: focus after a palette jump is test_paste_focus_copy.py's
# test_palette_jump_leaves_focus_where_the_footer_keys_act, a letter following its link
# test_a_links_letter_follows_it_in_one_key_and_back_returns (both quick)
@pytest.mark.slow
async def test_after_a_palette_jump_a_letter_follows_and_in_the_paste_box_it_types(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await palette_jump(pilot, app, "D1")
        await pilot.pause(0.2)
        assert app.current_entry == "D1" and app.focused.id == "detail"
        await pilot.press(HINTS[0])
        await settle(pilot, app)
        assert app.current_entry == "D2" and app.focused.id == "detail"
        await pilot.press("escape", HINTS[0])  # the paste box takes the letter as text
        await settle(pilot, app)
        assert app.query_one("#paste", PasteBox).text == HINTS[0]
        assert app.focused.id == "paste"


async def test_a_traceback_from_another_stack_is_named_and_opens_nothing(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await bracketed_paste(pilot, app, DJANGO)
        response = app.current_response
        assert response is not None and response.results == [] and app.current_entry is None
        assert "`django`" in (response.advice or "")
        assert "django" in str(app.query_one("#summary").render()) and visible(app, "#summary")
        assert app.focused.id == "results"
        shown = {k.description for k in app.query("FooterKey")}
        assert not {"Copy fix", "Copy diagnosis", "Follow"} & shown  # nothing to copy or follow: not offered
