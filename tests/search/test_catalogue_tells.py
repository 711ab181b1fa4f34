"""Catalogue tells on real pastes: each fires on its own cause's output and stays silent on another cause's.

The pastes (tell_cases.jsonl) are copied from the public threads named in each row. A tell that
fired on another cause's output (the threads the records' notes cite) would turn an honest
"unconfirmed" into a confident wrong answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainkb.catalogue import Catalogue, find_catalogue, load_catalogue
from trainkb.search._tells import TellText, fired, tell_data

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "tell_cases.jsonl").read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def catalogue() -> Catalogue:
    return load_catalogue(find_catalogue())


@pytest.mark.parametrize("case", CASES, ids=[f"{c['entry']}-{c['source'].rsplit('/', 3)[1]}" for c in CASES])
def test_tell_reads_the_real_output(catalogue: Catalogue, case: dict[str, object]) -> None:
    tells = catalogue.entries[str(case["entry"])].tells
    assert tells, f"{case['entry']} has no tell"
    view = TellText(str(case["text"]).split("\n"))
    assert any(fired(tell_data(tell), view) for tell in tells) is case["fires"], case["source"]
