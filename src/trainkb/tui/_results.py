"""The ranked results: id, title, area, a score bar and the confidence."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ..search import SearchResponse

__all__ = ["ResultsList"]

_STYLE = {"high": "bold green", "medium": "yellow", "low": "dim"}


def _bar(score: float, width: int = 8) -> str:
    filled = round(score / 100 * width)
    return "█" * filled + "░" * (width - filled)


class ResultsList(OptionList):
    DEFAULT_CSS = """
    ResultsList { height: 1fr; border: round $primary; }
    ResultsList:focus { border: round $secondary; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Matches"

    def show(self, response: SearchResponse | None) -> None:
        self.clear_options()
        if response is None:
            self.add_option(Option(Text("Paste or type above; results appear as you go.", style="dim"),
                                   disabled=True))
            return
        if response.abstained:
            self.add_option(Option(Text("no confident match — closest entries:", style="bold"), disabled=True))
        for result in response.results:
            label = Text.assemble(
                (f"{result.id:<5}", "bold"), " ", (_bar(result.score), _STYLE[result.confidence]),
                f" {result.score:3.0f} ", (f"{result.confidence:<6}", _STYLE[result.confidence]), " ",
                result.title, (f"  · {result.area}", "dim"),
                (f"  · {result.layer}" if result.layer else "", "bold dim"),
            )
            self.add_option(Option(label, id=result.id))
        if not response.results:
            self.add_option(Option(Text("nothing to compare yet", style="dim"), disabled=True))
        self.border_subtitle = f"{response.query_kind}"
