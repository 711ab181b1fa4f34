"""Escape sequences in a record never reach the terminal raw, and lint flags them; a file name
cannot forge a second GitHub workflow command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import checks_yaml, record

from trainkb._terminal import CONTROL, json_text, printable
from trainkb.cli import main
from trainkb.lint import LintFinding

OSC_TITLE = "\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
CLIPBOARD = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # OSC 52: write the clipboard
HOSTILE_TITLE = f"Sample {OSC_TITLE}{CLEAR}{CLIPBOARD} failure \x9b31m"


@pytest.fixture
def cat(make_catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = record().replace("title: A sample failure for tests", f"title: {json.dumps(HOSTILE_TITLE)}")
    text = text.replace("fix: Do the right thing.", f"fix: {json.dumps('Run ' + CLEAR + ' then retry.')}")
    return make_catalogue({"alpha/D1-sample.yaml": text})


def _kb(root: Path, *argv: str) -> subprocess.CompletedProcess[bytes]:
    """A real process, so the bytes checked are the bytes a terminal would get."""
    return subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "--catalogue", str(root), *argv],
        capture_output=True,
        timeout=120,
        env=os.environ.copy(),
    )


@pytest.mark.parametrize("argv", [["list"], ["search", "Sample failure"], ["show", "D1"], ["lint"]])
def test_no_control_character_reaches_the_terminal(cat, argv):
    done = _kb(cat, *argv)
    assert b"Traceback" not in done.stderr
    out = done.stdout.decode()
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out, out
    if argv[0] != "lint":
        assert "\\x1b]0;pwned" in out  # shown, spelled out, not obeyed


def test_lint_flags_control_characters(cat, capsys):
    assert main(["--catalogue", str(cat), "lint", "--json"]) == 1
    findings = json.loads(capsys.readouterr().out)
    flagged = {f["field"] for f in findings if f["rule"] == "control-character"}
    assert flagged == {"title", "fix"}


def test_file_name_with_newline_cannot_forge_a_workflow_command():
    finding = LintFinding("catalogue/a/x.yaml\n::warning file=evil.py,line=1::forged", 1, 1, "", "schema", "bad: a, b")
    line = finding.github()
    assert "\n" not in line and line.count("::") == 2
    assert line == (
        "::error file=catalogue/a/x.yaml%0A%3A%3Awarning file=evil.py%2Cline=1%3A%3Aforged,"
        "line=1,col=1,title=kb lint schema::bad: a, b"
    )


def test_lint_github_format_with_a_newline_in_a_file_name(make_catalogue, capsys):
    root = make_catalogue({"alpha/D1-x\n::warning file=a.py::forged.yaml": record()})
    assert main(["--catalogue", str(root), "lint", "--format", "github"]) == 1
    out = capsys.readouterr().out
    assert not any(line.startswith("::warning") for line in out.splitlines())


@pytest.mark.timeout(300)
def test_tui_shows_record_text_without_obeying_it(cat, tmp_path):
    """The TUI (results, entry, browse) gets the same treatment; run on a pseudo-terminal."""
    import fcntl
    import pty
    import signal
    import struct
    import termios

    from helpers import read_pty_until, take_terminal

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    read, write = os.pipe()
    os.write(write, b"Sample failure pwned\n")
    os.close(write)
    env = dict(os.environ, TERM="xterm-256color", XDG_CACHE_HOME=str(tmp_path / "cache"))
    tui = subprocess.Popen(
        [sys.executable, "-m", "trainkb.cli", "--catalogue", str(cat), "tui"],
        stdin=read,
        stdout=slave,
        stderr=slave,
        preexec_fn=take_terminal(1),
        env=env,
    )
    os.close(slave)
    os.close(read)
    out = bytearray()
    try:
        assert read_pty_until(master, out, lambda o: b"D1" in o and b"pwned" in o, 120), bytes(out[-2000:])
        read_pty_until(master, out, lambda o: False, 1.0)  # the entry pane renders too
        tui.send_signal(signal.SIGTERM)
        tui.wait(timeout=120)
    finally:
        if tui.poll() is None:
            tui.kill()
        os.close(master)
    assert b"\x1b]0;pwned" not in out and b"\x1b]52;" not in out and b"\x1b[2J" not in out


@pytest.mark.usefixtures("shared_pool")
def test_kb_check_spells_out_escapes_a_snippet_prints_or_raises(make_catalogue, capsys):
    """The verdict quotes the exception's message and the summary quotes the output: a clear-screen,
    a window title or an OSC 8 link from a snippet reached the terminal through both."""
    code = (
        "print('\\x1b]8;;http://example.invalid\\x1b\\\\link\\x1b]8;;\\x1b\\\\ \\x1b]0;title\\x07')\n"
        "raise ValueError('\\x1b[2Jcleared')\n"
    )
    expect = {"raises": {"type": "ValueError", "match": "never"}}
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": expect}))})
    for fmt in ("text", "github"):
        assert main(["--catalogue", str(root), "check", "--no-drift", "--format", fmt]) == 1
        out, err = capsys.readouterr()
        assert "cleared" in err and "cleared" in out
        assert "\x1b" not in out + err and "\x07" not in out + err


@pytest.mark.parametrize("argv", [["show", "D1", "--json"], ["list", "--json"], ["search", "Sample failure", "--json"]])
def test_json_escapes_every_control_character_and_stays_faithful(cat, argv):
    done = _kb(cat, *argv)
    assert b"Traceback" not in done.stderr
    out = done.stdout.decode()
    assert not CONTROL.search(out.replace("\n", "")), out
    assert HOSTILE_TITLE in _strings(json.loads(out))  # the same text, read back


def _strings(data: object) -> list[str]:
    if isinstance(data, str):
        return [data]
    values = data.values() if isinstance(data, dict) else data if isinstance(data, list) else []
    return [text for value in values for text in _strings(value)]


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "D1\x1b]0;pwned\x07"],
        ["triage", "/nonexistent\x1b[2J"],
        ["search", "--catalogue", "/nonexistent\x1b]0;pwned\x07", "x"],
    ],
)
def test_a_usage_error_spells_out_what_it_quotes(cat, argv):
    done = _kb(cat, *argv)
    assert done.returncode == 2
    err = done.stderr.decode()
    assert err.startswith("kb") and "Traceback" not in err
    assert not CONTROL.search(err.replace("\n", "")), err


def test_an_undecodable_byte_is_spelled_as_that_byte_everywhere():
    """A value that is not UTF-8 (os.environ, a path) holds its bytes as lone surrogates; written through a
    surrogateescape stream they would come back raw (0x9b starts an 8-bit CSI). The one printer spells them."""
    value = os.fsdecode(b"\x9bOFF \xff")
    assert printable(value) == "\\x9bOFF \\xff"
    assert json.loads(json_text({"v": value})) == {"v": value}
    assert "\udc9b" not in json_text({"v": value})
