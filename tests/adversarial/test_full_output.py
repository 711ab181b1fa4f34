"""A result that cannot be written (a full disk, a closed stdout) is said in one line with the usage
status, never a traceback, and never reported as success."""

from __future__ import annotations

import subprocess
import sys

import pytest

from trainkb.commands._exit import Exit

KB = f"{sys.executable} -m trainkb"
PASTE = (
    "'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 79.19 GiB'"
)


COMMANDS = (f"search --json {PASTE}", "triage --json -", "list --json", "show M1", "schema")
# each is a process of its own: a command's text form takes the write path its --json form takes in quick, and
# `lint` reads the whole bundled catalogue (seconds)
SLOW = (f"search {PASTE}", "list", "lint")


@pytest.mark.parametrize("command", [*COMMANDS, *(pytest.param(c, marks=pytest.mark.slow) for c in SLOW)])
@pytest.mark.parametrize("redirect", [">/dev/full", ">&-"])
def test_a_result_that_cannot_be_written_is_a_one_line_error(command, redirect, tmp_path):
    log = tmp_path / "ranks.log"
    log.write_text("[rank0]: RuntimeError: boom\n[rank1]: hello\n", encoding="utf-8")
    script = f"exec 3>&2; {KB} {command} < {log} {redirect} 2>&3"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=180)
    assert done.returncode == Exit.USAGE, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("kb: error: cannot write the output: ")
