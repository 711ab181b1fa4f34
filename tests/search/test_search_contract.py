"""The engine contract: the declared, versioned data the browser's port of search reads.

The browser tests (tests/site/test_engine_contract.py) check that engine.js declares these same
fields and refuses an index that lacks one; here, without a browser, that the contract holds
exactly its declared fields and that engine.js reads no constant or regex outside them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.search import Index
from trainkb.search._index import build_data
from trainkb.search.contract import (
    ENGINE_CONTRACT_VERSION,
    EngineContract,
    EntryContract,
    ExcludeContract,
    PhraseContract,
    SignatureContract,
    engine_contract,
)

ENGINE_JS = Path(__file__).resolve().parents[2] / "site" / "static" / "engine.js"
ITEMS = {"entries": EntryContract, "sigs": SignatureContract, "phrases": PhraseContract, "excludes": ExcludeContract}


@pytest.fixture(scope="module")
def contract() -> EngineContract:
    cat = load_catalogue(find_catalogue())
    return engine_contract(Index(build_data(cat.ordered(), cat.content_hash(), cat.origin)))


def _keys(declared: Any) -> set[str]:
    assert not declared.__optional_keys__  # every field is required: engine.js refuses an index without one
    return set(declared.__required_keys__)


def test_contract_has_exactly_the_declared_fields(contract: EngineContract) -> None:
    assert set(contract) == _keys(EngineContract)
    assert contract["version"] == ENGINE_CONTRACT_VERSION
    for name, declared in ITEMS.items():
        items: list[dict[str, Any]] = contract[name]  # type: ignore[literal-required]
        assert items, f"the real catalogue has no {name}: this test would check nothing"
        for item in items:
            assert set(item) == _keys(declared), (name, item)


def test_contract_is_plain_json(contract: EngineContract) -> None:
    """What the site writes is what the engine reads: JSON keeps every value (int keys become strings)."""
    loaded = json.loads(json.dumps(contract))
    assert loaded["constants"] == json.loads(json.dumps(contract["constants"]))
    assert loaded["sigs"][0]["regex"] == contract["sigs"][0]["regex"]
    assert all(isinstance(sig["ambiguous"], bool) and 0 < sig["spec"] <= 1 for sig in contract["sigs"])


def _read(name: str) -> set[str]:
    """The names engine.js reads from one table of the contract (``C.NAME`` for constants, ``P.NAME`` for patterns)."""
    return set(re.findall(rf"\b{name}\.([A-Z][A-Z0-9_]*)\b", ENGINE_JS.read_text(encoding="utf-8")))


def test_engine_js_reads_exactly_the_declared_constants_and_patterns(contract: EngineContract) -> None:
    """A constant engine.js reads but the contract lacks would be undefined in the browser (NaN scores);
    one the contract ships but nothing reads is dead weight in every page's index."""
    assert _read("C") == set(contract["constants"])
    assert _read("P") == set(contract["patterns"])


def test_engine_js_declares_the_same_version() -> None:
    found = re.findall(r"var CONTRACT_VERSION = (\d+);", ENGINE_JS.read_text(encoding="utf-8"))
    assert found == [str(ENGINE_CONTRACT_VERSION)]
