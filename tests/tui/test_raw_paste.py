"""Pilot tests for pastes that hold terminal escapes, control characters or binary, fed as a terminal sends them
(the bracketed-paste markers around the raw text) through the parser the TUI's driver reads input with. Textual's
own parser ended such a paste at its first ESC and sent the rest as key presses: text lost, a pasted ``\\x11``
quitting as Ctrl+Q, a raw ESC left in the box, minutes of key events for a binary paste."""

from __future__ import annotations

import io
import time

import pytest
from helpers import TRACEBACK
from test_flows import bracketed_paste
from textual import events

from trainkb.tui import TrainKBApp
from trainkb.tui._driver import PasteParser, _decoder
from trainkb.tui._paste import PasteBox

D8_LINE = TRACEBACK.splitlines()[-1].removeprefix("[rank1]: ")
START, END = "\x1b[200~", "\x1b[201~"
SGR = f'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n\x1b[31m{D8_LINE}\x1b[0m\n'
# an OSC title, an OSC 52 clipboard write, a screen clear, colour and an OSC 8 link around the message
OSC = (
    "\x1b]0;PWNED\x07\x1b]52;c;ZXZpbA==\x07\x1b[2J"
    f"\x1b[1;31m{D8_LINE[:40]}\x1b]8;;http://example.invalid\x1b\\{D8_LINE[40:]}\x1b]8;;\x1b\\\x1b[0m\n"
)


def _shown(app: TrainKBApp) -> str:
    box = app.query_one("#paste", PasteBox)
    return "\n".join(box.render_line(y).text for y in range(box.size.height))


def _answer(app: TrainKBApp) -> tuple[str | None, str | None]:
    response = app.current_response
    return (response.status if response else None), app.current_entry


# one Pilot app per case: the OSC payload in `make quick`, the colour codes in `make test` too
@pytest.mark.parametrize("text", [pytest.param(SGR, marks=pytest.mark.slow), OSC], ids=["sgr", "osc"])
async def test_a_paste_with_escapes_is_searched_without_them(real_app: TrainKBApp, text: str) -> None:
    app = real_app
    cli = app.kb.search(text)  # what `kb search` answers for the same paste, escapes and all
    assert cli.status == "answered" and cli.results[0].id == "D8"
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, text)
        box = app.query_one("#paste", PasteBox)
        assert _answer(app) == ("answered", "D8")
        assert D8_LINE in box.text and "\x1b" not in box.text and "\x07" not in box.text
        assert "\x1b" not in _shown(app)  # nothing in the box is an escape the terminal would obey
        assert "PWNED" not in box.text and "ZXZpbA" not in box.text


async def test_control_characters_in_a_paste_are_not_keys(real_app: TrainKBApp) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        # Ctrl+Q, Ctrl+N, Ctrl+B, Ctrl+P and Ctrl+T, each after an ESC that Textual's parser ended the paste at
        await bracketed_paste(pilot, app, f"\x1b[0mlog line\n\x11more\x0e\x02\x10\x14\n{D8_LINE}")
        assert app.is_running and app.return_code is None
        box = app.query_one("#paste", PasteBox)
        assert box.text == f"log line\nmore\n{D8_LINE}"
        assert _answer(app) == ("answered", "D8")
        assert app.query_one("#switcher").current == "search-pane" and app.screen is app.screen_stack[0]


def _checkpoint_bytes() -> bytes:
    """A real binary: a saved checkpoint of ~200 KB, as `cat model.pt` would put on the screen."""
    import torch  # here: importing it for the whole module would cost every test worker ~1.5 s

    buffer = io.BytesIO()
    torch.save({"weight": torch.linspace(-1, 1, 50_000)}, buffer)
    return buffer.getvalue()


async def test_a_binary_paste_arrives_as_one_paste_and_is_answered(real_app: TrainKBApp) -> None:
    app = real_app
    raw = _checkpoint_bytes() + b"\n" + D8_LINE.encode() + b"\n"
    decoded = _decoder("utf-8")().decode(START.encode() + raw + END.encode(), final=True)  # as the driver reads it
    assert decoded.count("\x1b") > 10
    parser = PasteParser()
    tokens = [token for at in range(0, len(decoded), 4096) for token in parser.feed(decoded[at : at + 4096])]
    assert [type(token) for token in tokens] == [events.Paste]
    pasted = tokens[0]
    assert isinstance(pasted, events.Paste)
    async with app.run_test(size=(120, 40)) as pilot:
        started = time.perf_counter()
        await bracketed_paste(pilot, app, pasted.text)
        took = time.perf_counter() - started
        assert _answer(app) == ("answered", "D8")
        assert not any(c in app.query_one("#paste", PasteBox).text for c in "\x00\x1b\x7f")
        assert took < 60, took  # key by key it took minutes


def _parse(chunks: list[str], parser: PasteParser | None = None) -> list[object]:
    parser = parser or PasteParser()
    return [token for chunk in chunks for token in parser.feed(chunk)]


def test_the_paste_markers_may_be_split_across_reads() -> None:
    raw = f"a{START}{SGR}\x11{END}b"
    whole = _parse([raw])
    assert [type(t) for t in whole] == [events.Key, events.Paste, events.Key]
    for cut in range(1, len(raw)):
        split = _parse([raw[:cut], raw[cut:]])
        assert [repr(t) for t in split] == [repr(t) for t in whole], cut


def test_keys_outside_a_paste_are_textuals() -> None:
    parser = PasteParser()
    assert [getattr(t, "key", None) for t in _parse(["x\x1b[A\x11"], parser)] == ["x", "up", "ctrl+q"]
    assert _parse(["\x1b"], parser) == []  # the start of a paste marker, or Esc: held a moment
    time.sleep(0.15)
    assert [getattr(t, "key", None) for t in parser.tick()] == ["escape"]
    assert _parse([f"{START}cut short"], parser) == []
    assert [getattr(t, "text", None) for t in parser.feed("")] == ["cut short"]  # input ended mid-paste


def test_an_end_marker_inside_the_pasted_text_does_not_end_the_paste() -> None:
    """A terminal that does not filter a pasted end marker sent the rest of the paste as keys: its \\x11 quit."""
    tokens = _parse([f"{START}log line\n{END}\x11more\n{D8_LINE}{END}x"])
    assert [type(t) for t in tokens] == [events.Paste, events.Key]
    assert tokens[0].text == f"log line\n{END}\x11more\n{D8_LINE}" and tokens[1].key == "x"
    two = _parse([f"{START}one{END}{START}two{END}"])  # two pastes in one read stay two
    assert [t.text for t in two] == ["one", "two"]


def test_a_paste_whose_end_never_comes_ends_when_input_stops(monkeypatch) -> None:
    """Every key after an unfinished paste went into it, Ctrl+Q too: only a kill ended the app."""
    monkeypatch.setattr("trainkb.tui._driver.PASTE_IDLE", 0.1)
    parser = PasteParser()
    assert _parse([f"{START}{D8_LINE}\n"], parser) == []
    assert list(parser.tick()) == []  # a paste in progress, not yet idle
    time.sleep(0.15)
    assert [t.text for t in parser.tick()] == [f"{D8_LINE}\n"]
    assert [getattr(t, "key", None) for t in _parse(["\x11"], parser)] == ["ctrl+q"]
