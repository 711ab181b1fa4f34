"""No signature regex can freeze search: RE2 runs them in linear time; lint and the site refuse the rest.

Each hostile pattern below takes Python's backtracking engine seconds to minutes on the line
beside it (measured on the old engine: 26 `a`s 4.9 s, 44 characters 40 s).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import record

from trainkb.catalogue import load_catalogue
from trainkb.cli import main
from trainkb.lint import lint_catalogue
from trainkb.search import search
from trainkb.search._sigregex import compile_signature
from trainkb.site._export import search_data

HOSTILE = [  # (regex, example it matches, a line that makes a backtracking engine explode)
    ("(a+)+b", "aaab", "a" * 40),
    ("zq(xx?)+y", "zqxxy", "zq" + "x" * 60),
    ("(a|aa)+$", "aaaa", "a" * 60 + "!"),
    (r"got \S*\s*\S*\s*\S*x", "got a b x", "got " + "a" * 1900),  # polynomial: 23 s at 500 chars in Chromium
    # the site's search in node: 4.1 s at 26 underscores, doubling with each; the parser folds the branches into [\w_]
    (r"zqxtoken (\w|_)+$", "zqxtoken a_b", "zqxtoken " + "_" * 40 + "!"),
    (r"zqab (?:[ab]|[bc])+$", "zqab abcb", "zqab " + "b" * 40 + "!"),
    (r"zqc (a{1,30}){1,30}$", "zqc aaaa", "zqc " + "a" * 60 + "!"),
    ("zqd a{0,100}a{0,100}a{0,100}a{0,100}b", "zqd aab", "zqd " + "a" * 300),
]


def _signature(regex: str, example: str) -> str:
    return f"signatures:\n  - regex: {json.dumps(regex)}\n    example: {json.dumps(example)}\n    names_cause: true\n"


@pytest.fixture
def hostile(make_catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    records = {
        f"alpha/D{i + 1}-hostile.yaml": record(f"D{i + 1}", extra=_signature(regex, example))
        for i, (regex, example, _line) in enumerate(HOSTILE)
    }
    records["alpha/D9-lookaround.yaml"] = record("D9", extra=_signature("(?<=size )mismatch", "size mismatch"))
    return make_catalogue(records)


@pytest.mark.parametrize(("regex", "line"), [(regex, line) for regex, _example, line in HOSTILE])
def test_search_runs_every_signature_in_re2(hostile, regex, line):
    """RE2's matching is linear in the line whatever the pattern; Python's engine would not return here."""
    compiled = compile_signature(regex)
    assert compiled is not None and type(compiled).__module__.startswith("re2")
    for paste in (line, f"RuntimeError: {line}", "\n".join([line] * 200)):
        assert search(paste, catalogue=hostile).status in ("answered", "differential", "unknown")


def test_kb_search_process_on_hostile_catalogue_returns(hostile, capsys):
    lines = "\n".join(line for _regex, _example, line in HOSTILE)
    assert main(["--catalogue", str(hostile), "search", lines]) in (0, 1)
    assert "Traceback" not in capsys.readouterr().err


def test_hostile_signatures_still_match_their_own_examples(hostile):
    for i, (_regex, example, _line) in enumerate(HOSTILE):
        ids = [r.id for r in search(example, catalogue=hostile).results]
        assert f"D{i + 1}" in ids


def test_lint_refuses_backtracking_and_non_re2_patterns(hostile):
    findings = lint_catalogue(load_catalogue(hostile))
    rules = {(f.path.split("/")[-1], f.rule) for f in findings}
    for i in range(len(HOSTILE)):
        assert (f"D{i + 1}-hostile.yaml", "regex-backtracking") in rules
    [lookaround] = [f for f in findings if f.rule == "regex-re2"]
    assert lookaround.path.endswith("D9-lookaround.yaml") and "RE2" in lookaround.message
    assert "lookarounds" in lookaround.message


def test_site_leaves_out_what_the_browser_could_not_run_safely(hostile):
    data = search_data(load_catalogue(hostile))
    exported = [sig["regex"][0] for sig in data["sigs"]]
    assert exported == ["(?!)"] * (len(HOSTILE) + 1)  # the backtracking patterns and the lookaround: never run
    assert all(re.compile(source) for source in exported)
