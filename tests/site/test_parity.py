"""The browser's paste search agrees with `kb search` on the top result of the benchmark cases.

Cases come from the shared benchmark file (read here, never copied into the repository) and
from the case files under benchmarks/. Agreement means the same top entry, or both abstaining.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from trainkb._catalogue import Catalogue
from trainkb.search import Index, search
from trainkb.search._index import build_data

SHARED_CASES = Path("/work/shared/bench/dev-cases.jsonl")
REPO_CASES = sorted((Path(__file__).resolve().parents[2] / "benchmarks").glob("*cases*.jsonl"))
GOAL = 0.95


def _cases() -> list[dict[str, str]]:
    out = []
    for path in ([SHARED_CASES] if SHARED_CASES.is_file() else []) + REPO_CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                out.append({"id": f"{path.name}:{case.get('id', len(out))}", "text": case["text"]})
    return out


def _top(response_abstained: bool, ids: list[str]) -> str | None:
    return None if response_abstained or not ids else ids[0]


def test_top1_agrees_with_kb_search(real_catalogue: Catalogue, real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    cases = _cases()
    if not cases:
        pytest.skip(f"no benchmark cases: neither {SHARED_CASES} nor benchmarks/*cases*.jsonl")
    index = Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash()))
    expected = []
    for case in cases:
        response = search(case["text"], top=3, catalogue=index)
        expected.append(_top(response.abstained, [r.id for r in response.results]))
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    got = page.evaluate("""texts => texts.map(t => {
        const r = window.TrainkbSearch.paste(t);
        return r.abstained || !r.results.length ? null : r.results[0].id;
    })""", [c["text"] for c in cases])
    page.close()
    agree = sum(a == b for a, b in zip(expected, got, strict=True))
    misses = [(c["id"], a, b) for c, a, b in zip(cases, expected, got, strict=True) if a != b]
    print(f"\nparity: {agree}/{len(cases)} = {agree / len(cases):.1%} top-1 agreement")
    assert agree / len(cases) >= GOAL, misses


def test_partial_ratio_matches_rapidfuzz(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    alphabet = "abcde fgh<>_:."
    pairs = []
    for _ in range(300):
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 64)))
        hay = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200)))
        pairs.append([needle, hay])
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    got = page.evaluate("pairs => pairs.map(p => window.TrainkbEngine.partialRatio(p[0], p[1], 0))", pairs)
    page.close()
    for (a, b), score in zip(pairs, got, strict=True):
        assert score == pytest.approx(fuzz.partial_ratio(a, b), abs=1e-6), (a, b)
