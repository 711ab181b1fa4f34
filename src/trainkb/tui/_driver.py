"""Terminal input that Textual's Linux driver mishandles.

Bytes that are not valid UTF-8 (a key typed on a Latin-1 terminal, a pasted log in another encoding): the
driver decodes strictly, so the first such byte killed its input thread. Here each bad byte is read as
U+FFFD, as `kb search` reads a paste.

An ESC inside a bracketed paste (a coloured log, an OSC title, binary): Textual's parser reads it as the
start of a key sequence and sends the rest of the paste as key presses (textual/_xterm_parser.py, the
bracketed-paste branch of ``XTermParser.parse``), so text is lost and a pasted ``\\x11`` quits as Ctrl+Q.
Here everything between the paste markers is one paste, whatever bytes it holds. A pasted text may hold an end
marker of its own (a terminal that does not filter it): when the same read holds a later end marker and no start
marker before it, the paste runs to that one, so what follows the inner marker is not read as keys. A paste whose
end marker never comes (a lost byte, a killed terminal program) ends after ``PASTE_IDLE`` seconds without input:
keys are keys again, Ctrl+Q among them.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterable
from encodings.utf_8 import IncrementalDecoder as Utf8Decoder

from textual import constants, events
from textual._time import get_time
from textual._xterm_parser import BRACKETED_PASTE_END, BRACKETED_PASTE_START, XTermParser
from textual.drivers import linux_driver
from textual.message import Message

__all__ = ["PASTE_IDLE", "PasteParser", "TolerantDriver"]

PASTE_IDLE = 3.0  # seconds without input that end a paste whose end marker never came (a terminal sends one at once)


class _ReplacingUtf8(Utf8Decoder):
    def __init__(self, errors: str = "replace") -> None:
        super().__init__(errors)


def _decoder(encoding: str) -> Callable[..., codecs.IncrementalDecoder]:
    if codecs.lookup(encoding).name == "utf-8":
        return _ReplacingUtf8
    return codecs.getincrementaldecoder(encoding)


def _split_marker(text: str, marker: str) -> int:
    """How many characters at the end of ``text`` begin ``marker``: a marker cut in two by a read."""
    for size in range(min(len(marker) - 1, len(text)), 0, -1):
        if text.endswith(marker[:size]):
            return size
    return 0


def _last_end(text: str, end: int) -> int:
    """Where the paste that an end marker at ``end`` seems to close really ends: at the last end marker of ``text``
    with no start marker before it (the earlier ones were pasted text)."""
    while True:
        later = text.find(BRACKETED_PASTE_END, end + len(BRACKETED_PASTE_END))
        start = text.find(BRACKETED_PASTE_START, end + len(BRACKETED_PASTE_END))
        if later < 0 or 0 <= start < later:
            return end
        end = later


class PasteParser(XTermParser):
    """Textual's parser, but a bracketed paste is cut out of the input before it is parsed: everything up to
    the end marker is one Paste event (the text as pasted: the app cleans it), never a key."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._paste: list[str] | None = None  # the paste read so far, while one is being read
        self._held = ""  # the end of the last read when it may begin a marker the next read completes
        self._held_at = 0.0
        self._paste_at = 0.0  # when the paste last grew

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # end of input: a paste cut short is still what was pasted
            held, self._held = self._held, ""
            if self._paste is None:
                yield from self._keys(held)
            else:
                self._paste.append(held)
                yield from self._release()
            yield from super().feed(data)
            return
        text, self._held = self._held + data, ""
        while text:
            if self._paste is None:
                start = text.find(BRACKETED_PASTE_START)
                if start < 0:
                    cut = len(text) - _split_marker(text, BRACKETED_PASTE_START)
                    yield from self._keys(text[:cut])
                    self._hold(text[cut:])
                    return
                yield from self._keys(text[:start])
                self._paste = []
                text = text[start + len(BRACKETED_PASTE_START) :]
            else:
                self._paste_at = get_time()
                end = text.find(BRACKETED_PASTE_END)
                if end < 0:
                    cut = len(text) - _split_marker(text, BRACKETED_PASTE_END)
                    self._paste.append(text[:cut])
                    self._hold(text[cut:])
                    return
                end = _last_end(text, end)
                self._paste.append(text[:end])
                yield from self._release()
                text = text[end + len(BRACKETED_PASTE_END) :]

    def tick(self) -> Iterable[Message]:
        """A held start of a marker that no read completed within the escape delay was a key (Esc): Textual's
        parser gets it, its own wait for the rest of a sequence already spent."""
        if self._held and self._paste is None and get_time() - self._held_at >= constants.ESCAPE_DELAY:
            held, self._held = self._held, ""
            yield from self._keys(held)
            if self._timeout_time is not None:  # it waits for the rest of a sequence
                self._timeout_time = get_time()
        if self._paste is not None and get_time() - self._paste_at >= PASTE_IDLE:  # its end marker never came
            held, self._held = self._held, ""
            self._paste.append(held)
            yield from self._release()
        yield from super().tick()

    def _keys(self, text: str) -> Iterable[Message]:
        """Input outside a paste, parsed by Textual."""
        return super().feed(text) if text else ()

    def _hold(self, text: str) -> None:
        self._held = text
        self._held_at = get_time()

    def _release(self) -> Iterable[Message]:
        """The paste read so far as one Paste event."""
        if self._paste is not None:
            pasted, self._paste = "".join(self._paste), None
            yield events.Paste(pasted)


class TolerantDriver(linux_driver.LinuxDriver):
    """Textual's Linux driver, whose input thread takes its decoder from ``_decoder`` and its parser from
    ``PasteParser`` (the driver looks ``getincrementaldecoder`` and ``XTermParser`` up in its module when the
    thread starts)."""

    def run_input_thread(self) -> None:
        vars(linux_driver)["getincrementaldecoder"] = _decoder
        vars(linux_driver)["XTermParser"] = PasteParser
        super().run_input_thread()
