"""Malformed files give located, readable problems — never a traceback, never lost data."""

from __future__ import annotations

from helpers import record

from trainkb.catalogue import MAX_RECORD_BYTES, load_catalogue


def problems(cat):
    return [str(p) for p in cat.problems]


def test_valid_record_loads(make_catalogue):
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": record()}))
    assert cat.problems == []
    assert list(cat.entries) == ["D1"]


def test_tab_indentation_is_located(make_catalogue):
    text = record().replace("tags: [sample]", "tags:\n\t- sample")
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    [message] = problems(cat)
    assert message.startswith("catalogue/alpha/D1-sample.yaml:7:")
    assert "tabs" in message


def test_duplicate_key_is_an_error_not_a_silent_overwrite(make_catalogue):
    text = record() + "title: A second title that would win in plain pyyaml\n"
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    assert problems(cat) == ["catalogue/alpha/D1-sample.yaml:13:1: title: duplicate key (first defined on line 3)"]
    assert cat.entries == {}


def test_non_utf8_names_the_byte_and_line(make_catalogue):
    raw = record().encode() + b"# caf\xe9\n"
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": raw}))
    assert problems(cat) == ["catalogue/alpha/D1-sample.yaml:13:6: not valid UTF-8 (byte 0xe9)"]


def test_empty_file(make_catalogue):
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": "\n  \n"}))
    assert problems(cat) == ["catalogue/alpha/D1-sample.yaml:1:1: file is empty"]


def test_huge_file_is_refused_without_parsing(make_catalogue):
    big = record() + "# " + "x" * (5 * 1024 * 1024) + "\n"
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": big}))
    [message] = problems(cat)
    assert message.startswith("catalogue/alpha/D1-sample.yaml:1:1: file is 5.2 MB")
    assert f"{MAX_RECORD_BYTES // 1024} KB" in message


def test_binary_garbage(make_catalogue):
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": b"\x00\x01\x02PK\x03\x04"}))
    assert problems(cat) == ["catalogue/alpha/D1-sample.yaml:1:1: file contains NUL bytes; is it binary?"]


def test_unknown_key_points_at_the_key(make_catalogue):
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": record(extra="symptoms: typo\n")}))
    assert problems(cat) == [
        "catalogue/alpha/D1-sample.yaml:13:1: symptoms: unknown key (not part of the record format)"
    ]


def test_wrong_type_deep_inside_a_check(make_catalogue):
    checks = """\
checks:
  - name: demo
    claim: Demonstrates a thing.
    demonstrates: failure
    code: "raise ValueError('x')"
    expect:
      raises: {type: ValueError, match: 12}
    timeout: soon
"""
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)}))
    assert problems(cat) == [
        "catalogue/alpha/D1-sample.yaml:18:34: checks[0].expect.raises.match: Input should be a valid string",
        "catalogue/alpha/D1-sample.yaml:19:5: checks[0].timeout: Input should be a valid number, "
        "unable to parse string as a number",
    ]


def test_missing_fields_and_no_verification(make_catalogue):
    text = (
        record()
        .replace("fix: Do the right thing.\nfix_summary: Apply the one-line remedy.\n", "")
        .replace("verification: {status: pending, reason: test record}\n", "")
    )
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    assert problems(cat) == [
        "catalogue/alpha/D1-sample.yaml:2:1: fix: required field is missing",
        "catalogue/alpha/D1-sample.yaml:2:1: fix_summary: required field is missing",
    ]


def test_entry_without_checks_must_say_why(make_catalogue):
    text = record().replace("verification: {status: pending, reason: test record}\n", "")
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    [message] = problems(cat)
    assert "an entry without checks must say why" in message


def test_bad_expectation_shape(make_catalogue):
    checks = """\
checks:
  - name: demo
    claim: Demonstrates a thing.
    demonstrates: failure
    code: "pass"
    expect: {explodes: true}
"""
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)}))
    [message] = problems(cat)
    assert "checks[0].expect: expect must be 'ok' or one of" in message


def test_all_problems_reported_at_once(make_catalogue):
    cat = load_catalogue(
        make_catalogue(
            {
                "alpha/D1-sample.yaml": record(extra="bogus: 1\n"),
                "alpha/D2-sample.yaml": "",
                "beta/D3-sample.yaml": record("D3", "beta", "three"),
            }
        )
    )
    assert len(cat.problems) == 2
    assert list(cat.entries) == ["D3"]


def test_unquoted_colon_gets_a_hint(make_catalogue):
    text = record().replace("aliases: [sample alias]", "aliases:\n  - std(): degrees of freedom <= 0")
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    assert problems(cat) == [
        "catalogue/alpha/D1-sample.yaml:8:5: aliases[0]: Input should be a valid string "
        "(YAML read a mapping here: quote a value that contains ': ')"
    ]
    text = record().replace("title: A sample failure for tests", "title: std(): degrees of freedom <= 0")
    cat = load_catalogue(make_catalogue({"alpha/D1-sample.yaml": text}))
    [message] = problems(cat)
    assert message.endswith("mapping values are not allowed in this context (quote a value that contains ': ')")
