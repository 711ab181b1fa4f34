"""triage.js holds no copy of `kb triage`'s rules: it reads every one from the site's search index.

The patterns, limits, word lists and sentences live once, in trainkb.ranklog's frozen rule objects;
the engine contract serialises them field by field and triage.js declares the fields it reads. So
this checks the three agree (no field on one side only), that the contract carries the very values
Python runs, and that no value of them is spelt in triage.js, where a copy could drift.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest

from trainkb.ranklog import DECIDE, READ
from trainkb.search._jsregex import js_regex
from trainkb.search.contract import TRIAGE_RULES_VERSION, rules_data

ROOT = Path(__file__).resolve().parents[2]
TRIAGE_JS = (ROOT / "site" / "static" / "triage.js").read_text(encoding="utf-8")


def _declared(part: str) -> list[str]:
    """The field names triage.js declares it reads from one part of the rules."""
    m = re.search(r"\bRULES = \{(.*?)\n  \};", TRIAGE_JS, re.S)
    assert m, "triage.js declares no RULES table"
    listed = re.search(rf"\b{part}: \[(.*?)\]", m[1], re.S)
    assert listed, f"triage.js's RULES table has no {part} list"
    return re.findall(r'"(\w+)"', listed[1])


def test_triage_js_reads_every_rule_and_only_those() -> None:
    assert _declared("read") == [f.name for f in dataclasses.fields(READ)]
    assert _declared("decide") == [f.name for f in dataclasses.fields(DECIDE)]
    assert _declared("tips") == list(DECIDE.tips)
    m = re.search(r"\bRULES_VERSION = (\d+);", TRIAGE_JS)
    assert m and int(m[1]) == TRIAGE_RULES_VERSION


def test_the_contract_carries_the_values_python_runs() -> None:
    read, decide = rules_data(READ), rules_data(DECIDE)
    assert read["prefix"] == js_regex(READ.prefix) and read["timeout"][1] == "iu"  # re.I survives
    assert read["tail_lines"] == READ.tail_lines and decide["tie_seconds"] == DECIDE.tie_seconds
    assert read["wrappers"] == sorted(READ.wrappers) and decide["waited"] == list(DECIDE.waited)
    assert decide["how"] == dict(DECIDE.how) and decide["tips"] == dict(DECIDE.tips)
    json.dumps([read, decide])  # plain JSON, as search-index.js carries it


def _literal_runs(pattern: re.Pattern[str]) -> list[str]:
    """The plain-text stretches of a regex (a dozen characters or more): what a hand copy would repeat."""
    source = re.sub(r"\\(.)", r"\1", pattern.pattern)  # "\ " and "\(" are the characters themselves
    return [run for run in re.split(r"[\\()\[\]|?*+{}^$]", source) if len(run) >= 12]


def _groups(js: str) -> list[set[str]]:
    """The names in each JavaScript array or object written out in ``js``: where a word list would be copied."""
    return [set(re.findall(r"\w+", body)) for body in re.findall(r"[\[{]([^\[\]{}]*)[\]}]", js)]


def test_triage_js_spells_no_rule() -> None:
    """No regex (nor a stretch of one), sentence, word list or limit of the rules is written in triage.js."""
    spelt = []
    groups = _groups(TRIAGE_JS)
    for rules in (READ, DECIDE):
        for field in dataclasses.fields(rules):
            value = getattr(rules, field.name)
            if isinstance(value, re.Pattern):
                spelt += [f"{field.name}: {run!r}" for run in _literal_runs(value) if run in TRIAGE_JS]
            elif isinstance(value, str):
                spelt += [f"{field.name}: {value!r}"] if f'"{value}"' in TRIAGE_JS else []
            elif isinstance(value, int | float):
                # a subscript (a match's group, an item of a pair) is no limit: ``m[2]`` is not ``2``
                number = rf"(?<![\w.\[]){value:g}(?:\.0)?(?![\w.\]])"
                spelt += [f"{field.name}: {value}"] if value not in (0, 1) and re.search(number, TRIAGE_JS) else []
            elif isinstance(value, frozenset | tuple):
                spelt += [f"{field.name}: {sorted(value)}"] if set(value) in groups else []
            else:  # a table of sentences
                spelt += [f"{field.name}.{key}" for key, text in value.items() if text[:30] in TRIAGE_JS]
    assert not spelt, "triage.js spells rules that come from the search index: " + "; ".join(spelt)


def test_the_js_regexes_come_from_the_contract_only() -> None:
    """triage.js's own regexes are the few that mirror str and int (str.strip, str.splitlines, int(), rstrip)."""
    code = re.sub(r"/\*.*?\*/|//[^\n]*", "", TRIAGE_JS, flags=re.S)  # comments
    literals = re.findall(r"(?:[=(,:]|return)\s*(/(?![/*])(?:\\.|\[(?:\\.|[^\]])*\]|[^/\n\[])+/[a-z]*)", code)
    assert sorted(literals) == sorted(
        ["/\\p{Nd}/u", "/^-?[0-9]+$/", "/\\r\\n|[\\n\\r\\x0b\\x0c\\x1c\\x1d\\x1e\\x85\\u2028\\u2029]/", "/\\r+$/"]
    ), literals
    built = re.findall(r"new RegExp\(([^,]+),", code)
    own = ['"^[" + SPACE + "]+"', '"[" + SPACE + "]+$"']  # str.strip's two ends
    assert sorted(built) == sorted([*own, "pair[0]", '"^(?:" + r.prefix[0] + ")"']), built


def test_an_index_without_the_rules_stops_triage(tmp_path: Path) -> None:
    """A site built before the rules moved (or by another version) says so instead of triaging wrongly."""
    if subprocess.run(["node", "--version"], capture_output=True).returncode != 0:  # pragma: no cover
        pytest.skip("needs Node.js")
    script = f"""
        globalThis.window = globalThis;
        const {{ triage }} = require({json.dumps(str(ROOT / "site" / "static" / "triage.js"))});
        const out = [];
        const empty = {{ version: {TRIAGE_RULES_VERSION}, read: {{}}, decide: {{}} }};
        for (const rules of [undefined, {{ version: 999 }}, empty]) {{
            window.TRAINKB_INDEX = {{ search: {{ triage: rules }} }};
            try {{ triage("[rank0]: x\\n[rank1]: y\\n"); out.push(null); }} catch (e) {{ out.push(e.message); }}
        }}
        console.log(JSON.stringify(out));
    """
    messages = json.loads(subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True).stdout)
    assert "has no triage rules" in messages[0]
    assert "reads rules version" in messages[1] and "version 999" in messages[1]
    assert "lack read.context_chars" in messages[2] and "decide.tie_seconds" in messages[2]
