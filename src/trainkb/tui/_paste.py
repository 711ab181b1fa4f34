"""The multi-line paste box (Textual's Input would keep only the first line of a paste)."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea

from ..search import MAX_CHARS, paste_tail

__all__ = ["PasteBox"]

_MARK = "▶"


class PasteBox(TextArea):
    """A TextArea that keeps only the tail of a huge paste, so a 10 MB log cannot freeze it.

    The line a match was found on is marked in the gutter and tinted, never selected: a
    selection would be replaced by the next key pressed.
    """

    DEFAULT_CSS = """
    PasteBox { height: 1fr; min-height: 4; border: round $accent; }
    PasteBox:focus { border: round $secondary; }
    PasteBox > .paste--evidence { background: $warning 25%; text-style: bold; }
    PasteBox > .paste--mark { color: $warning; text-style: bold; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"paste--evidence", "paste--mark"}

    class Pasted(Message):
        """A bracketed paste landed (as opposed to typing): the app may move on to the matches."""

    def __init__(self, text: str = "", *, id: str | None = None) -> None:
        super().__init__(text, soft_wrap=False, show_line_numbers=True, id=id)
        self.border_title = "Paste a traceback, log or symptom"
        self.evidence_row: int | None = None

    async def _on_paste(self, event: events.Paste) -> None:
        """Textual calls TextArea._on_paste after this one: only a huge paste is handled here."""
        self.evidence_row = None
        self.post_message(self.Pasted())
        if len(event.text) <= MAX_CHARS:  # search reads no more of a paste than this
            return
        event.stop()
        event.prevent_default()  # TextArea's handler would insert the whole text
        kept, _dropped = paste_tail(event.text)
        self.replace(kept, self.document.start, self.document.end)
        self.notify(
            f"Pasted {len(event.text) / 1e6:.1f} MB; kept the last {len(kept) // 1024} KB "
            f"(tracebacks end at the bottom).",
            timeout=6,
        )

    def highlight_line(self, line: int) -> None:
        """Mark a 1-based input line (the evidence of a match) and scroll it into view."""
        row = line - 1
        self.evidence_row = row if 0 <= row < self.document.line_count else None
        self.call_after_refresh(self._scroll_to_mark)
        self.refresh()

    def _scroll_to_mark(self) -> None:
        if self.evidence_row is not None:
            self.scroll_to(y=max(0, self.evidence_row - self.scrollable_content_region.height // 2), animate=False)

    def on_resize(self) -> None:
        """Collapsing the box after a match must keep the marked line in view."""
        self.call_after_refresh(self._scroll_to_mark)

    def clear_mark(self) -> None:
        self.evidence_row = None
        self.refresh()

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        if self.evidence_row is None or self.scroll_offset.y + y != self.evidence_row:
            return strip
        tint = self.get_component_rich_style("paste--evidence", partial=True)
        mark_style = self.get_component_rich_style("paste--mark", partial=True)
        at = max(self.gutter_width - 2, 0)  # the first of the two spaces after the line number
        if self.show_line_numbers and at < strip.cell_length:
            head, space, tail = strip.divide([at, at + 1, strip.cell_length])
            gutter_style = next(iter(space), Segment("")).style or Style()
            strip = Strip.join([head, Strip([Segment(_MARK, gutter_style + mark_style)]), tail.apply_style(tint)])
        else:
            strip = strip.apply_style(tint)
        return strip
