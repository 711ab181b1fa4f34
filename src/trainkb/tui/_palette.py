"""Command palette (Ctrl+P): jump to any entry by id, title, alias or tag; focus then lands in the entry."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider

if TYPE_CHECKING:
    from ._app import TrainKBApp

__all__ = ["FUZZY_CAP", "EntryCommands", "rank"]


class EntryCommands(Provider):
    @property
    def trainkb(self) -> TrainKBApp:
        """The app whose catalogue this palette searches (TrainKBApp is the only one that lists it)."""
        from ._app import TrainKBApp

        assert isinstance(self.app, TrainKBApp)
        return self.app

    async def discover(self) -> Hits:
        for entry in self.trainkb.kb.catalogue.ordered():
            yield DiscoveryHit(f"{entry.id} {entry.title}", partial(self.trainkb.jump, entry.id))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for entry in self.trainkb.kb.catalogue.ordered():
            score, alias = rank(query, entry.id, entry.title, entry.aliases, entry.tags)
            text = f"{entry.id} {entry.title}"
            if not score:
                score = min(matcher.match(text), FUZZY_CAP)  # below every entry that names each word
            if score > 0:
                help_text = f"also: {alias}" if alias else None
                yield Hit(score, matcher.highlight(text), partial(self.trainkb.jump, entry.id), help=help_text)


FUZZY_CAP = 500.0  # Textual's fuzzy scores are unbounded; a word match always ranks above one


def rank(query: str, entry_id: str, title: str, aliases: list[str], tags: list[str]) -> tuple[float, str | None]:
    """How well an entry answers a palette query by words (0 when some word is nowhere), and the alias that did.

    The id itself ranks first, then a title or alias holding the query as a phrase, then one holding every
    word, then every word somewhere among title, aliases and tags.
    """
    needle = " ".join(query.lower().split())
    words = needle.split()
    if not words:
        return 0.0, None
    if needle == entry_id.lower():
        return 1000.0, None
    fields = [(title.lower(), None)] + [(alias.lower(), alias) for alias in aliases]
    for text, alias in fields:
        if needle in text:
            return 950.0, alias
    for text, alias in fields:
        if all(word in text for word in words):
            return 900.0, alias
    everything = " ".join([entry_id.lower(), *(text for text, _ in fields), *(tag.lower() for tag in tags)])
    return (800.0, None) if all(word in everything for word in words) else (0.0, None)
