"""Pilot tests, one per flow: paste → results → open → follow link → back → copy → palette jump."""

from __future__ import annotations

import pytest
from helpers import TRACEBACK
from textual.widgets import Input, OptionList, Static

from trainkb._present import HEADLINES
from trainkb.search import MAX_CHARS
from trainkb.tui import TrainKBApp
from trainkb.tui._driver import PasteParser
from trainkb.tui._paste import PasteBox


async def settle(pilot, app):
    """Until the search and the entry render it starts (a worker started by the first) are both done."""
    for _ in range(2):
        await pilot.pause()
        await app.workers.wait_for_complete()
    await pilot.pause()


async def paste(pilot, app, text):
    app.query_one("#paste", PasteBox).load_text(text)
    await settle(pilot, app)


async def bracketed_paste(pilot, app, text):
    """What a terminal sends for a paste, through the same parser and driver hook as real input."""
    for event in PasteParser().feed("\x1b[200~" + text + "\x1b[201~"):
        app._driver.process_message(event)
    await settle(pilot, app)
    await pilot.pause()
    await settle(pilot, app)


def visible(app, selector):
    """True when the widget is on screen, unscrolled into view: inside its pane and the terminal."""
    widget = app.query_one(selector)
    region = widget.region
    return widget.display and region.height > 0 and region.bottom <= app.size.height - 1


async def test_bracketed_paste_lands_once_and_moves_to_the_fix(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        box = app.query_one("#paste", PasteBox)
        assert box.text == TRACEBACK  # once, not twice
        assert app.current_entry == "D1"
        assert app.focused.id == "results" and box.has_class("-collapsed")
        assert "find_unused_parameters=True" in str(app.query_one("#summary", Static).render())
        assert visible(app, "#summary")


async def test_fix_is_visible_at_80x24(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        assert app.current_entry == "D1" and app.query_one("#body").has_class("-narrow")
        assert visible(app, "#summary") and visible(app, "#title")
        box = app.query_one("#paste", PasteBox)  # collapsed, and still showing the marked line
        top = box.scroll_offset.y
        row = box.wrapped_document.location_to_offset((box.evidence_row, 0)).y  # the box soft-wraps
        assert box.has_class("-collapsed") and top <= row < top + box.scrollable_content_region.height


async def test_evidence_is_marked_not_selected_and_keys_do_not_type(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        box = app.query_one("#paste", PasteBox)
        assert box.selection.is_empty
        assert box.evidence_row == 4  # "[rank1]: RuntimeError: Expected ..."
        for key in ("c", "question_mark", "f1", "left_square_bracket", "right_square_bracket", "o", "slash"):
            await pilot.press(key)
            await pilot.pause()
        assert box.text == TRACEBACK and app.clipboard.startswith("model = DDP(")
        assert app.focused.id == "find"


async def test_printable_keys_type_in_the_paste_box_and_bind_nothing(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        box = app.query_one("#paste", PasteBox)
        box.focus()
        box.move_cursor(box.document.end)
        await pilot.press("c", "o", "slash", "question_mark", "left_square_bracket")
        await pilot.pause()
        assert box.text.endswith("co/?[")
        assert {"c", "o"}.isdisjoint(app.screen.active_bindings)  # nor does the footer offer them here
        assert app.clipboard == "" and not app.screen.query("KeysHelp")
        assert not app.query_one("#find", Input).has_class("visible")


async def test_enter_on_a_match_focuses_the_entry_and_ctrl_n_clears(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.focused.id == "detail"
        await pilot.press("ctrl+n")
        await settle(pilot, app)
        box = app.query_one("#paste", PasteBox)
        assert box.text == "" and app.focused is box and not box.has_class("-collapsed")
        assert app.current_response is None


async def test_f1_lists_the_apps_keys_first(app):
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump("D1")  # with an entry shown, where its copy and link keys act
        await settle(pilot, app)
        await pilot.press("f1")
        await pilot.pause()
        described = [str(cell) for cell in app.screen.query_one("KeysHelp").table.columns[1]._cells]
        assert described[0] == "trainkb"
        apps = described[1 : described.index("")]  # the app's section, before the focused box's
        assert {"Copy fix", "Copy diagnosis", "Show the links", "New paste", "Find in entry", "Back"} <= set(apps)
        assert "Copy the n-th fix block" in apps and "Copy fix block 2" not in apps
        assert any(d.startswith("Follow the link showing that key") for d in apps) and "Follow" not in apps  # one row
        assert any(line.startswith("In the focused") for line in described)
        await pilot.press("f1")
        await pilot.pause()
        assert not app.screen.query("KeysHelp")


async def test_paste_ranks_and_opens_the_top_entry(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        results = app.query_one("#results", OptionList)
        assert results.get_option_at_index(0).id == "D1"
        assert app.current_entry == "D1"
        assert app.query_one("#detail").border_title == "D1"
        # the matched input line is marked (not selected) in the paste box
        box = app.query_one("#paste", PasteBox)
        assert box.document.get_line(box.evidence_row).startswith("[rank1]: RuntimeError: Expected")


async def test_abstains_plainly_on_unrelated_text(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, "ModuleNotFoundError: No module named 'foo_bar_baz'")
        results = app.query_one("#results", OptionList)
        assert app.current_response.abstained
        # nothing close: never "closest entries" over an empty list
        assert str(results.get_option_at_index(0).prompt) == HEADLINES["empty"]


async def test_follow_link_back_and_forward(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        related = app.query_one("#related", OptionList)
        await settle(pilot, app)
        related.focus()
        related.highlighted = 0
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.current_entry == "D2"
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D1"
        await pilot.press("right_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D2"
        assert app.history == ["D1", "D2"]


@pytest.mark.slow  # a Pilot app of its own: back and forward stay in quick (test_follow_link_back_and_forward)
async def test_textual_back_still_pops_a_screen(app):
    """Entry history has its own actions, so Textual's `app.back` (pop the screen) keeps working."""
    from textual.screen import Screen

    async with app.run_test(size=(120, 40)) as pilot:
        app.open_entry("D1")
        await settle(pilot, app)
        app.open_entry("D2")
        await settle(pilot, app)
        await app.push_screen(Screen())
        assert len(app.screen_stack) == 2
        await app.run_action("back")
        await pilot.pause()
        assert len(app.screen_stack) == 1
        assert app.current_entry == "D2"
        app.query_one("#results").focus()  # the paste box would take "[" as text
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        assert app.current_entry == "D1"


async def test_markdown_link_click_navigates(app):
    from textual.widgets import Markdown

    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        doc = app.query_one("#doc", Markdown)
        doc.post_message(Markdown.LinkClicked(doc, "entry:D2"))
        await settle(pilot, app)
        assert app.current_entry == "D2"


async def test_copy_fix_code_is_dedented(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        app.query_one("#results").focus()
        await pilot.press("c")
        # the block sits inside a numbered list item in the record, indented by five spaces
        assert app.clipboard == "model = DDP(model, find_unused_parameters=True)\n"
        compile(app.clipboard, "<copied fix>", "exec")


async def palette_jump(pilot, app, query: str) -> None:
    """Ctrl+P, type ``query``, Enter on the first match, then let the entry render."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*query)
    await pilot.pause(0.5)
    await pilot.press("enter")
    await settle(pilot, app)


# a Pilot app of its own: a palette jump is test_paste_focus_copy.py's
# test_palette_jump_leaves_focus_where_the_footer_keys_act, the palette's ranking of what was typed
# test_busy.py's test_palette_ranks_the_oom_entries_first_for_oom (both quick)
@pytest.mark.slow
async def test_palette_jumps_by_alias(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await palette_jump(pilot, app, "nan loss")
        assert app.current_entry == "P1"


async def test_browse_and_filter(app):
    from textual.widgets import Tree

    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert app.focused.id == "filter"
        await pilot.press(*"watchdog")
        await pilot.pause()
        tree = app.query_one("#tree", Tree)
        leaves = [n for n in tree.root.children[0].children[0].children]
        assert [leaf.data for leaf in leaves] == ["D2"]
        tree.focus()
        tree.select_node(leaves[0])
        await settle(pilot, app)
        assert app.current_entry == "D2"


async def test_find_in_entry(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        app.query_one("#results").focus()
        await pilot.press("slash")
        assert isinstance(app.focused, Input) and app.focused.id == "find"
        await pilot.press(*"bucket", "enter")
        await pilot.pause()
        assert app._find_at >= 0
        await pilot.press("escape")
        assert app.focused.id == "paste"


async def test_help_and_theme_and_open_site_without_site(app):
    async with app.run_test(size=(80, 24)) as pilot:
        await paste(pilot, app, TRACEBACK)
        app.query_one("#results").focus()
        await pilot.press("f1")
        await pilot.pause()
        assert app.screen.query("KeysHelp")
        dark = app.current_theme.dark
        await pilot.press("ctrl+t")
        assert app.current_theme.dark != dark
        await pilot.press("o")
        await pilot.pause()
        assert any("No site to open" in str(n.message) for n in app._notifications)


async def test_huge_paste_keeps_the_tail_and_is_searched(kb):
    from textual import events

    app = TrainKBApp(kb, blink=False)
    log = ("step 1 loss 0.5 lr 1e-4 " * 40 + "\n") * 11_000 + TRACEBACK  # ~10 MB
    async with app.run_test(size=(120, 40)) as pilot:
        box = app.query_one("#paste", PasteBox)
        box.post_message(events.Paste(log))  # dispatched as a terminal's paste is
        await settle(pilot, app)
        await pilot.pause(0.2)
        await settle(pilot, app)
        assert len(box.text) <= MAX_CHARS
        assert box.text.endswith(TRACEBACK)
        assert app.current_entry == "D1"


async def test_every_binding_has_an_id_and_description():
    for binding in TrainKBApp.BINDINGS:
        assert binding.id and binding.description, binding


# a Pilot app of its own: resizes with an entry showing are test_narrow.py's
# test_every_width_down_to_20_columns_with_an_entry_showing[edges] (quick)
@pytest.mark.slow
async def test_resize_survives(app):
    async with app.run_test(size=(120, 40)) as pilot:
        await paste(pilot, app, TRACEBACK)
        await pilot.resize_terminal(80, 24)
        await pilot.pause()
        await pilot.resize_terminal(60, 20)
        await pilot.pause()
        assert app.current_entry == "D1"


def test_kb_tui_without_a_terminal_is_a_usage_error():
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "tui"],
        input="Traceback ...\n",
        capture_output=True,
        text=True,
        timeout=120,
        start_new_session=True,
    )  # no controlling terminal
    assert proc.returncode == 2
    assert "terminal" in proc.stderr
    help_proc = subprocess.run(
        [sys.executable, "-m", "trainkb"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert help_proc.returncode == 0 and "usage: kb" in help_proc.stdout


def test_copied_fix_code_of_every_real_record_is_dedented():
    """A block inside a list item used to keep its indentation: IndentationError once pasted."""
    from trainkb.catalogue import find_catalogue, load_catalogue
    from trainkb.tui._model import fix_code

    indented = []
    for entry in load_catalogue(find_catalogue()).ordered():
        code = fix_code(entry)
        try:
            compile(code, entry.id, "exec")
        except IndentationError:
            indented.append(entry.id)
        except SyntaxError:  # shell lines or a fragment with "..." in a fix: not a question of indentation
            pass
    assert indented == []


async def test_multirank_paste_shows_the_ranks_above_the_matches(app):
    from pathlib import Path

    log = Path(__file__).parents[1] / "triage" / "fixtures" / "nccl" / "nan-n2-r1" / "combined.log"
    async with app.run_test(size=(120, 40)) as pilot:
        panel = app.query_one("#triage")
        assert not panel.display  # a single traceback: no rank summary
        await paste(pilot, app, TRACEBACK)
        assert not panel.display
        await paste(pilot, app, log.read_text(encoding="utf-8"))
        assert panel.display
        text = str(panel.render_text())
        assert "rank 1   culprit" in text and "non-finite" in text and "rank 0   victim" in text
