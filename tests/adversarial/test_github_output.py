"""`kb check --format github`: snippet output quoted in the summary cannot issue workflow commands."""

from __future__ import annotations

import re

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main


@pytest.mark.usefixtures("shared_pool")
@pytest.mark.slow
def test_snippet_output_is_inside_a_stop_commands_block(make_catalogue, capsys):
    code = "print('  ::error::injected')\nprint('::add-mask::hunter2')\nassert False\n"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift", "--format", "github"]) == 1
    out = capsys.readouterr().out.splitlines()
    paused = None
    for line in out:
        command = line.lstrip()
        if paused is not None:
            if command == f"::{paused}::":
                paused = None
            continue
        if match := re.fullmatch(r"::stop-commands::(\w+)", command):
            paused = match[1]
            continue
        assert not command.startswith("::") or command.startswith("::error file="), line
    assert any("injected" in line for line in out)
