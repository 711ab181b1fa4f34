"""The multi-line paste box (Textual's Input would keep only the first line of a paste)."""

from __future__ import annotations

import re
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.geometry import Offset
from textual.strip import Strip
from textual.widgets import TextArea

from ..search import MAX_CHARS, SearchResponse, paste_tail, unescaped

__all__ = ["PasteBox", "message_column", "pasted", "read_from"]

_MARK = "▶"
TITLE = "Paste a traceback, log or symptom"
# what search leaves that a terminal may still obey or that reorders the text shown: DEL, the C1 controls (0x9b
# starts a sequence), the bidirectional overrides, lone surrogates (as trainkb._terminal.CONTROL lists them)
_UNSHOWABLE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LOG_PREFIX = re.compile(r"(?:\s*\[[^\]\n]*\]:?)+\s*")  # torchrun's [default0]:[rank0]: and glog's [E1126 … file:689]


def message_column(line: str) -> int:
    """Where a log line's message starts, past the bracketed prefixes that launchers and loggers put first."""
    prefix = _LOG_PREFIX.match(line)
    return prefix.end() if prefix and prefix.end() < len(line) else 0


def pasted(text: str) -> str:
    """A paste as the TUI shows and searches it: without terminal escapes and control characters, so none acts on
    the terminal, and what search reads is what the box shows."""
    return _UNSHOWABLE.sub("", unescaped(text))


def read_from(text: str, response: SearchResponse) -> int:
    """The 1-based line of ``text`` to show first when no entry answered: the closest entry's evidence, else the
    symptom line search keyed on, else the first line."""
    for result in response.results:
        if result.evidence:
            return result.evidence[0].line
    if response.symptom:
        for number, line in enumerate(text.splitlines(), 1):
            if response.symptom.strip() and response.symptom.strip() in line:
                return number
    return 1


class PasteBox(TextArea):
    """A TextArea that keeps only the tail of a huge paste, so a 10 MB log cannot freeze it.

    The line a match was found on is marked in the gutter and tinted, never selected: a
    selection would be replaced by the next key pressed.
    """

    DEFAULT_CSS = """
    PasteBox { height: 1fr; min-height: 4; border: round $foreground 25%; }
    PasteBox:focus { border: heavy $border; border-title-color: $border; border-title-style: bold; }
    PasteBox > .paste--evidence { background: $warning 25%; text-style: bold; }
    PasteBox > .paste--mark { color: $warning; text-style: bold; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"paste--evidence", "paste--mark"}

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(text, soft_wrap=True, show_line_numbers=True, id=id)
        self.border_title = TITLE
        self.evidence_row: int | None = None

    async def _on_paste(self, event: events.Paste) -> None:
        """A paste is a new crash to search: it replaces the box (a huge one by its tail) rather than being
        spliced into the last one (TextArea's own handler, which would run after this one, is skipped)."""
        event.stop()
        event.prevent_default()
        self.evidence_row = None
        self.app.clear_notifications()  # a toast about the last paste's answer would sit over this one's
        kept, dropped = paste_tail(event.text) if len(event.text) > MAX_CHARS else (event.text, 0)
        self.line_number_start = dropped + 1  # the gutter numbers the lines as the user's own paste does
        self.border_title = f"Paste: lines {dropped + 1}- kept, the {dropped} before cut" if dropped else TITLE
        self.replace(pasted(kept), self.document.start, self.document.end)  # cleaned once cut: bounded work
        self.move_cursor(self.document.end)
        if len(kept) < len(event.text):  # search reads no more of a paste than this
            self.notify(
                f"Pasted {len(event.text) / 1e6:.1f} MB; kept the last {len(kept) // 1024} KB, "
                f"from line {dropped + 1} (tracebacks end at the bottom).",
                timeout=6,
            )

    def start_over(self) -> None:
        """Empty, numbered from 1 again, under its first title."""
        self.clear()
        self.line_number_start = 1
        self.border_title = TITLE

    def highlight_line(self, line: int) -> None:
        """Mark a 1-based input line (the evidence of a match) and scroll it into view."""
        row = line - 1
        self.evidence_row = row if 0 <= row < self.document.line_count else None
        self.call_after_refresh(self._scroll_to_mark)
        self.refresh()

    def _scroll_to_mark(self) -> None:
        """The marked line's first row at the top; when its message (past a log prefix such as
        ``[default0]:[rank0]:[E1126 06:30:04.241102616 ProcessGroupNCCL.cpp:689]``) starts below the rows the
        box shows, the row where the message starts instead: a narrow box would show only the time stamp."""
        if self.evidence_row is not None:
            top = self._row_top(self.evidence_row)
            line = self.document.get_line(self.evidence_row)
            message = self.wrapped_document.location_to_offset((self.evidence_row, message_column(line))).y
            if message - top >= self.scrollable_content_region.height:
                top = message
            self.scroll_to(x=0, y=top, animate=False)

    def _row_top(self, row: int) -> int:
        return self.wrapped_document.location_to_offset((row, 0)).y

    def show_line(self, line: int) -> None:
        """Scroll a 1-based input line to the top and fully left, unmarked: after a paste nothing matched, the
        box would otherwise stay at the paste's end, where the cursor was left."""
        row = min(max(line - 1, 0), max(self.document.line_count - 1, 0))

        def scroll() -> None:
            self.scroll_to(x=0, y=self.wrapped_document.location_to_offset((row, 0)).y, animate=False)

        self.call_after_refresh(scroll)

    def on_resize(self) -> None:
        """Collapsing the box after a match must keep the marked line in view."""
        self.call_after_refresh(self._scroll_to_mark)

    def clear_mark(self) -> None:
        self.evidence_row = None
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.evidence_row is None:
            return strip
        row = self.wrapped_document.offset_to_location(Offset(0, self.scroll_offset.y + y))[0]
        if row != self.evidence_row:
            return strip
        top = self._row_top(row)  # the mark goes on the line's first row, or on the top row when that is above
        first = top == self.scroll_offset.y + y or (y == 0 and top < self.scroll_offset.y)
        tint = self.get_component_rich_style("paste--evidence", partial=True)
        mark_style = self.get_component_rich_style("paste--mark", partial=True)
        at = max(self.gutter_width - 2, 0)  # the first of the two spaces after the line number
        if first and self.show_line_numbers and at < strip.cell_length:
            head, space, tail = strip.divide([at, at + 1, strip.cell_length])
            gutter_style = next(iter(space), Segment("")).style or Style()
            strip = Strip.join([head, Strip([Segment(_MARK, gutter_style + mark_style)]), tail.apply_style(tint)])
        else:
            strip = strip.apply_style(tint)
        return strip
