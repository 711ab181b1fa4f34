"""One line per rank above the matches when the paste is multi-rank output: who broke first."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ..triage import Triage

__all__ = ["TriagePanel"]

_STYLE = {"culprit": "bold red", "suspect": "bold yellow", "victim": "dim", "unharmed": "dim"}


class TriagePanel(Static):
    DEFAULT_CSS = """
    TriagePanel { height: auto; max-height: 10; border: round $warning; padding: 0 1; display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Ranks"

    def show(self, triage: Triage | None) -> None:
        """Hide when the paste is not multi-rank; else the culprit first, then every victim."""
        self.display = triage is not None
        if triage is None:
            return
        lines = []
        order = sorted(triage.ranks, key=lambda v: (v.role not in ("culprit", "suspect"), v.rank))
        for v in order:
            what = v.error if v.error and v.how != "silent" else v.description
            line = Text.assemble((f"rank {v.rank:<3} ", "bold"), (f"{v.role:<8} ", _STYLE[v.role]), what[:160])
            if v.rank == triage.explained_rank and triage.entry:
                unconfirmed = " (unconfirmed)" if triage.entry["confidence"] == "low" else ""
                line.append(f"  → {triage.entry['id']}{unconfirmed}", style="bold")
            lines.append(line)
        if triage.root_cause_is_victim:
            lines.append(Text(f"torchrun's Root Cause names rank {triage.root_cause}: only a victim", style="italic"))
        self.border_subtitle = f"{len(triage.ranks)} ranks · {triage.basis}"
        self.update(Text("\n").join(lines))
