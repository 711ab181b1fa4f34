"""Each area's entries and their links as an SVG drawn at build time (no JavaScript library).

Entries sit on a circle in catalogue order, so a section forms an arc; links are curves
bent toward the centre, styled by relation. Entries of other areas that a link reaches sit
on an outer ring near their first partner. Every node is a link to its page.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from markupsafe import escape

from ..catalogue import Catalogue, Entry

__all__ = ["area_graph"]

_NODE_W, _NODE_H, _SPACING, _OUTER = 46, 22, 50, 60


def _num(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _positions(ids: list[str], radius: float, centre: float) -> dict[str, tuple[float, float, float]]:
    out = {}
    for i, entry_id in enumerate(ids):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(ids), 1)
        out[entry_id] = (centre + radius * math.cos(angle), centre + radius * math.sin(angle), angle)
    return out


def _edges(cat: Catalogue, members: list[Entry]) -> list[tuple[str, str, str]]:
    """(source, target, relation) for every link from or to an entry of the area, once each."""
    inside = {e.id for e in members}
    seen: set[tuple[str, str, str]] = set()
    for entry in members:
        seen.update((entry.id, link.id, link.relation) for link in entry.links if link.id in cat.entries)
        seen.update(
            (b.source, entry.id, b.relation)
            for b in cat.backlinks.get(entry.id, [])
            if b.source not in inside and b.source in cat.entries
        )
    return sorted(seen)


def _outer(
    edges: list[tuple[str, str, str]], inside: dict[str, tuple[float, float, float]], radius: float, centre: float
) -> dict[str, tuple[float, float, float]]:
    """Entries of other areas on a ring, ordered by the angle of their first partner in the area."""
    partner: dict[str, float] = {}
    for source, target, _rel in edges:
        for here, there in ((source, target), (target, source)):
            if here in inside and there not in inside:
                partner.setdefault(there, inside[here][2])
    ordered = sorted(partner, key=lambda i: (partner[i], i))
    ring = radius + _OUTER
    gap = (_NODE_W + 8) / ring  # radians between neighbours so boxes never overlap
    out: dict[str, tuple[float, float, float]] = {}
    previous = -math.inf
    for entry_id in ordered:
        angle = max(partner[entry_id], previous + gap)
        previous = angle
        out[entry_id] = (centre + ring * math.cos(angle), centre + ring * math.sin(angle), angle)
    return out


def _edge_path(a: tuple[float, float, float], b: tuple[float, float, float], centre: float) -> str:
    mx, my = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
    cx, cy = mx + (centre - mx) * 0.45, my + (centre - my) * 0.45
    start, end = _toward(a, cx, cy, 12), _toward(b, cx, cy, 16)  # leave the node boxes uncovered
    return f"M{_num(start[0])},{_num(start[1])} Q{_num(cx)},{_num(cy)} {_num(end[0])},{_num(end[1])}"


def _toward(point: tuple[float, float, float], x: float, y: float, distance: float) -> tuple[float, float]:
    dx, dy = x - point[0], y - point[1]
    length = math.hypot(dx, dy) or 1.0
    return point[0] + dx / length * distance, point[1] + dy / length * distance


def _node(entry_id: str, pos: tuple[float, float, float], title: str, href: str, css: str) -> str:
    x, y = pos[0] - _NODE_W / 2, pos[1] - _NODE_H / 2
    return (
        f'<a href="{escape(href)}" class="{css}"><title>{escape(entry_id)}: {escape(title)}</title>'
        f'<rect x="{_num(x)}" y="{_num(y)}" width="{_NODE_W}" height="{_NODE_H}" rx="5"/>'
        f'<text x="{_num(pos[0])}" y="{_num(pos[1] + 4)}">{escape(entry_id)}</text></a>'
    )


def area_graph(cat: Catalogue, area_id: str, href: Callable[[str], str]) -> str:
    """The SVG markup of one area's link graph; ``href`` maps an entry id to a relative URL."""
    members = [e for e in cat.ordered() if e.area == area_id]
    radius = max(130.0, len(members) * _SPACING / (2 * math.pi))
    edges = _edges(cat, members)
    has_outer = any(s not in {m.id for m in members} or t not in {m.id for m in members} for s, t, _ in edges)
    centre = radius + _NODE_W + (_OUTER if has_outer else 0) + 8
    inside = _positions([e.id for e in members], radius, centre)
    outside = _outer(edges, inside, radius, centre)
    where = {**inside, **outside}
    size = _num(2 * centre)
    title_id, desc_id = f"graph-{area_id}-title", f"graph-{area_id}-desc"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" viewBox="0 0 {size} {size}" width="{size}" '
        f'height="{size}" aria-labelledby="{title_id} {desc_id}">',
        f'<title id="{title_id}">Links between the entries of this area</title>',
        f'<desc id="{desc_id}">{len(members)} entries of this area on a circle, {len(outside)} linked entries of '
        f"other areas on the outer ring, {len(edges)} links drawn as arrows from the linking entry. "
        "The entry list on this page has the same links as text.</desc>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" class="arrowhead"/></marker></defs>',
        '<g class="edges" fill="none" stroke="#888">',
    ]
    for source, target, relation in edges:
        parts.append(
            f'<path class="edge rel-{escape(relation)}" d="{_edge_path(where[source], where[target], centre)}"'
            f' marker-end="url(#arrow)"><title>{escape(source)} {escape(relation)} {escape(target)}'
            "</title></path>"
        )
    parts.append('</g><g class="nodes">')
    for entry_id, pos in where.items():
        css = "node" if entry_id in inside else "node other-area"
        parts.append(_node(entry_id, pos, cat.entries[entry_id].title.replace("`", ""), href(entry_id), css))
    parts.append("</g></svg>")
    return "\n".join(parts)
