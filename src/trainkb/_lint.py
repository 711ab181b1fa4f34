"""Catalogue-wide rules that one file's schema cannot express."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ._catalogue import Catalogue
from ._jsonschema import MODELINE, SCHEMA_FILE, render_schema
from ._mutation import mutation_problems
from ._regexsafety import nested_quantifier
from ._schema import Entry
from ._yamlio import YamlProblem, dotted

__all__ = ["Finding", "lint_catalogue"]

_FILENAME = re.compile(r"^(?P<id>[A-Z]+[0-9]+)-(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.yaml$")
_PROSE_FIELDS = ("symptom", "root_cause", "fix")


@dataclass(frozen=True)
class Finding:
    """One lint finding; ``rule`` is stable and documented in README."""

    path: str
    line: int
    col: int
    field: str
    rule: str
    message: str

    def __str__(self) -> str:
        field = f"{self.field}: " if self.field else ""
        return f"{self.path}:{self.line}:{self.col}: {field}{self.message} [{self.rule}]"

    def as_dict(self) -> dict[str, object]:
        return {"path": self.path, "line": self.line, "col": self.col, "field": self.field,
                "rule": self.rule, "message": self.message}

    def github(self) -> str:
        message = f"{self.field}: {self.message}" if self.field else self.message
        message = message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
        return f"::error file={self.path},line={self.line},col={self.col},title=kb lint {self.rule}::{message}"


class _Collector:
    def __init__(self, cat: Catalogue) -> None:
        self.cat = cat
        self.findings: list[Finding] = []

    def add(self, entry_id: str, loc: tuple[str | int, ...], rule: str, message: str) -> None:
        _, (line, col) = self.cat.positions[entry_id].position_of(loc)
        self.findings.append(Finding(self.cat.display_path(entry_id), line, col, dotted(loc), rule, message))

    def add_file(self, path: str, rule: str, message: str, line: int = 1) -> None:
        self.findings.append(Finding(path, line, 1, "", rule, message))


def _from_problem(problem: YamlProblem) -> Finding:
    return Finding(problem.path, problem.line, problem.col, problem.field, "schema", problem.message)


def _check_location(out: _Collector, entry: Entry, path: Path) -> None:
    match = _FILENAME.match(path.name)
    if match is None:
        out.add(entry.id, ("id",), "filename", f"file name {path.name!r} must be '<ID>-<slug>.yaml'")
    elif match["id"] != entry.id:
        out.add(entry.id, ("id",), "filename", f"id {entry.id!r} does not match the file name {path.name!r}")
    if path.parent.name != entry.area:
        out.add(entry.id, ("area",), "folder",
                f"area {entry.area!r} does not match the folder {path.parent.name!r}")


def _check_area(out: _Collector, entry: Entry) -> None:
    area = out.cat.area(entry.area)
    if area is None:
        known = ", ".join(a.id for a in out.cat.areas)
        out.add(entry.id, ("area",), "unknown-area", f"unknown area {entry.area!r} (areas.yaml has: {known})")
    elif entry.section not in {s.id for s in area.sections}:
        known = ", ".join(s.id for s in area.sections)
        out.add(entry.id, ("section",), "unknown-section",
                f"unknown section {entry.section!r} of area {area.id!r} (known: {known})")


def _check_prose(out: _Collector, entry: Entry) -> None:
    for name in _PROSE_FIELDS:
        if not getattr(entry, name).strip():
            out.add(entry.id, (name,), "empty-prose", "must not be empty")


def _check_links(out: _Collector, entry: Entry) -> None:
    seen: set[str] = set()
    for i, link in enumerate(entry.links):
        if link.id == entry.id:
            out.add(entry.id, ("links", i, "id"), "self-link", "an entry must not link to itself")
        elif link.id not in out.cat.entries:
            out.add(entry.id, ("links", i, "id"), "dangling-link", f"links to unknown entry {link.id!r}")
        if link.id in seen:
            out.add(entry.id, ("links", i, "id"), "duplicate-link", f"{link.id} is linked more than once")
        seen.add(link.id)
    for i, check in enumerate(entry.checks):
        for j, other in enumerate(check.also_matches):
            if other not in out.cat.entries:
                out.add(entry.id, ("checks", i, "also_matches", j), "dangling-link",
                        f"also_matches names unknown entry {other!r}")


def _check_signatures(out: _Collector, entry: Entry) -> None:
    for i, sig in enumerate(entry.signatures):
        if sig.regex is not None:
            try:
                pattern = re.compile(sig.regex)
            except re.error as exc:
                out.add(entry.id, ("signatures", i, "regex"), "regex-compile", f"regex does not compile: {exc}")
                continue
            if nested_quantifier(sig.regex):
                out.add(entry.id, ("signatures", i, "regex"), "regex-backtracking",
                        "nested quantifier (a repeat inside a repeat) can backtrack catastrophically")
            if not pattern.search(sig.example):
                out.add(entry.id, ("signatures", i, "example"), "signature-example",
                        "the regex does not match its own example")
        elif sig.literal is not None and sig.literal not in sig.example:
            out.add(entry.id, ("signatures", i, "example"), "signature-example",
                    "the literal does not occur in its own example")


def _check_mutations(out: _Collector, entry: Entry) -> None:
    for i, check in enumerate(entry.checks):
        for problem in mutation_problems(check):
            out.add(entry.id, ("checks", i, "mutation"), "mutation", problem)


def _check_urls(out: _Collector, entry: Entry) -> None:
    for i, ref in enumerate(entry.references):
        if not ref.url.startswith("https://"):
            out.add(entry.id, ("references", i, "url"), "reference-https", f"reference URL must be https: {ref.url}")
    for i, ext in enumerate(entry.external):
        if ext.url is not None and not ext.url.startswith("https://"):
            out.add(entry.id, ("external", i, "url"), "reference-https", f"external URL must be https: {ext.url}")


def _check_modeline(out: _Collector, entry: Entry, path: Path) -> None:
    first = path.read_text(encoding="utf-8").split("\n", 1)[0].strip()
    if first != MODELINE:
        out.add_file(out.cat.display_path(entry.id), "modeline", f"first line must be {MODELINE!r}")


def _check_schema_file(out: _Collector) -> None:
    schema_path = out.cat.root / SCHEMA_FILE
    shown = f"{out.cat.root.name}/{SCHEMA_FILE}"
    if not schema_path.is_file():
        out.add_file(shown, "schema-stale", "schema.json is missing; run `kb schema -o catalogue/schema.json`")
    elif schema_path.read_text(encoding="utf-8") != render_schema():
        out.add_file(shown, "schema-stale", "schema.json is out of date; run `kb schema -o catalogue/schema.json`")


def lint_catalogue(cat: Catalogue) -> list[Finding]:
    """Every finding for the catalogue, load problems first, in a stable order."""
    out = _Collector(cat)
    out.findings += [_from_problem(p) for p in cat.problems]
    for entry_id, paths in sorted(cat.duplicates.items()):
        for path in paths[1:]:
            first = cat.display_path(entry_id)
            out.add_file(str(path.relative_to(cat.root.parent)), "duplicate-id",
                         f"id {entry_id!r} is already used by {first}")
    for entry in cat.ordered():
        path = cat.files[entry.id]
        _check_location(out, entry, path)
        _check_area(out, entry)
        _check_prose(out, entry)
        _check_links(out, entry)
        _check_signatures(out, entry)
        _check_mutations(out, entry)
        _check_urls(out, entry)
        _check_modeline(out, entry, path)
    _check_schema_file(out)
    return sorted(out.findings, key=lambda f: (f.path, f.line, f.col, f.rule))
