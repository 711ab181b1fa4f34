"""The detail pane: the fix first (title, one-line fix, Fix), then the rest of the entry."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Input, Markdown, OptionList, Static
from textual.widgets.option_list import Option

from ..catalogue import Entry

__all__ = ["EntryView", "inline_code"]


def inline_code(text: str, code_style: str = "bold") -> Text:
    """A one-line field with its `inline code` styled and the backticks dropped."""
    out = Text()
    for i, part in enumerate(text.split("`")):
        out.append(part, style=code_style if i % 2 else "")
    return out


class EntryView(VerticalScroll):
    DEFAULT_CSS = """
    EntryView { border: round $primary; padding: 0 1; }
    EntryView:focus, EntryView:focus-within { border: round $secondary; }
    EntryView #find { display: none; }
    EntryView #find.visible { display: block; }
    EntryView #title { text-style: bold; color: $text; }
    EntryView #aka { color: $text-muted; height: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    EntryView #summary { background: $success 15%; border-left: thick $success; padding: 0 1; margin: 1 0 0 0; }
    EntryView #summary.-hidden, EntryView #aka.-hidden { display: none; }
    EntryView #doc { margin: 0; }
    EntryView MarkdownFence { overflow-x: hidden; }
    EntryView MarkdownFence > Label { width: 1fr; }
    EntryView #related { height: auto; max-height: 12; border: none; }
    """

    def compose(self) -> ComposeResult:
        yield Input(placeholder="find in entry (Enter: next, Esc: close)", id="find")
        yield Static("Nothing selected yet: paste above, or Ctrl+P to jump to an entry.", id="title")
        yield Static("", id="aka", classes="-hidden")
        yield Static("", id="summary", classes="-hidden")
        yield Markdown("", id="doc", open_links=False)
        yield OptionList(id="related")

    def on_mount(self) -> None:
        self.border_title = "Entry"

    async def show(
        self,
        entry: Entry,
        where: str,
        aliases: str,
        markdown: str,
        related: list[tuple[str, str]],
        titles: dict[str, str],
    ) -> None:
        self.border_title = entry.id
        self.query_one("#title", Static).update(inline_code(f"{entry.id} — {entry.title}"))
        aka = self.query_one("#aka", Static)
        aka.update(Text(f"{where} · also: {aliases}" if aliases else where))
        aka.set_class(False, "-hidden")
        summary = self.query_one("#summary", Static)
        summary.update(Text.assemble(("Fix: ", "bold"), inline_code(entry.fix_summary)))
        summary.set_class(False, "-hidden")
        await self.query_one("#doc", Markdown).update(markdown)
        options = self.query_one("#related", OptionList)
        options.clear_options()
        for relation, target in related:
            options.add_option(
                Option(
                    Text.assemble(
                        (f"{relation:<12}", "italic"),
                        (f"{target:<5}", "bold"),
                        " ",
                        inline_code(titles.get(target, "")),
                    ),
                    id=f"{relation}|{target}",
                )
            )
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
