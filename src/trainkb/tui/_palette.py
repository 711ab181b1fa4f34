"""Command palette (Ctrl+P): jump to any entry by id, title, alias or tag; focus then lands in the entry."""

from __future__ import annotations

import re
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
SPELLED_OUT = {"oom": "out of memory"}  # a query word, and the phrase most titles and aliases use for it
TOPIC_STEP, TOPIC_CAP = 5.0, 45.0  # per title, alias or tag naming the query; capped below the next tier


def _variants(needle: str) -> set[str]:
    """The query as typed and with its abbreviations spelled out ("cuda oom" and "cuda out of memory")."""
    return {needle, " ".join(SPELLED_OUT.get(word, word) for word in needle.split())}


def _names(text: str, variants: set[str]) -> bool:
    """``text`` holds one of the variants as whole words ("oom" in "OOMs at step 1", not in "a bloom filter")."""
    return any(re.search(rf"(?<![a-z0-9]){re.escape(v)}(?:e?s)?(?![a-z0-9])", text) for v in variants)


def rank(query: str, entry_id: str, title: str, aliases: list[str], tags: list[str]) -> tuple[float, str | None]:
    """How well an entry answers a palette query by words (0 when some word is nowhere), and the alias that did.

    The id itself ranks first, then a title or alias holding the query as a phrase, then one holding every
    word, then every word somewhere among title, aliases and tags. Within a tier, an entry whose title,
    aliases and tags name the query more often is more about it (the OOM entries before one with an OOM alias).
    """
    needle = " ".join(query.lower().split())
    words = needle.split()
    if not words:
        return 0.0, None
    if needle == entry_id.lower():
        return 1000.0, None
    variants = _variants(needle)
    fields = [(title.lower(), None)] + [(alias.lower(), alias) for alias in aliases]
    topic = [text for text, _ in fields] + [tag.lower().replace("-", " ") for tag in tags]
    bonus = min(TOPIC_STEP * sum(_names(text, variants) for text in topic), TOPIC_CAP)

    def has(text: str, word: str) -> bool:
        return word in text or SPELLED_OUT.get(word, word) in text

    for text, alias in fields:
        if any(variant in text for variant in variants):
            return 950.0 + bonus, alias
    for text, alias in fields:
        if all(has(text, word) for word in words):
            return 900.0 + bonus, alias
    everything = " ".join([entry_id.lower(), *topic])
    return (800.0 + bonus, None) if all(has(everything, word) for word in words) else (0.0, None)
