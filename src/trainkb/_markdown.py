"""The catalogue's Markdown: one entry as a document (`kb show`, the TUI, the site) and the code
blocks of a prose field (the TUI's copy keys, lint)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from .catalogue import RELATION_LABELS, Catalogue, Entry

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

__all__ = ["code_blocks", "entry_header", "entry_markdown"]

LinkMaker = Callable[[str], str]


@cache
def _commonmark() -> MarkdownIt:
    from markdown_it import MarkdownIt  # only here: `kb search` never parses Markdown

    return MarkdownIt("commonmark")


@lru_cache(maxsize=1024)
def code_blocks(prose: str) -> tuple[Token, ...]:
    """The fenced and indented code blocks of ``prose``, in order, as CommonMark reads them (parsed once
    per text: lint reads a fix for two rules). Tokens are shared: read them, never change them."""
    return tuple(t for t in _commonmark().parse(prose) if t.type in ("fence", "code_block"))


def _inline(text: str) -> str:
    """Plain text made safe as inline Markdown: `<image>` must not vanish as an HTML tag."""
    return text.replace("\\", "\\\\").replace("<", "\\<").replace("*", "\\*").replace("_", "\\_")


def _link_line(cat: Catalogue, target: str, label: str, why: str, link: LinkMaker | None) -> str:
    other = cat.entries.get(target)
    title = f" — {other.title}" if other else ""
    name = f"[{target}]({link(target)})" if link and other else target
    return f"- **{label}** {name}{title}: {why}"


def entry_header(entry: Entry, cat: Catalogue) -> tuple[str, str]:
    """(where the entry sits: "area › section", its aliases on one line) for a header."""
    area = cat.area(entry.area)
    section = next((s.title for s in area.sections if s.id == entry.section), entry.section) if area else ""
    where = f"{area.title if area else entry.area} › {section}"
    if entry.id in cat.origin:  # an entry of a layer over the base catalogue says whose it is
        where += f" · from the {cat.origin[entry.id]} catalogue"
    return where, "; ".join(entry.aliases)


def entry_markdown(
    entry: Entry,
    cat: Catalogue,
    link: LinkMaker | None = None,
    verification: list[str] | None = None,
    header: bool = True,
) -> str:
    """The fix first (summary, then the Fix section), then Symptom and Root cause, then the rest.

    ``link`` turns an entry id into a URL (the TUI and the site each have their own);
    ``verification`` replaces the plain list of checks with what the reports say; without
    ``header`` the title, place, summary and aliases are left to the caller to show.
    """
    parts = []
    where, aliases = entry_header(entry, cat)
    if header:
        parts += [f"# {entry.id} — {entry.title}", f"*{where}*", f"**Fix:** {entry.fix_summary}"]
    parts += [
        "## Fix",
        entry.fix.strip(),
        "## Symptom",
        entry.symptom.strip(),
        "## Root cause",
        entry.root_cause.strip(),
    ]
    if header and aliases:
        parts.append("*Also known as: " + _inline(aliases) + "*")
    if entry.version_notes:
        parts.append("## What changed across torch versions")
        parts += [f"- **{n.subject}**: {n.note}" for n in entry.version_notes]
    if entry.signatures:
        parts.append("## What it prints")
        for sig in entry.signatures:
            kind = f"{sig.type} " if sig.type else ""
            note = f" ({sig.note})" if sig.note else ""
            parts.append(f"- {kind}`{sig.example.strip()}`{note}")
    links = [_link_line(cat, x.id, RELATION_LABELS[x.relation], x.why, link) for x in entry.links]
    backlinks = [_link_line(cat, b.source, "Linked from", b.why, link) for b in cat.backlinks.get(entry.id, [])]
    if links or backlinks:
        parts += ["## Related entries", "\n".join(links + backlinks)]
    if entry.external:
        parts.append("## Beyond this catalogue")
        parts.append("\n".join(f"- [{e.text}]({e.url})" if e.url else f"- {e.text}" for e in entry.external))
    if entry.references:
        parts.append("## References")
        parts.append("\n".join(f"- [{r.title}]({r.url})" for r in entry.references))
    parts.append("## Verification")
    if verification is not None:
        parts.append("\n".join(f"- {line}" for line in verification))
    elif entry.checks:
        parts.append("\n".join(f"- `{c.name}` ({c.demonstrates}): {c.claim}" for c in entry.checks))
    elif entry.verification is not None:
        parts.append(f"{entry.verification.status}: {entry.verification.reason}")
    return "\n\n".join(parts) + "\n"
