"""The detail pane: an entry rendered as Markdown, its related entries, find-in-entry."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown, OptionList
from textual.widgets.option_list import Option

__all__ = ["EntryView"]


class EntryView(VerticalScroll):
    DEFAULT_CSS = """
    EntryView { border: round $primary; padding: 0 1; }
    EntryView:focus-within { border: round $secondary; }
    EntryView #find { display: none; }
    EntryView #find.visible { display: block; }
    EntryView #related { height: auto; max-height: 12; border: none; }
    """

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in entry (Enter: next, Esc: close)", id="find")
        yield Markdown("*Nothing selected yet.*", id="doc", open_links=False)
        yield OptionList(id="related")

    def on_mount(self) -> None:
        self.border_title = "Entry"

    async def show(self, entry_id: str, markdown: str, related: list[tuple[str, str]], titles: dict[str, str]) -> None:
        self.border_title = entry_id
        await self.query_one("#doc", Markdown).update(markdown)
        options = self.query_one("#related", OptionList)
        options.clear_options()
        for relation, target in related:
            options.add_option(Option(Text.assemble((f"{relation:<12}", "italic"), (f"{target:<5}", "bold"), " ",
                                                    titles.get(target, "")), id=f"{relation}|{target}"))
        options.border_title = "Follow (Enter)" if related else ""
        self.scroll_home(animate=False)

    def open_find(self) -> None:
        box = self.query_one("#find", Input)
        box.add_class("visible")
        box.focus()

    def close_find(self) -> None:
        self.query_one("#find", Input).remove_class("visible")

    def find(self, needle: str, after: int = -1) -> int:
        """Scroll to the next Markdown block containing ``needle``; its index, or -1."""
        needle = needle.lower().strip()
        blocks = list(self.query_one("#doc", Markdown).children)
        if not needle:
            return -1
        order = list(range(after + 1, len(blocks))) + list(range(0, after + 1))
        for index in order:
            source = getattr(blocks[index], "source", None) or str(getattr(blocks[index], "_content", ""))
            if needle in source.lower():
                self.scroll_to_widget(blocks[index], animate=False, top=True)
                return index
        return -1
