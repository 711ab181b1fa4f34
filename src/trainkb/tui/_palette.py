"""Command palette (Ctrl+P): jump to any entry by id, title or alias."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

__all__ = ["EntryCommands"]


class EntryCommands(Provider):
    def _candidates(self) -> list[tuple[str, str, str]]:
        kb = self.app.kb  # type: ignore[attr-defined]
        rows = []
        for entry in kb.catalogue.ordered():
            rows.append((f"{entry.id} {entry.title}", entry.id, entry.title))
            rows += [(f"{entry.id} {alias}", entry.id, f"{entry.title} (alias: {alias})") for alias in entry.aliases]
        return rows

    async def discover(self) -> Hits:
        for text, entry_id, _ in self._candidates():
            if text.startswith(entry_id + " ") and "(alias" not in text:
                yield DiscoveryHit(text, partial(self.app.open_entry, entry_id), help="open entry")  # type: ignore[attr-defined]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        best: dict[str, tuple[float, str, str]] = {}
        for text, entry_id, help_text in self._candidates():
            score = matcher.match(text)
            if score > 0 and score > best.get(entry_id, (0.0, "", ""))[0]:
                best[entry_id] = (score, text, help_text)
        for entry_id, (score, text, help_text) in best.items():
            yield Hit(score, matcher.highlight(text), partial(self.app.open_entry, entry_id),  # type: ignore[attr-defined]
                      help=help_text)
