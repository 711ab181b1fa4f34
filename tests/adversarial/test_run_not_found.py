"""`kb run` starts its command as a shell would: 127 for a name not on PATH, with one line naming it."""

from __future__ import annotations

import subprocess
import sys

import pytest

KB_RUN = [sys.executable, "-m", "trainkb", "run"]


@pytest.mark.parametrize(("name", "shown"), [("kb-no-such-command-xyz", "kb-no-such-command-xyz"), ("", "''")])
def test_a_command_not_on_path_gives_127_and_names_it(name, shown):
    """It used to be the usage status 2, and an empty name read 'command not found: ' with nothing after it."""
    proc = subprocess.run([*KB_RUN, "--", name, "arg"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 127, proc.stderr
    assert proc.stderr == f"kb run: {shown}: command not found\n"
    assert proc.stdout == ""


def test_the_status_matches_the_shell_for_a_missing_command():
    shell = subprocess.run(["sh", "-c", "kb-no-such-command-xyz"], capture_output=True, timeout=60)
    proc = subprocess.run([*KB_RUN, "--", "kb-no-such-command-xyz"], capture_output=True, timeout=120)
    assert proc.returncode == shell.returncode == 127


def test_a_missing_command_with_control_characters_is_spelled_out():
    proc = subprocess.run([*KB_RUN, "--", "no-such-command\x1b]0;pwned\x07"], capture_output=True, timeout=120)
    assert proc.returncode == 127
    assert proc.stderr.count(b"\n") == 1 and b"command not found" in proc.stderr
    assert b"\x1b" not in proc.stderr and b"\x07" not in proc.stderr
