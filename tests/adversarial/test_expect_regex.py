"""A check's expected-message pattern that RE2 cannot run, or that backtracks exponentially in
Python's re, is refused by `kb lint` before any check runs it."""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check._pattern import pattern_error
from trainkb.check._verdict import _type_matches
from trainkb.cli import main
from trainkb.lint import lint_catalogue

CATASTROPHIC = "(a+)+$"  # with ValueError("a" * 40 + "!") this hung `kb check` past --timeout and SIGTERM
REFUSED_BY_RE2 = ["(?<=size )mismatch", r"(\w+) and \1", r"mismatch\Z"]


def _raises(match: str) -> dict[str, object]:
    return {"code": "raise ValueError('a' * 40 + '!')", "expect": {"raises": {"type": "ValueError", "match": match}}}


def _warns(match: str) -> dict[str, object]:
    return {
        "code": "import warnings\nwarnings.warn('size mismatch')",
        "expect": {"warns": {"category": "UserWarning", "match": match}},
    }


@pytest.fixture
def hostile(make_catalogue) -> Path:
    return make_catalogue(
        {
            "alpha/D1-catastrophic.yaml": record("D1", checks=checks_yaml(_raises(CATASTROPHIC))),
            "alpha/D2-lookbehind.yaml": record("D2", checks=checks_yaml(*(_raises(p) for p in REFUSED_BY_RE2))),
            "alpha/D3-warns.yaml": record("D3", checks=checks_yaml(_warns("(?<=size )mismatch"), _warns("(x|xx)+y"))),
            "alpha/D4-fine.yaml": record("D4", checks=checks_yaml(_raises(r"a{40}!"), _warns("size mismatch"))),
        }
    )


@pytest.mark.slow
def test_the_pattern_really_is_catastrophic_in_python_re():
    """The behaviour the rule guards against: Python's re backtracks exponentially, so four more characters
    multiply its work about sixteen times (linear work would grow it by a fifth)."""

    def cost(n: int) -> float:  # CPU time of this process, best of three: other jobs on the machine do not count
        best = math.inf
        for _ in range(3):
            started = time.process_time()
            assert re.search(CATASTROPHIC, "a" * n + "!") is None
            best = min(best, time.process_time() - started)
        return best

    assert cost(21) > 4 * max(cost(17), 1e-3)


def test_lint_refuses_expected_patterns_re2_cannot_run_or_that_backtrack(hostile, capsys):
    assert main(["--catalogue", str(hostile), "lint", "--json"]) == 1
    findings = [f for f in json.loads(capsys.readouterr().out) if f["rule"] == "expect-regex"]
    where = sorted((Path(f["path"]).name, f["field"]) for f in findings)
    assert where == [
        ("D1-catastrophic.yaml", "checks[0].expect.raises.match"),
        ("D2-lookbehind.yaml", "checks[0].expect.raises.match"),
        ("D2-lookbehind.yaml", "checks[1].expect.raises.match"),
        ("D2-lookbehind.yaml", "checks[2].expect.raises.match"),
        ("D3-warns.yaml", "checks[0].expect.warns.match"),
        ("D3-warns.yaml", "checks[1].expect.warns.match"),
    ]
    by_file = {Path(f["path"]).name: f["message"] for f in findings}
    assert "RE2" in by_file["D2-lookbehind.yaml"] and "exponential" in by_file["D1-catastrophic.yaml"]
    assert all(f["line"] > 1 for f in findings)  # points at the pattern's own line


@pytest.mark.parametrize("pattern", [*REFUSED_BY_RE2, CATASTROPHIC, r"a{40}!", "size (mis)?match", r"\Aa+!"])
def test_lint_and_kb_check_agree_on_what_re2_runs(make_catalogue, pattern):
    """Lint refuses for RE2 exactly the patterns that `kb check` could not match with."""
    root = make_catalogue({"alpha/D1-x.yaml": record("D1", checks=checks_yaml(_raises(pattern)))})
    said = [f.message for f in lint_catalogue(load_catalogue(root)) if f.rule == "expect-regex"]
    assert any("RE2" in m for m in said) == (pattern_error(pattern) is not None)


@pytest.mark.slow
def test_the_shipped_catalogue_has_no_refused_expected_pattern():
    root = Path(__file__).resolve().parents[2] / "catalogue"
    assert [str(f) for f in lint_catalogue(load_catalogue(root)) if f.rule == "expect-regex"] == []


@pytest.mark.parametrize("name", ["ValueError|TypeError", "ValueError, TypeError", "torch..Error", "Value Error"])
def test_an_expected_class_that_is_no_class_name_is_refused(make_catalogue, name):
    """`kb check` compares the name with the raised class's bases one by one, so such a name never matches."""
    assert not _type_matches(["builtins.ValueError", "builtins.Exception"], name)
    raises = {"code": "raise ValueError('x')", "expect": {"raises": {"type": name, "match": "x"}}}
    warns = {"code": "import warnings\nwarnings.warn('x')", "expect": {"warns": {"category": name, "match": "x"}}}
    root = make_catalogue({"alpha/D1-x.yaml": record("D1", checks=checks_yaml(raises, warns))})
    found = [(f.rule, f.message) for f in lint_catalogue(load_catalogue(root)) if f.rule == "expect-type"]
    assert [rule for rule, _ in found] == ["expect-type", "expect-type"]
    assert all(repr(name) in message for _, message in found)


@pytest.mark.parametrize("name", ["ValueError", "torch.cuda.OutOfMemoryError", "_private.Error2"])
def test_a_bare_or_dotted_class_name_passes_lint(make_catalogue, name):
    raises = {"code": "raise ValueError('x')", "expect": {"raises": {"type": name, "match": "x"}}}
    root = make_catalogue({"alpha/D1-x.yaml": record("D1", checks=checks_yaml(raises))})
    assert [f for f in lint_catalogue(load_catalogue(root)) if f.rule == "expect-type"] == []
