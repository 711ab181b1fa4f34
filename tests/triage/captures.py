"""Fixtures captured from real torchrun jobs (see capture_faults.py): where they are, what each should yield."""

from __future__ import annotations

import re
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
_NAME = re.compile(r"^(?P<fault>\w+)-n(?P<n>\d+)-r(?P<k>\d+)$")


def expected(name: str) -> tuple[str, int, int]:
    """(fault, world size, faulty rank) from a capture's folder name, e.g. hang-n2-r1."""
    m = _NAME.match(name)
    assert m, name
    return m["fault"], int(m["n"]), int(m["k"])


def captures(backend: str) -> list[Path]:
    return sorted(p for p in (FIXTURES / backend).iterdir() if p.is_dir())
