"""One line per rank above the matches when the paste is multi-rank output: who broke first."""

from __future__ import annotations

from textwrap import shorten

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..ranklog import DECIDE
from ..triage import Triage
from ._entry import inline_code

__all__ = ["TriagePanel"]

WHAT_CHARS = 160  # of a rank's error, cut at a word (the whole line is in the paste box)
_STYLE = {"culprit": "bold red", "suspect": "bold yellow", "victim": "dim", "unharmed": "dim"}


def _basis(triage: Triage) -> str:
    """Why the culprit was named, in the triage's words: a rank killed by a signal printed no error of its own."""
    if triage.basis != "own-error":
        return triage.basis
    culprits = [v for v in triage.ranks if v.role == "culprit"]
    if len(culprits) > 1:
        return f"ranks {', '.join(str(v.rank) for v in culprits)} failed on their own at about the same time"
    if culprits and culprits[0].how in ("signal", "exited"):
        return f"rank {culprits[0].rank} {DECIDE.how[culprits[0].how]}"
    return DECIDE.basis[triage.basis]


class TriagePanel(VerticalScroll):
    """Every rank line and what to collect next time; focusable and scrollable, so nothing is cut off."""

    DEFAULT_CSS = """
    TriagePanel { height: auto; max-height: 10; border: round $warning 60%; padding: 0 1; display: none; }
    TriagePanel:focus { border: heavy $border; border-title-color: $border; border-title-style: bold; }
    TriagePanel > Static { height: auto; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Ranks"
        self.text = Text()

    def compose(self) -> ComposeResult:
        yield Static(id="triage-text")

    def render_text(self) -> Text:
        """What the panel holds, all of it (the panel may show only part and scroll)."""
        return self.text

    def show(self, triage: Triage | None) -> None:
        """Hide when the paste is not multi-rank; else the culprit first, then every victim."""
        self.display = triage is not None
        if triage is None:
            return
        lines = []
        order = sorted(triage.ranks, key=lambda v: (v.role not in ("culprit", "suspect"), v.rank))
        for v in order:
            what = v.error if v.error and v.how != "silent" else v.description
            line = Text.assemble(
                (f"rank {v.rank:<3} ", "bold"),
                (f"{v.role:<8} ", _STYLE[v.role]),
                shorten(what, WHAT_CHARS, placeholder=" …"),
            )
            if v.rank == triage.explained_rank and triage.entry:
                unconfirmed = " (unconfirmed)" if triage.entry["confidence"] == "low" else ""
                line.append(f"  → {triage.entry['id']}{unconfirmed}", style="bold")
            lines.append(line)
        if triage.root_cause_is_victim:
            lines.append(Text(f"torchrun's Root Cause names rank {triage.root_cause}: only a victim", style="italic"))
        if triage.collect:
            lines.append(Text("Next time:", style="bold"))
            lines += [Text.assemble("• ", inline_code(tip)) for tip in triage.collect]
        self.border_subtitle = f"{len(triage.ranks)} ranks · {_basis(triage)}"
        self.text = Text("\n").join(lines)
        self.query_one("#triage-text", Static).update(self.text)
        self.scroll_home(animate=False)
