"""The claim audit keeps up with the catalogue: every record has its section, every verdict a known kind.

benchmarks/claims_audit/ holds one `### ID — title` section per record with a table of
`| claim | verdict | evidence |` rows (its README says how a claim is judged). A new record
without a section, a verdict outside the legend, or evidence naming a check that does not exist
fails here, so the audit cannot silently fall behind what the catalogue says.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trainkb.catalogue import Catalogue, find_catalogue, load_catalogue

AUDIT = Path(__file__).resolve().parents[1] / "benchmarks" / "claims_audit"
HEADING = re.compile(r"^#{2,3} (?P<ids>[A-Z]{1,2}\d+(?:\s*(?:,|and|/)\s*[A-Z]{1,2}\d+)*) — ", re.MULTILINE)
# the verdicts README.md defines, as a row's verdict cell starts
VERDICTS = ("holds", "wrong → fixed", "over-general → narrowed", "stale → updated", "manual", "removed", "see ")
_CELL_BORDER = re.compile(r"(?<!\\)\|")  # a `\|` inside a cell is a literal bar, as Markdown tables read it
CHECK_REF = re.compile(r"`(?P<entry>[A-Z]{1,2}\d+):(?P<check>[a-z0-9][a-z0-9-]*)`")


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue(find_catalogue())


def _sections() -> dict[str, str]:
    """Record id -> the text of its section (a section may cover several ids: `### O3, O4 — ...`)."""
    sections: dict[str, str] = {}
    for path in sorted(AUDIT.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        marks = list(HEADING.finditer(text))
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            for entry in re.findall(r"[A-Z]{1,2}\d+", mark["ids"]):
                sections[entry] = sections.get(entry, "") + text[mark.start() : end]
    return sections


def _rows(section: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if not line.startswith("|") or set(line) <= {"|", "-", " "}:
            continue
        cells = [cell.strip() for cell in _CELL_BORDER.split(line.strip().strip("|"))]
        if cells[:2] != ["claim", "verdict"]:
            rows.append(cells)
    return rows


def test_every_record_has_an_audit_section(catalogue: Catalogue) -> None:
    missing = sorted(set(catalogue.entries) - set(_sections()))
    assert not missing, f"records with no section in benchmarks/claims_audit/: {missing}"


def test_every_verdict_is_one_the_legend_defines() -> None:
    bad = [
        (entry, row[1])
        for entry, section in _sections().items()
        for row in _rows(section)
        if len(row) >= 3 and not row[1].lower().startswith(VERDICTS)
    ]
    assert not bad, f"verdicts outside the legend: {bad[:10]}"


def test_every_row_has_evidence() -> None:
    bare = [
        (entry, row[0][:60])
        for entry, section in _sections().items()
        for row in _rows(section)
        if len(row) < 3 or not row[2]
    ]
    assert not bare, f"rows without evidence: {bare[:10]}"


def test_evidence_names_checks_that_exist(catalogue: Catalogue) -> None:
    checks = {(entry.id, check.name) for entry in catalogue.entries.values() for check in entry.checks}
    named = {(m["entry"], m["check"]) for section in _sections().values() for m in CHECK_REF.finditer(section)}
    unknown = sorted(ref for ref in named - checks if ref[0] in catalogue.entries)
    assert not unknown, f"evidence names checks the catalogue does not have: {unknown[:10]}"


def test_the_legend_is_what_this_test_reads() -> None:
    legend = (AUDIT / "README.md").read_text(encoding="utf-8")
    for verdict in ("holds", "wrong → fixed", "over-general → narrowed", "stale → updated", "manual"):
        assert f"**{verdict}**" in legend


def test_no_claim_is_left_unverified() -> None:
    """A claim nobody could check is narrowed or removed from its record, never parked in the audit."""
    parked = [
        f"{path.name}:{number}"
        for path in sorted(AUDIT.glob("*.md"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bnot (?:verified here|audited)\b", line, re.IGNORECASE)
    ]
    assert not parked, f"claims parked as unverified: {parked[:10]}"
