"""Every link has a key: when an entry has more links than there are hint letters, the links past the single
letters get two-letter keys (as in vimium and qutebrowser), none the start of another, typed through Textual's
real input parser; F1 says how they work."""

from __future__ import annotations

import pytest
from test_flows import settle
from textual.widgets import OptionList

from trainkb.tui import TrainKBApp
from trainkb.tui._help import KeysHelp
from trainkb.tui._hints import HINTS, hint_labels


def test_keys_are_unique_and_none_starts_another() -> None:
    for count in (1, len(HINTS), len(HINTS) + 1, 22, 60):
        keys = hint_labels(count)
        assert len(keys) == len(set(keys)) == count
        assert not [(a, b) for a in keys for b in keys if a != b and b.startswith(a)], count
    assert hint_labels(len(HINTS)) == list(HINTS)  # while the letters last, one key each


def _keys_shown(app: TrainKBApp) -> list[tuple[str, str]]:
    """Each link's key as the list shows it, and the entry it leads to."""
    related = app.query_one("#related", OptionList)
    out = []
    for i in range(related.option_count):
        option = related.get_option_at_index(i)
        assert option.id is not None
        out.append((str(option.prompt).split(" ", 1)[0], option.id.split("|", 1)[1]))
    return out


# Pilot apps of their own: the keys are unique and none starts another in
# test_keys_are_unique_and_none_starts_another, and a link's letter follows it in test_link_hints_focus.py's
# test_a_links_letter_follows_it_in_one_key_and_back_returns (both quick); two-letter keys typed into a long
# list of links run in `make test`
@pytest.mark.slow
@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
async def test_every_link_of_a_long_list_has_a_key_that_follows_it(
    real_app: TrainKBApp, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = real_app
    real = app.kb.related
    others = [e for e in app.kb.catalogue.entries if e != "M1" and e not in {t for _, t in real("M1")}]

    def more(entry_id: str) -> list[tuple[str, str]]:
        """M1's links (the most of any entry: 14) and, past the letters, real entries it names nowhere."""
        links = real(entry_id)
        return links + [("mentioned", target) for target in others[: len(HINTS) + 3 - len(links)]]

    monkeypatch.setattr(app.kb, "related", more)
    async with app.run_test(size=size) as pilot:
        app.jump("M1")
        await settle(pilot, app)
        shown = _keys_shown(app)
        assert len(shown) > len(HINTS)  # more links than letters
        assert [key for key, _ in shown] == hint_labels(len(shown))
        last_key, last_target = shown[-1]
        assert len(last_key) == 2
        await pilot.press(last_key[0])  # the first letter waits for the second, and says so
        await settle(pilot, app)
        assert app.current_entry == "M1"
        assert "then the second letter" in app.query_one("#related", OptionList).border_title
        await pilot.press("escape")  # cancels the first letter, and only that
        await settle(pilot, app)
        assert app.current_entry == "M1" and app.focused is not None and app.focused.id != "paste"
        assert app.query_one("#related", OptionList).border_title.startswith("Follow")
        await pilot.press(*last_key)
        await settle(pilot, app)
        assert app.current_entry == last_target
        await pilot.press("left_square_bracket")
        await settle(pilot, app)
        await pilot.press(shown[0][0])  # a single letter still follows at once
        await settle(pilot, app)
        assert app.current_entry == shown[0][1]


# a Pilot app of its own: the keys panel F1 opens, its rows in order, is test_flows.py's
# test_f1_lists_the_apps_keys_first (quick)
@pytest.mark.slow
async def test_f1_says_how_two_letter_keys_work(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump("M1")  # an entry with links, whose keys F1 then explains
        await settle(pilot, app)
        await pilot.press("f1")
        await pilot.pause()
        rows = app.screen.query_one(KeysHelp).table.columns[1]._cells
        assert any("two letters" in str(cell) for cell in rows)
