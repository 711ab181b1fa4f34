"""One failing fixture per lint rule, with its exact message."""

from __future__ import annotations

import pytest
from helpers import record

from trainkb.catalogue import load_catalogue
from trainkb.lint import lint_catalogue

P = "catalogue/alpha/D1-sample.yaml"


def lint(root):
    return [str(f) for f in lint_catalogue(load_catalogue(root))]


def test_clean_catalogue_has_no_findings(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record(), "beta/D2-other.yaml": record("D2", "beta", "three")})
    assert lint(root) == []


SIG = "signatures:\n  - {sig}\n"

RULES = [
    (
        "filename",
        {"alpha/D1_sample.yaml": record()},
        "catalogue/alpha/D1_sample.yaml:2:1: id: file name 'D1_sample.yaml' must be '<ID>-<slug>.yaml' [filename]",
    ),
    (
        "filename-id",
        {"alpha/D9-sample.yaml": record()},
        "catalogue/alpha/D9-sample.yaml:2:1: id: id 'D1' does not match the file name 'D9-sample.yaml' [filename]",
    ),
    (
        "folder",
        {"beta/D1-sample.yaml": record()},
        "catalogue/beta/D1-sample.yaml:4:1: area: area 'alpha' does not match the folder 'beta' [folder]",
    ),
    (
        "unknown-area",
        {"gamma/D1-sample.yaml": record(area="gamma")},
        "catalogue/gamma/D1-sample.yaml:4:1: area: unknown area 'gamma' (areas.yaml has: alpha, beta) [unknown-area]",
    ),
    (
        "unknown-section",
        {"alpha/D1-sample.yaml": record(section="three")},
        f"{P}:5:1: section: unknown section 'three' of area 'alpha' (known: one, two) [unknown-section]",
    ),
    (
        "empty-prose",
        {"alpha/D1-sample.yaml": record().replace("fix: Do the right thing.", "fix: '   '")},
        f"{P}:10:1: fix: must not be empty [empty-prose]",
    ),
    (
        "fix-summary-markup",
        {
            "alpha/D1-sample.yaml": record().replace(
                "fix_summary: Apply the one-line remedy.", "fix_summary: Apply the **one-line** remedy."
            )
        },
        f"{P}:11:1: fix_summary: no Markdown except inline code (found emphasis) [fix-summary]",
    ),
    (
        "fix-summary-link",
        {
            "alpha/D1-sample.yaml": record().replace(
                "fix_summary: Apply the one-line remedy.", "fix_summary: Read [the guide](https://example.com) first."
            )
        },
        f"{P}:11:1: fix_summary: no Markdown except inline code (found a link or image) [fix-summary]",
    ),
    (
        "fix-summary-lines",
        {
            "alpha/D1-sample.yaml": record().replace(
                "fix_summary: Apply the one-line remedy.", 'fix_summary: "Apply the one-line\\nremedy `x_y`."'
            )
        },
        f"{P}:11:1: fix_summary: must be a single line [fix-summary]",
    ),
    (
        "dangling-link",
        {"alpha/D1-sample.yaml": record(extra="links:\n  - {id: D7, relation: see-also, why: x}\n")},
        f"{P}:14:6: links[0].id: links to unknown entry 'D7' [dangling-link]",
    ),
    (
        "self-link",
        {"alpha/D1-sample.yaml": record(extra="links:\n  - {id: D1, relation: see-also, why: x}\n")},
        f"{P}:14:6: links[0].id: an entry must not link to itself [self-link]",
    ),
    (
        "regex-compile",
        {"alpha/D1-sample.yaml": record(extra=SIG.format(sig="{regex: 'bad (group', example: x, names_cause: true}"))},
        f"{P}:14:6: signatures[0].regex: regex does not compile: missing ), unterminated subpattern at position 4"
        " [regex-compile]",
    ),
    (
        "signature-example",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{regex: 'size \\d+ mismatch', example: 'size x mismatch', names_cause: true}")
            )
        },
        f"{P}:14:34: signatures[0].example: the regex does not match its own example [signature-example]",
    ),
    (
        "literal-example",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{literal: 'CUDA error', example: 'cuda error: oops', names_cause: true}")
            )
        },
        f"{P}:14:29: signatures[0].example: the literal does not occur in its own example [signature-example]",
    ),
    (
        "signature-gate",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{regex: 'shapes \\(\\d+x\\d+\\)', example: 'shapes (64x10)', names_cause: true}")
            )
        },
        f"{P}:14:6: signatures[0].regex: search tries this signature only on text holding the word(s) x, which its own"
        " example lacks, so it never fires; make every word it requires a whole word of the text [signature-gate]",
    ),
    (
        "regex-backtracking",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{regex: '( +)+end', example: '  end', names_cause: true}")
            )
        },
        f"{P}:14:6: signatures[0].regex: a repeat over a part that can match in several ways (a nested quantifier"
        " such as (a+)+ or (xx?)+, or an alternation such as (a|aa)+) can freeze the site's search"
        " [regex-backtracking]",
    ),
    (
        "regex-overlapping-repeats",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{regex: 'got \\S*\\s*\\S*x', example: 'got ab x', names_cause: true}")
            )
        },
        f"{P}:14:6: signatures[0].regex: two unbounded repeats that can match the same characters in turn"
        " (such as .*.* or \\S*\\s*\\S*; bound one, e.g. .{0,200}) can freeze the site's search"
        " [regex-backtracking]",
    ),
    (
        "regex-browser",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(sig="{regex: 'size (?-i:Mismatch)', example: 'size Mismatch', names_cause: true}")
            )
        },
        f"{P}:14:6: signatures[0].regex: a flag group such as (?i:...), (?-i:...) or (?s:...) does not compile in"
        " the site's JavaScript search; matching already ignores case, so drop (?i:...), and spell (?s:.) as"
        " [\\s\\S] [regex-browser]",
    ),
    (
        "names-cause",
        {
            "alpha/D1-sample.yaml": record(
                extra=SIG.format(
                    sig="{literal: 'CUDA out of memory', example: 'CUDA out of memory. Tried to allocate'}"
                )
            )
        },
        f"{P}:14:5: signatures[0]: say whether the message alone establishes this entry's root cause: `names_cause:"
        " true` when whoever prints it has this cause, `false` when other root causes print it too [names-cause]",
    ),
    (
        "reference-https",
        {"alpha/D1-sample.yaml": record(extra="references:\n  - {title: Docs, url: 'http://example.com/x'}\n")},
        f"{P}:14:19: references[0].url: reference URL must be https: http://example.com/x [reference-https]",
    ),
    (
        "modeline",
        {"alpha/D1-sample.yaml": record(modeline=False)},
        "catalogue/alpha/D1-sample.yaml:1:1: first line must be '# yaml-language-server: $schema=../schema.json'"
        " [modeline]",
    ),
    (
        "modeline-bom",
        {"alpha/D1-sample.yaml": "\ufeff" + record()},
        "catalogue/alpha/D1-sample.yaml:1:1: the file starts with a byte order mark (U+FEFF); save it as UTF-8"
        " without one, '# yaml-language-server: $schema=../schema.json' first [modeline]",
    ),
    (
        "schema",
        {"alpha/D1-sample.yaml": record(extra="colour: blue\n")},
        f"{P}:13:1: colour: unknown key (not part of the record format) [schema]",
    ),
]


@pytest.mark.parametrize(("rule", "files", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_rule(make_catalogue, rule, files, expected):
    assert lint(make_catalogue(files)) == [expected]


def test_duplicate_id(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record(), "alpha/D1-again.yaml": record()})
    assert lint(root) == [
        "catalogue/alpha/D1-sample.yaml:1:1: id 'D1' is already used by catalogue/alpha/D1-again.yaml [duplicate-id]"
    ]


def test_duplicate_link(make_catalogue):
    links = "links:\n  - {id: D2, relation: see-also, why: x}\n  - {id: D2, relation: contrast, why: y}\n"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(extra=links), "beta/D2-other.yaml": record("D2", "beta", "three")}
    )
    assert lint(root) == [f"{P}:15:6: links[1].id: D2 is linked more than once [duplicate-link]"]


def test_stale_and_missing_schema(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    (root / "schema.json").write_text("{}\n")
    assert lint(root) == [
        "catalogue/schema.json:1:1: schema.json is out of date; run `kb schema -o catalogue/schema.json` [schema-stale]"
    ]
    (root / "schema.json").unlink()
    assert lint(root) == [
        "catalogue/schema.json:1:1: schema.json is missing; run `kb schema -o catalogue/schema.json` [schema-stale]"
    ]


def test_also_matches_must_name_real_entries(make_catalogue):
    checks = """\
checks:
  - name: demo
    claim: Demonstrates a thing.
    demonstrates: failure
    code: "pass"
    expect: ok
    also_matches: [D5]
"""
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    assert lint(root) == [
        f"{P}:18:20: checks[0].also_matches[0]: also_matches names unknown entry 'D5' [dangling-link]"
    ]


def test_github_format():
    from trainkb.lint import LintFinding

    finding = LintFinding("catalogue/a/D1-x.yaml", 3, 5, "title", "empty-prose", "50% bad\nsecond line")
    assert finding.github() == (
        "::error file=catalogue/a/D1-x.yaml,line=3,col=5,title=kb lint empty-prose::title: 50%25 bad%0Asecond line"
    )


def test_github_format_spells_out_escape_sequences_as_plain_output_does():
    from trainkb.lint import LintFinding

    finding = LintFinding("a/D1-x.yaml", 3, 5, "\x1b]0;PWNED\x07\x1b[2Jevil", "unknown-key", "unknown key")
    line = finding.github()
    assert "\x1b" not in line and "\x07" not in line
    assert "\\x1b]0;PWNED\\x07\\x1b[2Jevil: unknown key" in line


def test_excludes_are_linted_like_signatures(make_catalogue):
    extra = (
        "signatures:\n"
        "  - {literal: 'size mismatch for', example: 'size mismatch for fc.weight', names_cause: true}\n"
        "excludes:\n  - {literal: 'Bus error', example: 'bus error'}\n"
        "  - {regex: 'size \\w+ for', example: 'size mismatch for fc.bias'}\n"
    )
    found = lint(make_catalogue({"alpha/D1-sample.yaml": record(extra=extra)}))
    assert any(
        "excludes[0].example: the literal does not occur in its own example [signature-example]" in f for f in found
    ), found
    assert any(
        "excludes[1]: the exclude matches this entry's own signature example 'size mismatch for fc.weight'" in f
        and f.endswith("[exclude-own-signature]")
        for f in found
    ), found
    assert len(found) == 2


def _check(code: str, packages: list[str] | None = None) -> str:
    from helpers import checks_yaml

    check: dict[str, object] = {"code": code, "expect": "ok"}
    if packages is not None:
        check["requires"] = {"packages": packages}
    return checks_yaml(check)


@pytest.mark.parametrize(
    ("code", "packages", "flagged"),
    [
        ("import transformers\n", None, ["transformers"]),
        ("from peft import LoraConfig\nimport deepspeed.comm\n", ["peft"], ["deepspeed"]),
        ("def f():\n    import torchvision.transforms as T\n    return T\n", [], ["torchvision"]),
        ("import accelerate\n", ["accelerate"], []),
        ("import tokenizers\n", ["transformers"], []),  # transformers always installs tokenizers
        ("try:\n    import deepspeed\nexcept ImportError:\n    deepspeed = None\n", None, []),
        ("import torch, json, numpy\n", None, ["numpy"]),  # torch does not require numpy
        ("import numpy as np\n", ["transformers"], []),  # transformers does
    ],
)
def test_check_imports_an_optional_package_it_does_not_declare(make_catalogue, code, packages, flagged):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=_check(code, packages))})
    said = [f for f in lint_catalogue(load_catalogue(root)) if f.rule == "check-requires"]
    assert [f.message.split()[3] for f in said] == flagged
    assert all(f.field == "checks[0].requires" for f in said)


def test_python_blocks_of_a_fix_compile(make_catalogue):
    fix = (
        "fix: |\n  Wrap it:\n\n  ```python\n  with torch.no_grad()\n      y = model(x)\n  ```\n\n"
        "  ```sh\n  not python (\n  ```\n"
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record().replace("fix: Do the right thing.\n", fix)})
    [finding] = [str(f) for f in lint_catalogue(load_catalogue(root)) if f.rule == "fix-code"]
    assert finding == (
        f"{P}:10:1: fix: python block 1 (from line 3 of the fix) does not compile: expected ':' (its line 1) [fix-code]"
    )


def _with_root_cause(text: str, checks: str | None = None) -> str:
    return record(checks=checks).replace("root_cause: Something is wrong.", f"root_cause: {text}")


@pytest.mark.parametrize(
    "sentence",
    [
        "Since torch 2.6 the loader refuses it (check demo).",
        "Since torch 2.6 the loader refuses it (checks other and demo).",
        "|\n  Since torch 2.6 the loader refuses it (check\n  demo).",  # the name on the next line of a block
        "|\n  Since torch 2.6 the loader refuses it (checks other and\n  demo).",
        "Since torch 2.6 the loader refuses it (https://github.com/pytorch/pytorch/pull/137602).",
        "Since torch 2.6 the loader refuses it (pytorch/pytorch#137602).",
        "Since torch 2.6 the loader refuses it (torch/serialization.py).",
        "Since torch 2.6 the loader refuses it (serialization.py:1400).",
        "The loader refuses it on every release.",  # no version, nothing to cite
        "|\n  The loader refuses it:\n  ```python\n  # torch 2.6 and later\n  torch.load(path)\n  ```",
    ],
)
def test_a_version_sentence_with_its_evidence_passes(make_catalogue, sentence):
    checks = "checks:\n  - name: demo\n    claim: Demonstrates a thing.\n    demonstrates: failure\n"
    checks += "    code: pass\n    expect: ok\n"
    assert lint(make_catalogue({"alpha/D1-sample.yaml": _with_root_cause(sentence, checks)})) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "Since torch 2.6 the loader refuses it.",
        "Since torch 2.6 the loader refuses it; check the file first.",  # "check" as a verb cites nothing
        "Since torch 2.6 the loader refuses it (check missing-name).",  # a check nobody has
        "pip >= 24.1 refuses the metadata, see train.py.",  # a bare script name is no source
    ],
)
def test_a_version_sentence_without_evidence_is_a_finding(make_catalogue, sentence):
    found = lint(make_catalogue({"alpha/D1-sample.yaml": _with_root_cause(sentence)}))
    assert len(found) == 1 and found[0].startswith(f"{P}:9:") and found[0].endswith("[version-evidence]")


def test_only_the_unsourced_sentence_of_a_field_is_reported(make_catalogue):
    text = "'Python 3.12 prints it (https://docs.python.org/3/). Python 3.14 raises PicklingError instead.'"
    found = lint(make_catalogue({"alpha/D1-sample.yaml": _with_root_cause(text)}))
    assert len(found) == 1 and "Python 3.14 raises PicklingError instead." in found[0]


def test_a_links_why_is_read_too(make_catalogue):
    links = "links:\n  - {id: D2, relation: contrast, why: Anomaly mode and compile did not mix on torch 2.0.}\n"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(extra=links), "beta/D2-other.yaml": record("D2", "beta", "three")}
    )
    found = lint(root)
    assert len(found) == 1 and "links[0].why" in found[0] and "[version-evidence]" in found[0]
