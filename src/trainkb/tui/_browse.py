"""Browse: areas → sections → entries, narrowed by a filter box."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Tree

from ._model import KnowledgeBase

__all__ = ["BrowsePane"]


class BrowsePane(Vertical):
    DEFAULT_CSS = """
    BrowsePane { border: round $foreground 25%; }
    BrowsePane:focus-within { border: heavy $border; border-title-color: $border; border-title-style: bold; }
    BrowsePane #tree { height: 1fr; }
    """

    def __init__(self, kb: KnowledgeBase, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.kb = kb

    def compose(self) -> ComposeResult:
        yield Input(placeholder="filter by id, title, alias or tag", id="filter")
        yield Tree("catalogue", id="tree")

    def on_mount(self) -> None:
        self.border_title = "Browse"
        self.fill("")

    def fill(self, query: str) -> None:
        tree = self.query_one("#tree", Tree)
        tree.clear()
        tree.show_root = False
        wanted = {e.id for e in self.kb.matches(query)}
        for area in self.kb.catalogue.areas:
            entries = [e for e in self.kb.catalogue.ordered() if e.area == area.id and e.id in wanted]
            if not entries:
                continue
            area_node = tree.root.add(f"{area.title} ({len(entries)})", expand=bool(query))
            for section in area.sections:
                in_section = [e for e in entries if e.section == section.id]
                if not in_section:
                    continue
                section_node = area_node.add(section.title, expand=True)
                for entry in in_section:
                    section_node.add_leaf(f"{entry.id}  {entry.title}", data=entry.id)
        self.border_subtitle = f"{len(wanted)} entries"

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.fill(event.value)
