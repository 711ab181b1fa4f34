"""Snippet output quoted in `kb check`'s text output cannot act as a GitHub Actions workflow command.

The runner reads any line that starts with `::` once leading whitespace is trimmed as a command
(actions/runner, src/Runner.Common/ActionCommand.cs, TryParseV2): a failing check's output tail,
indented in the summary, could raise an `::error::` or mask a value with `::add-mask::` in a CI log.
"""

from __future__ import annotations

import json

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main

PRINTS = (
    "print('::error::zq-forged annotation')\nprint('   ::add-mask::zq')\nprint('a::b stays')\nraise SystemExit(3)\n"
)


@pytest.mark.usefixtures("shared_pool")  # what kb prints, not how it starts: the session's pool runs it
def test_quoted_output_is_inert_in_text_and_faithful_in_json(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": PRINTS, "expect": "ok"}))})
    out = tmp_path / "r.json"
    status = main(["--catalogue", str(root), "check", "-q", "--no-drift", "-o", str(out)])
    stdout, stderr = capsys.readouterr()
    assert status == 1, stdout + stderr
    printed = (stdout + stderr).splitlines()
    assert [line for line in printed if line.lstrip().startswith("::")] == []
    assert "      \\::error::zq-forged annotation" in printed
    assert "         \\::add-mask::zq" in printed
    assert "      a::b stays" in printed
    output = json.loads(out.read_text(encoding="utf-8"))["results"][0]["output"]
    assert "::error::zq-forged annotation\n   ::add-mask::zq\n" in output
