"""`kb search`: arguments, stdin, JSON output, exit codes, and what it must not import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trainkb.cli import main

ERROR = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one."


def _run(args: list[str], stdin: str = "", env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, **(env_extra or {})}
    return subprocess.run(
        [sys.executable, "-m", "trainkb.cli", *args], input=stdin, capture_output=True, text=True, env=env, timeout=120
    )


def test_text_argument(catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--catalogue", str(catalogue), "search", ERROR]) == 0
    out = capsys.readouterr().out
    assert out.startswith("── kb search: this failure matches ──\n  D1") and "line 1:" in out  # a marked block
    fix = "Pass `find_unused_parameters=True` to DDP, or make every output reach the loss."
    assert out.splitlines()[2].startswith("        high: only this cause prints `Expected to have finished reduction")
    assert out.splitlines()[3] == f"        fix: {fix}"


def test_positional_catalogue_and_json(catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", ERROR, str(catalogue), "--json", "--top", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["results"][0]["id"] == "D1" and len(data["results"]) == 1
    assert (
        data["results"][0]["fix_summary"]
        == "Pass `find_unused_parameters=True` to DDP, or make every output reach the loss."
    )


def test_abstention_exits_1_and_says_so(catalogue: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--catalogue", str(catalogue), "search", "KeyError: 'batch_size'"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[1].startswith("  No confident match") and "fix:" not in out  # no advice from a guess


def test_usage_errors(catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--catalogue", str(catalogue), "search", "x", "--top", "0"]) == 2
    assert main(["--catalogue", str(tmp_path / "nowhere"), "search", "x"]) == 2
    assert main(["--catalogue", str(catalogue), "search", "   "]) == 2
    assert "error" in capsys.readouterr().err


def test_a_catalogue_named_two_ways_is_a_usage_error(
    catalogue: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the positional folder used to win silently over --catalogue
    assert main(["--catalogue", str(tmp_path), "search", ERROR, str(catalogue)]) == 2
    assert main(["search", ERROR, str(catalogue), "--catalogue", str(catalogue)]) == 2
    assert "name the catalogue once" in capsys.readouterr().err


def test_stdin_dash_and_pipe(catalogue: Path) -> None:
    for args in (["search", "-", "--json"], ["search", "--json"]):
        proc = _run(["--catalogue", str(catalogue), *args], stdin=f"noise\n{ERROR}\n")
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)
        assert data["results"][0]["id"] == "D1"
        assert data["results"][0]["evidence"][0]["line"] == 2


def test_kb_search_imports_nothing_heavy(catalogue: Path) -> None:
    """torch, textual and jinja2 never; with a warm cache not even YAML or the pydantic records."""
    code = (
        "import sys, trainkb.cli as cli\n"
        f"cli.main(['--catalogue', {str(catalogue)!r}, 'search', {ERROR!r}])\n"
        "roots = {m.split('.')[0] for m in sys.modules} | set(sys.modules)\n"
        "heavy = {'torch', 'textual', 'jinja2', 'yaml', 'pydantic', 'trainkb.catalogue._loader'}\n"
        "print('LOADED', sorted(roots & heavy))\n"
        "commands = {'trainkb.commands.' + name for name in cli.COMMANDS}\n"
        "print('COMMANDS', sorted(commands & set(sys.modules)))\n"
    )
    first = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    second = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    assert "torch" not in first.stdout and "textual" not in first.stdout and "jinja2" not in first.stdout
    assert "trainkb.catalogue._loader" in first.stdout  # the cold run built the index from the records
    assert "LOADED []" in second.stdout, second.stdout + second.stderr
    assert "COMMANDS ['trainkb.commands.search']" in second.stdout  # no other command's code


def test_a_warm_kb_search_loads_only_what_a_one_paste_search_needs(catalogue: Path) -> None:
    """No typing, OpenSSL hashes, json, shutil (with the compression modules it loads) or shlex, and no rank
    log reader for a paste that names no rank: each was a few milliseconds of every start."""
    code = (
        "import sys, trainkb.cli as cli\n"
        f"cli.main(['--catalogue', {str(catalogue)!r}, 'search', {ERROR!r}])\n"
        "spared = {'typing', 'hashlib', 'json', 'shutil', 'bz2', 'lzma', 'shlex'}\n"
        "spared |= {'trainkb.ranklog._read', 'trainkb.triage'}\n"
        "print('LOADED', sorted(spared & set(sys.modules)))\n"
    )
    time.sleep(2.1)  # a state is remembered by its stamps once its files have settled (_index._SETTLED_NS)
    cold = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert cold.returncode == 0, cold.stderr  # it built the index and remembered the catalogue's state
    warm = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "LOADED []" in warm.stdout, warm.stdout + warm.stderr


@pytest.mark.parametrize("columns", [None, "60", "0", "-3", "wide"])
def test_kb_help_is_as_wide_as_argparse_makes_it(columns: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    """kb's help formatter finds the width as argparse's own does (through shutil), without importing shutil."""
    import argparse

    from trainkb.cli import _Formatter

    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert _Formatter("kb")._width == argparse.HelpFormatter("kb")._width


def test_long_pipe_keeps_the_tail_and_true_line_numbers(catalogue: Path) -> None:
    noise = "2026-01-01 00:00:00 INFO step ok, loss 0.1234\n" * 150_000  # ~7 MB, more than stdin keeps
    proc = _run(["--catalogue", str(catalogue), "search", "--json"], stdin=noise + ERROR + "\n")
    assert proc.returncode == 0, proc.stderr
    evidence = json.loads(proc.stdout)["results"][0]["evidence"][0]
    assert evidence["line"] == 150_001


def test_first_line_offsets_evidence(catalogue: Path) -> None:
    from trainkb.search import search

    response = search(f"noise\n{ERROR}", catalogue=catalogue, first_line=41)
    assert response.results[0].evidence[0].line == 42


def test_an_edited_yml_record_is_not_served_from_a_stale_cache(catalogue: Path, private_cache: Path) -> None:
    """The cache key once hashed only ``*.yaml`` although ``.yml`` records load: an edit kept the old title."""
    yaml_path = next(catalogue.glob("*/D1-*.yaml"))
    yml_path = yaml_path.with_suffix(".yml")
    yaml_path.rename(yml_path)
    before = _run(["--catalogue", str(catalogue), "search", "--json", ERROR])  # builds and caches the index
    assert json.loads(before.stdout)["results"][0]["id"] == "D1", before.stderr
    assert list(private_cache.glob("index-*.marshal"))  # the second run may read the cache
    old_title = json.loads(before.stdout)["results"][0]["title"]
    yml_path.write_text(
        yml_path.read_text(encoding="utf-8").replace(old_title, "Renamed title for the .yml test"), encoding="utf-8"
    )
    after = _run(["--catalogue", str(catalogue), "search", "--json", ERROR])
    assert json.loads(after.stdout)["results"][0]["title"] == "Renamed title for the .yml test"


@pytest.mark.parametrize(
    "argv", [["--help", "search"], ["-h", "search"], ["--he", "search"], ["--", "search", ERROR], ["serach", ERROR]]
)
def test_what_lists_every_command_before_search_still_does(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """`kb search` builds no other command's parser, unless what comes before it can print the whole
    program's help or its list of commands."""
    assert main(argv) in (0, 2)
    said = capsys.readouterr()
    assert "doctor" in said.out + said.err  # another command's name


def test_only_catalogue_options_before_the_command_spare_the_other_parsers() -> None:
    from trainkb.cli import _only_catalogue_before

    assert _only_catalogue_before(["search", ERROR])
    assert _only_catalogue_before(["--catalogue", "-odd-folder", "--catalogue=x", "search", ERROR])
    for before in (["--help"], ["--h"], ["--version"], ["--"], ["--cat", "x"]):
        assert not _only_catalogue_before([*before, "search", ERROR])
