"""The loader builds plain documents itself in the pass that finds aliases and duplicate keys; every
document must come out exactly as pyyaml's own safe constructor makes it, or fail as it fails."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainkb.catalogue._yamlio import load_yaml

SAME = [
    "id: D1\nn: 1\nf: 1.5\nb: yes\nz: ~\nq: '1'\nd: 2020-01-02\nhex: 0x1f\noct: 0o17\ninf: .inf\n",
    "a: {b: [1, {c: 2}, [x, y]]}\nempty: []\nnone: {}\n",
    "1: a\ntrue: b\n? !!null\n: c\n",
    "a: !!str 5\nb: !!int '7'\nc: !!float 1\nd: !!binary aGVsbG8=\n",
    "t: 2001-12-14t21:59:43.10-05:00\n",
    "base: 1\n<<: {merged: 2, base: 3}\n",  # a merge key: left to the constructor
    "=: value\n",
    "s: !!set {x, y}\no: !!omap [a: 1, b: 2]\n",
    "- 1\n- two\n- {three: 3}\n",
]


@pytest.mark.parametrize("text", SAME)
def test_data_is_the_safe_constructors(tmp_path: Path, text: str) -> None:
    file = tmp_path / "r.yaml"
    file.write_text(text)
    located, problems = load_yaml(file)
    assert problems == []
    assert located is not None
    expected = yaml.load(text, Loader=yaml.CSafeLoader)
    assert repr(located.data) == repr(expected)  # repr tells 1 from True and a date from a string


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: !foo bar\n", "could not determine a constructor for the tag '!foo'"),
        ("a: !!python/object:os.system x\n", "could not determine a constructor"),
        ("a: !!map x\n", "expected a mapping node, but found scalar"),
        ("? [1, 2]\n: x\n", "found unhashable key"),
    ],
)
def test_a_refused_value_fails_as_the_constructor_fails(tmp_path: Path, text: str, message: str) -> None:
    file = tmp_path / "r.yaml"
    file.write_text(text)
    with pytest.raises(yaml.YAMLError, match=message):
        yaml.load(text, Loader=yaml.CSafeLoader)
    located, [problem] = load_yaml(file, "r.yaml")
    assert located is None
    assert problem.message == f"invalid YAML: {message}" or message in problem.message


def test_a_duplicate_key_after_a_refused_value_is_still_reported(tmp_path: Path) -> None:
    file = tmp_path / "r.yaml"
    file.write_text("a: !foo bar\nb: 1\nb: 2\n")
    located, [problem] = load_yaml(file, "r.yaml")
    assert located is None
    assert str(problem) == "r.yaml:3:1: b: duplicate key (first defined on line 2)"
