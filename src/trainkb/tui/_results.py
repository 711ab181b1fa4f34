"""The ranked results as the shared view words them: id, what each is, title, and the fix where it is shown."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .._present import view
from .._terminal import printable
from ..search import SearchResponse
from ._entry import inline_code

__all__ = ["ResultsList"]

_STYLE = {"high": "bold green", "medium": "yellow", "candidate": "cyan", "closest": "dim"}
LABEL_WIDTH = 9  # the label column; a longer label pushes its title along


_FILLED = {"high": 8, "medium": 4}  # of the bar's 8 cells: it says the confidence, as the word beside it does


def _bar(label: str, width: int = 8) -> str:
    """A full bar means a high answer only (a score of 100 can still be a medium one: the score is no confidence)."""
    filled = _FILLED[label] * width // 8
    return "█" * filled + "░" * (width - filled)


class ResultsList(OptionList):
    DEFAULT_CSS = """
    ResultsList { height: 1fr; border: round $foreground 25%; }
    ResultsList:focus { border: heavy $border; border-title-color: $border; border-title-style: bold; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Matches"
        self.compact_rows = False  # narrow terminals drop the score bar

    def on_focus(self) -> None:
        self.highlight_first()

    def highlight_first(self) -> None:
        """Put the cursor on the first match or candidate, unopened (the entry pane keeps what it says of them),
        so Enter opens it: a focused list with no row highlighted looks ready yet ignores Enter."""
        if self.highlighted is None:
            first = next((i for i, option in enumerate(self._options) if not option.disabled), None)
            with self.prevent(OptionList.OptionHighlighted):
                self.highlighted = first

    def watch_show_vertical_scrollbar(self) -> None:
        """Re-wrap the options: the scrollbar takes two columns without a resize, and OptionList caches heights
        measured at the old width, so the list's length (and its thumb) depended on what settled first."""
        self._clear_caches()

    def searching(self) -> None:
        """A paste is being searched: the last paste's matches are gone, so Enter cannot open one of them."""
        self.clear_options()
        self.add_option(Option(Text("Searching…", style="dim"), disabled=True))
        self.border_subtitle = ""

    def show(self, response: SearchResponse | None) -> None:
        self.clear_options()
        if response is None:
            self.add_option(Option(Text("Paste or type above; results appear as you go.", style="dim"), disabled=True))
            self.border_subtitle = ""
            return
        shown = view(response)
        if shown.headline:
            self.add_option(Option(Text(shown.headline, style="bold"), disabled=True))
        for row in shown.rows:
            result = row.result
            style = _STYLE[row.label]
            label_text = Text.assemble((f"{result.id:<5}", "bold"), " ")
            if not self.compact_rows and row.label in ("high", "medium"):
                label_text.append(_bar(row.label) + " ", style)
            label_text.append_text(
                Text.assemble(
                    (f"{row.label_text:<{LABEL_WIDTH}}", style),
                    " ",
                    inline_code(printable(result.title, newlines=False)),
                )
            )
            if not self.compact_rows:
                label_text.append(f"  · {result.area}", "dim")
            if result.layer:  # an entry of a team's layer says whose it is
                label_text.append(f"  · {printable(result.layer, newlines=False)}", "bold dim")
            if row.shows_fix:
                fix = inline_code(printable(result.fix_summary, newlines=False))
                label_text.append_text(Text.assemble("\n      ", ("fix: ", "green"), fix))
            self.add_option(Option(label_text, id=result.id))
        if shown.advice:
            advice = inline_code(printable(shown.advice, newlines=False))  # `django` in bold, not in backticks
            advice.stylize("italic")
            self.add_option(Option(advice, disabled=True))
        self.border_subtitle = f"{response.query_kind} · Enter: read" if shown.rows else response.query_kind
