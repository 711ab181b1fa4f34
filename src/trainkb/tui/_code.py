"""Code blocks that wrap with a visible continuation mark: a long line never reads as two statements."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

__all__ = ["CONTINUATION", "EntryMarkdown", "wrap_code"]

CONTINUATION = "↪ "  # starts each wrapped piece of a code line


def wrap_code(code: Content, width: int) -> list[Content]:
    """``code`` cut into rows of at most ``width`` cells; a row that continues a line starts with CONTINUATION."""
    width = max(width, len(CONTINUATION) + 4)
    rows: list[Content] = []
    for line in code.split("\n", allow_blank=True):
        first = True
        while True:
            room = width if first else width - len(CONTINUATION)
            head = line if len(line.plain) <= room else line.divide([room])[0]
            rows.append(head if first else Content.styled(CONTINUATION, "dim") + head)
            line = line.divide([room])[1] if len(line.plain) > room else Content("")
            first = False
            if not line.plain:
                break
    return rows


class _WrappedCode(Widget):
    """The highlighted code of one fence, wrapped to the width it is given."""

    DEFAULT_CSS = "_WrappedCode { width: 1fr; height: auto; padding: 1 2; }"

    def __init__(self, code: Content) -> None:
        super().__init__(id="code-content")
        self.code = code

    def update(self, code: Content) -> None:
        self.code = code
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(wrap_code(self.code, width))

    def render(self) -> Content:
        return Content("\n").join(wrap_code(self.code, self.size.width))


class _WrappedFence(MarkdownFence):
    DEFAULT_CSS = "_WrappedFence { overflow: hidden hidden; }"

    def set_content(self, content: Content) -> None:
        self._content = content
        for code in self.query(_WrappedCode):
            code.update(content)

    def compose(self) -> ComposeResult:
        yield _WrappedCode(self._highlighted_code)


class EntryMarkdown(Markdown):
    """The entry pane's Markdown: fences wrap with a continuation mark instead of hard-wrapping silently."""

    BLOCKS: dict[str, type[MarkdownBlock]] = {  # noqa: RUF012 (Textual declares it so)
        **Markdown.BLOCKS,
        "fence": _WrappedFence,
        "code_block": _WrappedFence,
    }
