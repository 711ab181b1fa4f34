"""The keys that follow an entry's links: one letter each, and two letters once the links outnumber the letters.

As in vimium and qutebrowser, no key is the start of another: with more links than letters, the last letters
become prefixes (``z`` then a letter), so the first links keep their single letter and every link has a key.
"""

from __future__ import annotations

__all__ = ["HINTS", "hint_labels"]

# One key follows a link: the letter shown beside it. Not c d f o (the app's own keys), nor q (quit, elsewhere)
# or j k (a vim user's down and up): pressing them out of habit must not jump to another entry.
HINTS = "abeghilmnprstuvwxyz"


def hint_labels(count: int) -> list[str]:
    """The keys of ``count`` links, in order: single letters, then two-letter keys after the fewest prefixes."""
    letters = len(HINTS)
    prefixes = 0
    while letters - prefixes + prefixes * letters < count and prefixes < letters:
        prefixes += 1
    singles = list(HINTS[: letters - prefixes])
    doubles = [first + second for first in HINTS[letters - prefixes :] for second in HINTS]
    return (singles + doubles)[:count]
