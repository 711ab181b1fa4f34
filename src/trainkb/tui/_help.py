"""F1: trainkb's own keys that act now, Quit first, then those of the focused box (Textual's panel lists the
focused TextArea's thirty editing keys before the app's)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.widgets import Static

from ._hints import HINTS

__all__ = ["KeysHelp"]


def _keys(app: App[object], binding: Binding) -> str:
    return " ".join(app.get_key_display(Binding(key, binding.action)) for key in binding.key.split(","))


PANES = {  # what the reader calls the boxes the panel may list the keys of (not the widgets' class names)
    "paste": "paste box",
    "results": "matches",
    "triage": "ranks panel",
    "detail": "entry",
    "related": "links",
    "find": "find box",
    "filter": "filter box",
    "tree": "catalogue tree",
}


class KeysHelp(Static):
    """On a layer of its own over the right of the screen: it hides part of the entry rather than squeezing
    it (at 80 columns a split left the entry fourteen columns)."""

    SCOPED_CSS = False  # the screen's layers are declared here, next to the one widget that uses them
    DEFAULT_CSS = """
    Screen { layers: default keys; }
    KeysHelp { layer: keys; split: right; width: 33%; min-width: 30; max-width: 46; height: 100%;
               border-left: vkey $primary; padding: 0 1; background: $panel; overflow-y: auto; }
    """

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, lambda _screen: self.call_after_refresh(self.fill))
        self.fill()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def fill(self) -> None:
        if not self.is_attached:
            return
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right", style="bold")
        table.add_column()
        table.add_row("", Text("trainkb", style="bold underline"))
        table.add_row("ctrl+q", "Quit")  # first: a short terminal cuts the panel's end
        table.add_row("ctrl+p", "Jump to an entry (palette)")
        for binding in self.app.BINDINGS:
            if not isinstance(binding, Binding) or not binding.description:
                continue
            if binding.id and binding.id.startswith("copy-block-"):  # nine keys, one row
                if binding.id == "copy-block-1" and self.app.check_action("copy_fix", ()):
                    table.add_row("1-9", "Copy the n-th fix block")
                continue
            if binding.id and binding.id.startswith("follow-"):  # a letter per link, one row
                if binding.id == f"follow-{HINTS[0]}" and self.app.check_action("follow_hint", (HINTS[0],)):
                    table.add_row("a-z", "Follow the link showing that key (two letters: press both, Esc cancels)")
                continue
            if "(" not in binding.action and not self.app.check_action(binding.action, ()):
                continue  # a key that does nothing here (copy the fix of a differential) is not listed
            table.add_row(_keys(self.app, binding), binding.description)
        focused = self.app.focused
        seen = {b.key for b in self.app.BINDINGS if isinstance(b, Binding)}
        own = [
            active
            for active in self.screen.active_bindings.values()
            if active.node is focused and active.binding.description and active.binding.key not in seen
        ]
        if focused is not None and own:
            table.add_row("", "")
            name = PANES.get(focused.id or "", "box")
            table.add_row("", Text(f"In the focused {name}", style="bold underline"))
            for active in own:
                table.add_row(
                    _keys(self.app, active.binding), active.binding.description, style="" if active.enabled else "dim"
                )
        self.table = table
        self.update(table)
