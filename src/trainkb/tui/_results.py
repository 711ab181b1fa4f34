"""The ranked results: id, what each is (answer, candidate, closest), title, and the answer's fix."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from .._present import label
from .._terminal import printable
from ..search import SearchResponse
from ._entry import inline_code

__all__ = ["ResultsList"]

_STYLE = {"high": "bold green", "medium": "yellow", "candidate": "cyan", "closest": "dim"}


def _bar(score: float, width: int = 8) -> str:
    filled = round(score / 100 * width)
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

    def watch_show_vertical_scrollbar(self) -> None:
        """Re-wrap the options: the scrollbar takes two columns without a resize, and OptionList caches heights
        measured at the old width, so the list's length (and its thumb) depended on what settled first."""
        self._clear_caches()

    def show(self, response: SearchResponse | None) -> None:
        self.clear_options()
        if response is None:
            self.add_option(Option(Text("Paste or type above; results appear as you go.", style="dim"), disabled=True))
            self.border_subtitle = ""
            return
        headline = {
            "differential": "several causes print this line — candidates (Enter: open one):",
            "unknown": "no confident match — closest entries, unconfirmed:",
        }.get(response.status)
        if headline:
            self.add_option(Option(Text(headline, style="bold"), disabled=True))
        for position, result in enumerate(response.results):
            shown = label(response, position)
            style = _STYLE.get(shown, "dim")
            label_text = Text.assemble((f"{result.id:<5}", "bold"), " ")
            if not self.compact_rows and shown in ("high", "medium"):
                label_text.append(_bar(result.score) + " ", style)
            label_text.append_text(
                Text.assemble((f"{shown:<9}", style), " ", inline_code(printable(result.title, newlines=False)))
            )
            if not self.compact_rows:
                label_text.append(f"  · {result.area}", "dim")
            if result.layer:  # an entry of a team's layer says whose it is
                label_text.append(f"  · {printable(result.layer, newlines=False)}", "bold dim")
            if shown in ("high", "medium") and result.fix_summary:  # a guess's fix would read as advice
                fix = inline_code(printable(result.fix_summary, newlines=False))
                label_text.append_text(Text.assemble("\n      ", ("fix: ", "green"), fix))
            self.add_option(Option(label_text, id=result.id))
        if not response.results:
            self.add_option(Option(Text("nothing to compare yet", style="dim"), disabled=True))
        if response.advice:
            self.add_option(Option(Text(response.advice, style="italic"), disabled=True))
        self.border_subtitle = f"{response.query_kind} · Enter: read"
