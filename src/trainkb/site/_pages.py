"""What each page shows, as plain template data: entries, areas, home and the verification matrix.

Catalogue text reaches the templates either as plain strings (escaped by Jinja's autoescape)
or as HTML from ``_render`` (Markdown with raw HTML disabled); nothing else is marked safe.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from markupsafe import Markup

from ..catalogue import RELATION_LABELS, Catalogue, CheckStatus, Entry, ReportedResult, VerificationMatrix
from ._graph import area_graph
from ._render import code_spans, highlight_code, linked_line, plain, render_inline, render_markdown

__all__ = ["area_page", "check_rows", "entry_page", "environments", "home_page", "verification_page"]

STATUS_LABEL: dict[str, str] = {
    CheckStatus.PASSED: "passed",
    CheckStatus.FAILED: "FAILED",
    CheckStatus.ERROR: "error",
    CheckStatus.SKIPPED: "skipped",
}
NOT_RUN = "not-run"  # no report covers the check in that environment (a cell, never a status a report holds)
FILTER_ORDER = (CheckStatus.FAILED, CheckStatus.ERROR, CheckStatus.PASSED, CheckStatus.SKIPPED, NOT_RUN)


def entry_href(root: str, entry_id: str) -> str:
    return f"{root}{entry_id}/index.html"


def environments(ver: VerificationMatrix) -> list[dict[str, str]]:
    """Report environments in a stable order (CPU first, then by name) with readable labels."""
    names = sorted((str(e.get("name", "")) for e in ver.environments), key=lambda n: (not n.startswith("cpu"), n))
    return [
        {"name": n, "label": ver.label(n), "date": str(ver.environment(n).get("timestamp") or "")[:10]} for n in names
    ]


def _cell(status: ReportedResult | None) -> dict[str, str]:
    if status is None:
        return {"status": NOT_RUN, "label": "not run", "date": "", "message": ""}
    return {
        "status": status.status,
        "label": STATUS_LABEL.get(status.status, status.status),
        "date": (status.timestamp or "")[:10],
        "message": status.message[:300],
    }


def _requires(entry: Entry, index: int) -> str:
    req = entry.checks[index].requires
    needs = [
        f"torch {req.torch}" if req.torch else "",
        "CUDA" if req.cuda else "",
        f"{req.min_gpus} GPUs" if req.min_gpus > 1 else "",
        f"{req.processes} processes" if req.processes > 1 else "",
        ", ".join(req.packages),
    ]
    return ", ".join(n for n in needs if n)


def check_rows(entry: Entry, ver: VerificationMatrix, envs: list[dict[str, str]]) -> list[dict[str, Any]]:
    rows = []
    for index, check in enumerate(entry.checks):
        seen = {s.environment: s for s in ver.for_check(entry.id, check.name)}
        rows.append(
            {
                "entry": entry.id,
                "name": check.name,
                "anchor": f"{entry.id}-{check.name}",
                "claim": Markup(render_inline(check.claim)),
                "demonstrates": check.demonstrates,
                "requires": _requires(entry, index),
                "code": Markup(highlight_code(check.code.rstrip())),
                "cells": [_cell(seen.get(env["name"])) for env in envs],
            }
        )
    return rows


def _link(cat: Catalogue, root: str, target: str, label: str, why: str) -> dict[str, Any]:
    other = cat.entries.get(target)
    return {
        "id": target,
        "label": label,
        "why": Markup(render_inline(why, frozenset(cat.entries), root)),
        "title": code_spans(other.title) if other else "",
        "href": entry_href(root, target) if other else None,
    }


def entry_page(
    cat: Catalogue, entry: Entry, ver: VerificationMatrix, envs: list[dict[str, str]], checks: list[dict[str, Any]]
) -> dict[str, Any]:
    """The fix first (its one-line summary and the Fix section), then symptom, root cause, evidence."""
    root = "../"
    ids = frozenset(cat.entries)
    area = cat.area(entry.area)
    section = next((s.title for s in area.sections if s.id == entry.section), entry.section) if area else ""
    links = [_link(cat, root, x.id, RELATION_LABELS[x.relation], x.why) for x in entry.links]
    forward = {x.id for x in entry.links}  # a link both ways is listed once, by its forward relation
    links += [
        _link(cat, root, b.source, "Linked from", b.why)
        for b in cat.backlinks.get(entry.id, [])
        if b.source not in forward
    ]
    return {
        "root": root,
        "entry": entry,
        "area": area,
        "section": section,
        "title_html": code_spans(entry.title),
        "title_text": plain(entry.title),
        "fix_summary": linked_line(entry.fix_summary, ids, root),
        "symptom": Markup(render_markdown(entry.symptom, ids, root)),
        "root_cause": Markup(render_markdown(entry.root_cause, ids, root)),
        "fix": Markup(render_markdown(entry.fix, ids, root)),
        "notes": [
            {"subject": n.subject, "note": Markup(render_inline(n.note, ids, root))} for n in entry.version_notes
        ],
        "signatures": entry.signatures,
        "signature_notes": [linked_line(sig.note, ids, root) if sig.note else "" for sig in entry.signatures],
        "links": links,
        "external": [
            {"text": e.text, "html": linked_line(e.text, ids, root), "url": e.url if e.url and _http(e.url) else None}
            for e in entry.external
        ],
        "references": [{"title": r.title, "url": r.url if _http(r.url) else None} for r in entry.references],
        "summary": ver.summary(entry),
        "envs": envs,
        "checks": checks,
        "layer": cat.origin.get(entry.id),
    }


def _http(url: str) -> bool:
    return url.lower().startswith(("https://", "http://"))


def area_page(cat: Catalogue, area_id: str) -> dict[str, Any]:
    area = cat.area(area_id)
    assert area is not None
    members = [e for e in cat.ordered() if e.area == area_id]
    rows = [
        {
            "id": e.id,
            "title": code_spans(e.title),
            "section": e.section,
            "layer": cat.origin.get(e.id),
            "links": [x.id for x in e.links if x.id in cat.entries],
        }
        for e in members
    ]
    sections = [
        {"id": s.id, "title": s.title, "entries": [r for r in rows if r["section"] == s.id]} for s in area.sections
    ]
    relations = [
        {
            "id": e.id,
            "title": code_spans(e.title),
            "links": [
                {"label": RELATION_LABELS[x.relation], "id": x.id, "title": code_spans(cat.entries[x.id].title)}
                for x in e.links
                if x.id in cat.entries
            ],
        }
        for e in members
    ]
    return {
        "root": "../",
        "area": area,
        "sections": [s for s in sections if s["entries"]],
        "count": len(members),
        "relations": [r for r in relations if r["links"]],
        "graph": Markup(area_graph(cat, area_id, lambda i: entry_href("../", i))),
    }


def _env_totals(cat: Catalogue, ver: VerificationMatrix, envs: list[dict[str, str]]) -> list[dict[str, Any]]:
    out = []
    for env in envs:
        counts: Counter[str] = Counter()
        for entry in cat.entries.values():
            for check in entry.checks:
                seen = [s for s in ver.for_check(entry.id, check.name) if s.environment == env["name"]]
                counts[seen[0].status if seen else NOT_RUN] += 1
        out.append(
            {
                **env,
                "counts": dict(sorted(counts.items())),
                "passed": counts[CheckStatus.PASSED],
                "ran": sum(v for k, v in counts.items() if k not in (CheckStatus.SKIPPED, NOT_RUN)),
            }
        )
    return out


def home_page(cat: Catalogue, ver: VerificationMatrix, envs: list[dict[str, str]]) -> dict[str, Any]:
    counts = Counter(e.area for e in cat.entries.values())
    without = Counter(e.verification.status for e in cat.entries.values() if e.verification is not None)
    return {
        "root": "",
        "area_rows": [{"area": a, "count": counts[a.id]} for a in cat.areas],
        "entries": len(cat.entries),
        "claims": sum(len(e.checks) for e in cat.entries.values()),
        "totals": _env_totals(cat, ver, envs),
        "manual": without["manual"],
        "pending": without["pending"],
    }


def verification_page(
    cat: Catalogue, ver: VerificationMatrix, envs: list[dict[str, str]], checks: dict[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """Checks grouped by area and entry; each row carries its statuses for the filter buttons."""
    groups: list[dict[str, Any]] = []
    statuses: Counter[str] = Counter()
    for area in cat.areas:
        entries = []
        for entry in (e for e in cat.ordered() if e.area == area.id and e.checks):
            rows = [
                row | {"statuses": " ".join(sorted({c["status"] for c in row["cells"]}))} for row in checks[entry.id]
            ]
            for row in rows:
                statuses.update(set(row["statuses"].split()))
            entries.append({"id": entry.id, "title": code_spans(entry.title), "rows": rows})
        if entries:
            groups.append({"area": area, "entries": entries, "checks": sum(len(e["rows"]) for e in entries)})
    unchecked = [
        {"id": e.id, "title": code_spans(e.title), "verification": e.verification}
        for e in cat.ordered()
        if not e.checks
    ]
    filters = [
        {"status": s, "label": STATUS_LABEL.get(s, s.replace("-", " ")), "count": statuses[s]}
        for s in FILTER_ORDER
        if statuses[s]
    ]
    return {
        "root": "../",
        "envs": envs,
        "groups": groups,
        "totals": _env_totals(cat, ver, envs),
        "unchecked": unchecked,
        "filters": filters,
        "check_count": sum(g["checks"] for g in groups),
    }
