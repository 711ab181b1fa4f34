"""The engine contract: the declared, versioned data the browser's port of search reads.

The browser tests (tests/site/test_engine_contract.py) check that engine.js declares these same
fields and refuses an index that lacks one; here, without a browser, that the contract holds
exactly its declared fields and that engine.js reads no constant or regex outside them.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from oom_family import family_records

from trainkb._ownoutput import OWN
from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.search import Index, _hint, get_index
from trainkb.search._hint import HINT
from trainkb.search._index import build_data
from trainkb.search._jsregex import js_regex
from trainkb.search._policy import ANSWER, PASTE, SCORE, WORDS
from trainkb.search._ranks import RANKS
from trainkb.search._tells import TELLS
from trainkb.search.contract import (
    ENGINE_CONTRACT_VERSION,
    RULES,
    CompareContract,
    EngineContract,
    EntryContract,
    ExcludeContract,
    PhraseContract,
    SignatureContract,
    TellContract,
    engine_contract,
)

ENGINE_JS = Path(__file__).resolve().parents[2] / "site" / "static" / "engine.js"
ITEMS = {
    "entries": EntryContract,
    "sigs": SignatureContract,
    "phrases": PhraseContract,
    "excludes": ExcludeContract,
    "tells": TellContract,
}


@pytest.fixture(scope="module")
def contract() -> EngineContract:
    return engine_contract(get_index(find_catalogue()))  # the bundled catalogue's index, as `kb search` reads it


@pytest.fixture
def family(make_catalogue: Callable[..., Path]) -> EngineContract:
    """The contract of a family of CUDA OOM records whose tells use every kind of condition but a series."""
    cat = load_catalogue(make_catalogue(family_records()))
    return engine_contract(Index(build_data(cat.ordered(), cat.content_hash())))


def _keys(declared: Any) -> set[str]:
    assert not declared.__optional_keys__  # every field is required: engine.js refuses an index without one
    return set(declared.__required_keys__)


def test_contract_has_exactly_the_declared_fields(contract: EngineContract) -> None:
    assert set(contract) == _keys(EngineContract)
    assert contract["version"] == ENGINE_CONTRACT_VERSION
    for name, declared in ITEMS.items():
        items: list[dict[str, Any]] = contract[name]  # type: ignore[literal-required]
        if name != "tells":  # the tells are checked on a family that has them (below)
            assert items, f"the real catalogue has no {name}: this test would check nothing"
        for item in items:
            assert set(item) == _keys(declared), (name, item)


def _shapes(contract: EngineContract) -> list[tuple[str, Any]]:
    """(kind, value) of every condition of every tell, each checked to hold exactly one kind."""
    out = []
    for tell in contract["tells"]:
        assert set(tell) == _keys(TellContract)
        assert isinstance(tell["entry"], int) and tell["says"] and tell["when"]
        for condition in tell["when"]:
            assert len(condition) == 1, condition
            ((kind, value),) = condition.items()
            out.append((kind, value))
    return out


def test_tells_hold_their_conditions_with_javascript_regexes(family: EngineContract) -> None:
    shapes = _shapes(family)
    assert {kind for kind, _ in shapes} == {"line", "no_line", "compare"}
    assert [tell["entry"] for tell in family["tells"]] == [0, 1, 2, 3]  # D5 has none
    for kind, value in shapes:
        regex = value["match"] if kind == "compare" else value
        assert isinstance(regex, list) and regex[1] == "iu" and "(?P" not in regex[0], regex
        if kind == "compare":
            assert set(value) == _keys(CompareContract)
    compares = [value for kind, value in shapes if kind == "compare"]
    assert "(?<reserved>" in compares[0]["match"][0] and compares[0]["times"] == 0.5
    assert compares[2]["right"] == 1e12 and compares[1]["right"] == "total"
    assert json.loads(json.dumps(family["tells"])) == family["tells"]


def test_a_series_condition_keeps_its_value_group() -> None:
    from trainkb.search.contract import _condition

    assert _condition({"rises": r"mem (?P<value>[\d.]+ GiB)"}) == {"rises": ["mem (?<value>[0-9.]+ GiB)", "iu"]}


def test_the_new_constants_come_from_the_python_modules(contract: EngineContract) -> None:
    constants, patterns = contract["constants"], contract["patterns"]
    assert constants["SIZE_UNITS"] == dict(TELLS.size_units) and constants["SIZE_UNITS"] is not TELLS.size_units
    assert (constants["RISE_MIN_POINTS"], constants["RISE_RATIO"]) == (TELLS.rise_min_points, TELLS.rise_ratio)
    assert (constants["RISE_MAJORITY"], constants["MAX_SERIES"]) == (TELLS.rise_majority, TELLS.max_series)
    assert (constants["MIN_CANDIDATES"], constants["MAX_CANDIDATES"]) == (ANSWER.min_candidates, ANSWER.max_candidates)
    assert constants["WHY_VOUCHED"] == ANSWER.why_vouched and "{matched}" in constants["WHY_VOUCHED"]
    assert constants["WHY_CHARS"] == ANSWER.why_chars
    assert patterns["SIZE_VALUE"][0].startswith("^")
    assert set(contract["advice"]) == set(_hint.ADVICE) and "symptom_output" in contract["advice"]


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


def test_every_search_rule_is_shipped_under_its_name(contract: EngineContract) -> None:
    """The rules objects are serialised field by field, a regex (or a table of them) with the patterns and
    everything else with the constants: a new rule reaches engine.js without a hand-kept list, and no
    hand-listed name shadows one."""
    names = [prefix + f.name.upper() for prefix, rules in RULES for f in dataclasses.fields(rules)]
    assert len(names) == len(set(names))
    shipped = 0
    for prefix, rules in RULES:
        for f in dataclasses.fields(rules):
            name, value = prefix + f.name.upper(), getattr(rules, f.name)
            if isinstance(value, re.Pattern):
                assert contract["patterns"][name] == js_regex(value), name
            elif f.name == "masks":
                assert contract["patterns"][name] == [[holder, *js_regex(p)] for holder, p in value]
            elif isinstance(value, frozenset):
                assert contract["constants"][name] == sorted(value), name
            else:
                assert json.dumps(contract["constants"][name]) == json.dumps(value, default=dict), name
            shipped += 1
    assert shipped == len(names) and [r for _p, r in RULES] == [PASTE, WORDS, SCORE, ANSWER, HINT, TELLS, OWN, RANKS]


def test_engine_js_declares_exactly_the_shipped_constants(contract: EngineContract) -> None:
    """engine.js's CONTRACT lists the constants it refuses an index without: the ones the contract ships."""
    declared = ENGINE_JS.read_text(encoding="utf-8").split("constants: [", 1)[1].split("]", 1)[0]
    assert set(re.findall(r'"([A-Z][A-Z0-9_]*)"', declared)) == set(contract["constants"])
