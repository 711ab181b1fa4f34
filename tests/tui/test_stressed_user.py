"""Pilot tests (through Textual's real input parser) for what a user under pressure still hit: a bar that looked
certain at medium, a paste box showing only a time stamp, keys and toasts that said nothing true, an empty Tab
stop, cut rank lines, and a followed link marked as a guess."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import DJANGO, TRACEBACK
from test_flows import bracketed_paste, settle
from textual.widgets import OptionList, Static

from trainkb._present import view
from trainkb.tui import TrainKBApp
from trainkb.tui._help import KeysHelp
from trainkb.tui._paste import PasteBox

ROOT = Path(__file__).resolve().parents[2]
INPLACE = ROOT / "tests/fixtures/oom/a3_inplace.txt"  # answered at medium with a score of 100
FRAGMENTED = ROOT / "tests/fixtures/oom/m4_fragmented.txt"  # answered by M4, whose contrasts are its runners-up
NCCL_HANG = ROOT / "tests/triage/fixtures/nccl/hang-n2-r1/combined.log"
NCCL_EXIT = ROOT / "tests/triage/fixtures/nccl/exit-n2-r1/combined.log"


def _text(app: TrainKBApp, selector: str) -> str:
    """What a widget shows on screen now, row by row."""
    widget = app.query_one(selector)
    return "\n".join(widget.render_line(y).text for y in range(widget.size.height))


async def test_the_score_bar_is_full_only_for_a_high_answer(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, INPLACE.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and view(response).rows[0].label == "medium" and response.results[0].score >= 99
        first = app.query_one("#results", OptionList).get_option(response.results[0].id)
        row = str(first.prompt)
        assert "medium" in row and "████░░░░" in row and "█████" not in row


# a Pilot app of its own: the marked line stays in view in the collapsed paste box at 80x24 in test_flows.py's
# test_fix_is_visible_at_80x24 (quick)
@pytest.mark.slow
async def test_the_paste_box_shows_the_marked_log_lines_message_at_80_columns(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, NCCL_HANG.read_text(encoding="utf-8"))
        box = app.query_one("#paste", PasteBox)
        assert box.evidence_row is not None and box.has_class("-collapsed")
        shown = " ".join(_text(app, "#paste").split())
        assert "Watchdog caught" in shown and "▶" in shown


async def test_esc_closes_the_keys_panel(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.query(KeysHelp)
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query(KeysHelp)
        await pilot.press("escape")  # with the panel gone, Esc goes back to the paste box as before
        await pilot.pause()
        assert app.focused is app.query_one("#paste")


# a Pilot app of its own: the keys offered follow what the paste found in test_keys_while_loading.py's
# test_f1_shows_quit_at_80x24_and_lists_no_copy_or_follow_over_a_differential (quick)
@pytest.mark.slow
async def test_no_copy_keys_in_the_footer_when_nothing_matched(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, DJANGO)
        assert app.current_response is not None and not app.current_response.results
        keys = {key.description for key in app.query("FooterKey")}
        assert not keys & {"Copy fix", "Copy diagnosis", "Follow"}, keys
        await bracketed_paste(pilot, app, TRACEBACK)  # an answer brings them back
        keys = {key.description for key in app.query("FooterKey")}
        assert {"Copy fix", "Copy diagnosis"} <= keys


async def test_a_new_paste_clears_the_last_answers_toast(app: TrainKBApp, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TrainKBApp, "NOTIFICATION_TIMEOUT", 600)  # a loaded machine must not let it expire first
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard and "Copied D1" in str(list(app._notifications)[-1].message)
        await bracketed_paste(pilot, app, DJANGO)
        assert not [n for n in app._notifications if "Copied" in str(n.message)]


async def test_every_tab_stop_shows_it_has_focus(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, DJANGO)
        for _ in range(6):
            await pilot.press("tab")
            await pilot.pause()
            focused = app.focused
            assert focused is not None and focused.display and focused.region.height > 0, focused


# a Pilot app of its own: the ranks panel's lines and next-time steps are test_paste_focus_copy.py's
# test_ranks_panel_shows_every_line_and_the_next_time_steps (quick)
@pytest.mark.slow
async def test_rank_lines_are_cut_at_a_word_and_next_time_has_no_backticks(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        for log in (NCCL_HANG, NCCL_EXIT):
            await bracketed_paste(pilot, app, log.read_text(encoding="utf-8"))
            triage = app.kb.triage(log.read_text(encoding="utf-8"))
            assert triage is not None
            text = app.query_one("#triage").render_text().plain
            for verdict in triage.ranks:
                what = verdict.error if verdict.error and verdict.how != "silent" else verdict.description
                words = " ".join(what.split())
                line = next(row for row in text.splitlines() if row.startswith(f"rank {verdict.rank} "))
                shown = line.split(verdict.role, 1)[1].strip().split("  → ")[0]
                if shown.endswith(" …"):  # cut: only whole words of the error
                    kept = shown.removesuffix(" …")
                    assert words.startswith(kept) and words[len(kept)] == " ", (kept, words)
                else:
                    assert shown == words
        assert any("`" in tip for tip in triage.collect)  # the exit log's steps name commands in backticks
        assert "Next time:" in text and "`" not in text


# a Pilot app of its own: a followed link opens an entry, not a guess, in test_paste_focus_copy.py's
# test_an_unconfirmed_candidate_is_marked_until_the_user_moves_on and test_f_then_enter_follows_a_related_entry (quick)
@pytest.mark.slow
async def test_a_link_followed_from_an_answer_is_an_entry_not_a_guess(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, FRAGMENTED.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and view(response).kind == "answer" and app.current_entry == "M4"
        runners_up = [r.id for r in response.results[1:]]
        related = app.query_one("#related", OptionList)
        targets = [related.get_option_at_index(i).id.split("|", 1)[1] for i in range(related.option_count)]
        target = next(t for t in targets if t in runners_up)
        await pilot.press("f")
        related.highlighted = targets.index(target)
        await pilot.press("enter")
        await settle(pilot, app)
        detail = app.query_one("#detail")
        assert app.current_entry == target and "unconfirmed" not in detail.border_title
        assert not str(app.query_one("#title", Static).render()).startswith("UNCONFIRMED")
        results = app.query_one("#results", OptionList)  # picked from the matches, a runner-up is still a guess
        results.focus()
        results.highlighted = results.get_option_index(target)
        await settle(pilot, app)
        assert "unconfirmed" in detail.border_title


async def test_m1_lists_each_related_entry_once(real_app: TrainKBApp) -> None:
    app = real_app
    related = app.kb.related("M1")
    assert ("contrast", "M2") in related and ("linked from", "M8") in related
    assert [target for target, n in Counter(t for _, t in related).items() if n > 1] == []
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_entry("M1")
        await settle(pilot, app)
        shown = app.query_one("#related", OptionList)
        assert shown.option_count == len(related)
