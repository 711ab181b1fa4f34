"""Pilot tests (through Textual's real input parser) for what a stressed user hits: a second paste, the ranks
panel, an unconfirmed entry, focus and direct keys, the paste box, code blocks, copying, the footer and palette."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import TRACEBACK
from test_flows import bracketed_paste, palette_jump, settle, visible
from textual.widgets import Markdown, OptionList, Static

from trainkb.tui import TrainKBApp
from trainkb.tui._paste import PasteBox

ROOT = Path(__file__).resolve().parents[2]
NCCL_HANG = ROOT / "tests/triage/fixtures/nccl/hang-n2-r1/combined.log"
NCCL_EXIT = ROOT / "tests/triage/fixtures/nccl/exit-n2-r1/combined.log"  # a victim named Root Cause, two tips
UNRELATED = "ModuleNotFoundError: No module named 'foo_bar_baz'"


# one Pilot app each: the ranked list in quick, the other two panes in `make test`
@pytest.mark.parametrize(
    "focus",
    ["#results", pytest.param("#detail", marks=pytest.mark.slow), pytest.param("#triage", marks=pytest.mark.slow)],
)
async def test_a_second_paste_starts_a_new_search_whatever_has_focus(app: TrainKBApp, focus: str) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, NCCL_HANG.read_text(encoding="utf-8"))
        app.query_one(focus).focus()
        await pilot.pause()
        assert app.focused is app.query_one(focus)
        await bracketed_paste(pilot, app, TRACEBACK)
        box = app.query_one("#paste", PasteBox)
        assert box.text == TRACEBACK  # replaced, not appended to the first paste
        assert app.current_entry == "D1" and app.focused.id == "results"
        await bracketed_paste(pilot, app, UNRELATED)  # and again, from the matches
        assert box.text == UNRELATED and app.current_response is not None and app.current_response.abstained


async def test_ranks_panel_shows_every_line_and_the_next_time_steps(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, NCCL_EXIT.read_text(encoding="utf-8"))
        triage = app.kb.triage(NCCL_EXIT.read_text(encoding="utf-8"))
        assert triage is not None and triage.collect
        panel = app.query_one("#triage")
        text = panel.render_text().plain
        assert all(f"rank {v.rank}" in text for v in triage.ranks)
        assert "Next time:" in text and all(tip.replace("`", "") in text for tip in triage.collect)  # code, unquoted
        assert triage.root_cause_is_victim and "only a victim" in text
        assert panel.can_focus and panel.max_scroll_y > 0  # more than fits: it scrolls instead of cutting
        panel.focus()
        await pilot.press("end")
        await pilot.wait_for_scheduled_animations()  # End scrolls smoothly: a loaded machine takes a while
        await pilot.pause()
        assert app.focused is panel and panel.scroll_y == panel.max_scroll_y


def _oom_line() -> str:
    from test_differential_fits import _oom_line as line

    return line()


async def test_an_unconfirmed_candidate_is_marked_until_the_user_moves_on(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, _oom_line())
        response = app.current_response
        assert response is not None and response.status in ("differential", "unknown")
        results = app.query_one("#results", OptionList)
        results.focus()
        first = next(i for i in range(results.option_count) if results.get_option_at_index(i).id)
        results.highlighted = first
        await pilot.press("enter")
        await settle(pilot, app)
        detail = app.query_one("#detail")
        opened = app.current_entry
        assert opened is not None and "unconfirmed" in detail.border_title
        assert str(app.query_one("#title", Static).render()).startswith("UNCONFIRMED")
        assert app.query_one("#summary").has_class("-guess")
        candidates = {r.id for r in response.results}
        related = app.query_one("#related", OptionList)
        await pilot.press("f")  # moves on: a followed link that is no candidate of this paste
        await settle(pilot, app)
        ids = [related.get_option_at_index(i).id.split("|", 1)[1] for i in range(related.option_count)]
        related.highlighted = next(i for i, target in enumerate(ids) if target not in candidates)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.current_entry != opened and "unconfirmed" not in detail.border_title
        assert not app.query_one("#summary").has_class("-guess")


async def test_f_then_enter_follows_a_related_entry(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        assert app.focused.id == "results"
        await pilot.press("f")
        await settle(pilot, app)
        assert app.focused.id == "related" and visible(app, "#related")
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.current_entry == "D2"


async def test_palette_jump_leaves_focus_where_the_footer_keys_act(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await palette_jump(pilot, app, "D1")
        await pilot.pause(0.2)
        assert app.current_entry == "D1" and app.focused is app.query_one("#detail")
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == "model = DDP(model, find_unused_parameters=True)\n"
        assert app.query_one("#paste", PasteBox).text == ""


@pytest.mark.slow  # a Pilot app of its own: focus styling; the focus moves themselves stay in quick (test_flows)
async def test_the_focused_pane_is_unmistakable_and_tab_scrolls_into_view(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        paste, results = app.query_one("#paste"), app.query_one("#results")
        assert app.focused is results
        assert results.styles.border_top[0] == "heavy" and paste.styles.border_top[0] == "round"
        assert paste.styles.border_top[1] == app.query_one("#detail").styles.border_top[1]  # not the loudest
        app.query_one("#detail").focus()
        await pilot.pause()
        while app.focused.id != "related":
            await pilot.press("tab")
            await pilot.pause(0.1)
        await pilot.pause(0.2)
        assert visible(app, "#related")
        heading = app.query("MarkdownH2").first()
        assert not heading.rich_style.underline  # a heading is not a link


@pytest.mark.slow  # a Pilot app of its own: the pasted box at 80x24 is also the quick snapshot test_traceback_pasted
async def test_paste_box_wraps_and_starts_at_the_marked_line_at_80x24(app: TrainKBApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        box = app.query_one("#paste", PasteBox)
        assert box.soft_wrap and box.scroll_offset.x == 0 and box.evidence_row is not None
        assert box.wrapped_document.location_to_offset((box.evidence_row, 0)).y == box.scroll_offset.y
        first_row = "".join(s.text for s in box.render_line(0)._segments)
        assert "RuntimeError" in first_row  # the start of the marked line, not a blank tail


@pytest.mark.slow  # a Pilot app of its own: layout; the fix at 80x24 (test_fix_is_visible_at_80x24) is in quick
async def test_long_code_lines_wrap_with_a_continuation_mark(real_app: TrainKBApp) -> None:
    from trainkb.tui._code import CONTINUATION, _WrappedCode

    app = real_app
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_entry("D24")
        await settle(pilot, app)
        await pilot.pause(0.3)
        rows = [line for code in app.query(_WrappedCode) for line in code.render().plain.split("\n")]
        assert any(row.startswith(CONTINUATION) for row in rows)
        assert "import record" not in [row.strip() for row in rows]


async def test_c_copies_the_first_block_and_a_number_the_nth(real_app: TrainKBApp) -> None:
    from trainkb.tui._model import fix_blocks

    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_entry("M1")
        await settle(pilot, app)
        app.query_one("#detail").focus()
        blocks = fix_blocks(app.kb.catalogue.entries["M1"])
        assert len(blocks) >= 2
        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == blocks[0]
        await pilot.press("2")
        await pilot.pause()
        assert app.clipboard == blocks[1]
        assert f"({len(blocks[1].splitlines())} lines)" in str(list(app._notifications)[-1].message)


@pytest.mark.slow  # a Pilot app of its own: copying stays in quick (test_c_copies_the_first_block_and_a_number_the_nth)
async def test_one_line_copy_says_one_line(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.press("c")
        await pilot.pause()
        message = str(list(app._notifications)[-1].message)
        assert "(1 line)" in message and "lines" not in message


async def test_copy_diagnosis_puts_a_markdown_summary_on_the_clipboard(
    app: TrainKBApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINKB_SITE_URL", "https://kb.example.org")
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        await pilot.press("d")
        await pilot.pause()
        entry = app.kb.catalogue.entries["D1"]
        text = app.clipboard
        assert text.startswith("trainkb answer, high confidence")
        assert f"**D1: {entry.title}** (answer, high)" in text
        assert "- Evidence, line 5: `RuntimeError: Expected to have finished reduction" in text
        assert f"- Fix: {entry.fix_summary}" in text and "- Entry: https://kb.example.org/D1/" in text
        keys = {key.description for key in app.query("FooterKey")}
        assert "Copy diagnosis" in keys


@pytest.mark.slow  # a Pilot app of its own: the 80-column fit (test_every_footer_key_fits_at_80_columns) stays in quick
async def test_footer_is_not_cut_at_120_columns(app: TrainKBApp) -> None:
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, TRACEBACK)
        keys = list(app.query("FooterKey"))
        assert keys and all(key.region.right <= 120 for key in keys)
        assert {"Copy fix", "Copy diagnosis", "Follow", "New paste"} <= {k.description for k in keys}


@pytest.mark.slow  # a Pilot app of its own: quick keeps test_palette_ranks_the_oom_entries_first_for_oom
async def test_palette_ranks_nccl_timeout_and_shows_each_title_once(real_app: TrainKBApp) -> None:
    from textual.command import CommandList

    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"nccl timeout")
        await pilot.pause(1.0)
        options = app.screen.query_one(CommandList)
        shown = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert {s.split()[0] for s in shown[:2]} == {"D20", "DP3"}, shown[:4]
        for line in shown:
            title = app.kb.catalogue.entries[line.split()[0]].title
            assert line.count(title) == 1, line


def test_ids_in_prose_are_links_and_what_it_prints_stays_literal(real_app: TrainKBApp) -> None:
    kb = real_app.kb
    text = kb.markdown("M1")
    for other in ("M2", "M3", "M4", "M5"):
        assert f"[{other}](entry:{other})" in text
    assert {"M2", "M3", "M4", "M5"} <= {target for _, target in kb.related("M1")}  # each one key away (f)
    for sig in kb.catalogue.entries["M1"].signatures:
        assert f"\n{sig.example.strip()}\n```" in text


@pytest.mark.slow  # a Pilot app of its own: a clicked link stays in quick (test_markdown_link_click_navigates)
async def test_an_id_in_prose_opens_by_click(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        app.open_entry("M1")
        await settle(pilot, app)
        doc = app.query_one("#doc", Markdown)
        assert "[M4](entry:M4)" in doc.source
        doc.post_message(Markdown.LinkClicked(doc, "entry:M4"))
        await settle(pilot, app)
        assert app.current_entry == "M4"
