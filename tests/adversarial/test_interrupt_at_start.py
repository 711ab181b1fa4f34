"""Ctrl-C while `kb` is still starting (importing a command, parsing): exit 130 and no traceback."""

from __future__ import annotations

import importlib
import sys

import pytest

from trainkb import cli

_import = importlib.import_module


def _interrupted_import(name: str, package: str | None = None) -> object:
    if name.startswith("trainkb.commands."):
        raise KeyboardInterrupt
    return _import(name, package)


def test_ctrl_c_while_a_command_loads_exits_130_quietly(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["kb", "search", "CUDA out of memory"])
    monkeypatch.setattr(cli.importlib, "import_module", _interrupted_import)
    assert cli.main() == 130
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out


def test_a_library_call_leaves_ctrl_c_to_the_program_around_it(monkeypatch):
    monkeypatch.setattr(cli.importlib, "import_module", _interrupted_import)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["search", "CUDA out of memory"])
