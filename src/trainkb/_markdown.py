"""One entry as a Markdown document: shared by `kb show`, the TUI and the site."""

from __future__ import annotations

from ._catalogue import Catalogue
from ._schema import Entry

__all__ = ["entry_markdown"]

_RELATION_LABEL = {
    "see-also": "See also",
    "cause-of": "Causes",
    "caused-by": "Caused by",
    "pairs-with": "Pairs with",
    "contrast": "Contrast with",
}


def _link_line(cat: Catalogue, target: str, label: str, why: str) -> str:
    other = cat.entries.get(target)
    title = f" — {other.title}" if other else ""
    return f"- **{label}** {target}{title}: {why}"


def entry_markdown(entry: Entry, cat: Catalogue) -> str:
    """Symptom → Root cause → Fix first, then the evidence and the ways out."""
    area = cat.area(entry.area)
    section = next((s.title for s in area.sections if s.id == entry.section), entry.section) if area else ""
    parts = [f"# {entry.id} — {entry.title}", f"*{area.title if area else entry.area} › {section}*"]
    if entry.aliases:
        parts.append("Also known as: " + "; ".join(entry.aliases))
    parts += ["## Symptom", entry.symptom.strip(), "## Root cause", entry.root_cause.strip(),
              "## Fix", entry.fix.strip()]
    if entry.version_notes:
        parts.append("## What changed across torch versions")
        parts += [f"- **torch {n.torch}**: {n.note}" for n in entry.version_notes]
    if entry.signatures:
        parts.append("## What it prints")
        for sig in entry.signatures:
            kind = f"{sig.type} " if sig.type else ""
            note = f" ({sig.note})" if sig.note else ""
            parts.append(f"- {kind}`{sig.example.strip()}`{note}")
    links = [_link_line(cat, link.id, _RELATION_LABEL[link.relation], link.why) for link in entry.links]
    backlinks = [_link_line(cat, b.source, "Linked from", b.why) for b in cat.backlinks.get(entry.id, [])]
    if links or backlinks:
        parts += ["## Related entries", "\n".join(links + backlinks)]
    if entry.external:
        parts.append("## Beyond this catalogue")
        parts.append("\n".join(f"- [{e.text}]({e.url})" if e.url else f"- {e.text}" for e in entry.external))
    if entry.references:
        parts.append("## References")
        parts.append("\n".join(f"- [{r.title}]({r.url})" for r in entry.references))
    parts.append("## Verification")
    if entry.checks:
        parts.append("\n".join(f"- `{c.name}` ({c.demonstrates}): {c.claim}" for c in entry.checks))
    elif entry.verification is not None:
        parts.append(f"{entry.verification.status}: {entry.verification.reason}")
    return "\n\n".join(parts) + "\n"
