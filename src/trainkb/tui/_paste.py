"""The multi-line paste box (Textual's Input would keep only the first line of a paste)."""

from __future__ import annotations

from textual import events
from textual.widgets import TextArea
from textual.widgets.text_area import Selection

from ._model import PASTE_LIMIT, tail_for_paste

__all__ = ["PasteBox"]


class PasteBox(TextArea):
    """A TextArea that keeps only the tail of a huge paste, so a 10 MB log cannot freeze it."""

    DEFAULT_CSS = """
    PasteBox { height: 1fr; min-height: 4; border: round $accent; }
    PasteBox:focus { border: round $secondary; }
    """

    def __init__(self, text: str = "", **kwargs: object) -> None:
        super().__init__(text, soft_wrap=False, show_line_numbers=True, **kwargs)  # type: ignore[arg-type]
        self.border_title = "Paste a traceback, log or symptom"

    async def _on_paste(self, event: events.Paste) -> None:
        if len(event.text) <= PASTE_LIMIT:
            await super()._on_paste(event)
            return
        event.stop()
        event.prevent_default()
        kept = tail_for_paste(event.text)
        self.replace(kept, self.document.start, self.document.end)
        self.notify(f"Pasted {len(event.text) / 1e6:.1f} MB; kept the last {len(kept) // 1024} KB "
                    f"(tracebacks end at the bottom).", timeout=6)

    def highlight_line(self, line: int) -> None:
        """Select a 1-based input line (the evidence of a match) and scroll to it."""
        row = line - 1
        if 0 <= row < self.document.line_count:
            # selected from its end back to its start, so the view shows where the line begins
            self.selection = Selection((row, len(self.document.get_line(row))), (row, 0))
            self.scroll_cursor_visible(center=True)
