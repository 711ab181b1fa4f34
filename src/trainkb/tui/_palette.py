"""Command palette (Ctrl+P): jump to any entry by id, title or alias."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from ._app import TrainKBApp

__all__ = ["EntryCommands"]


class EntryCommands(Provider):
    @property
    def trainkb(self) -> TrainKBApp:
        """The app whose catalogue this palette searches (TrainKBApp is the only one that lists it)."""
        from ._app import TrainKBApp

        assert isinstance(self.app, TrainKBApp)
        return self.app

    def _candidates(self) -> list[tuple[str, str, str]]:
        kb = self.trainkb.kb
        rows = []
        for entry in kb.catalogue.ordered():
            rows.append((f"{entry.id} {entry.title}", entry.id, entry.title))
            rows += [(f"{entry.id} {alias}", entry.id, f"{entry.title} (alias: {alias})") for alias in entry.aliases]
        return rows

    async def discover(self) -> Hits:
        for text, entry_id, _ in self._candidates():
            if text.startswith(entry_id + " ") and "(alias" not in text:
                yield DiscoveryHit(text, partial(self.trainkb.open_entry, entry_id), help="open entry")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        best: dict[str, tuple[float, str, str]] = {}
        for text, entry_id, help_text in self._candidates():
            score = matcher.match(text)
            if score > 0 and score > best.get(entry_id, (0.0, "", ""))[0]:
                best[entry_id] = (score, text, help_text)
        for entry_id, (score, text, help_text) in best.items():
            yield Hit(score, matcher.highlight(text), partial(self.trainkb.open_entry, entry_id), help=help_text)
