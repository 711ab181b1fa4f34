"""A 20 GB log given as a file, a folder or stdin is read from its tail, not whole.

The file is sparse (no disk used); what is asserted is how many bytes kb read (/proc/self/io's
rchar, imports included) and what it found in the tail, never a wall-clock time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import record

SIG = """\
signatures:
  - {literal: "is invalid for input of size", type: RuntimeError,
     example: "RuntimeError: shape '[4]' is invalid for input of size 6", names_cause: true}
"""

# Two ranks of a torchrun job as torch prints them: rank 1 raises, rank 0 times out in the collective.
FAILURE = (
    "\n[rank1]: Traceback (most recent call last):\n"
    '[rank1]:   File "train.py", line 3, in <module>\n'
    "[rank1]: RuntimeError: shape '[4]' is invalid for input of size 6\n"
    "[rank0]: [E ProcessGroupNCCL.cpp:1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out.\n"
)

# kb run in this process, then what the process read in all, written to argv[1].
DRIVER = """\
import atexit, runpy, sys
out = sys.argv[1]
def report():
    with open("/proc/self/io") as io, open(out, "w") as f:
        f.write(io.read())
atexit.register(report)
sys.argv = ["kb", *sys.argv[2:]]
runpy.run_module("trainkb", run_name="__main__")
"""

BIG = 20 * 1024**3
LIMIT = 1024**3  # what kb may read of it: the documented 256 MiB tail and its own files, far below 20 GB


@pytest.fixture
def big_log(tmp_path: Path) -> Path:
    log = tmp_path / "logs" / "big.log"
    log.parent.mkdir()
    with open(log, "wb") as handle:
        handle.truncate(BIG)
        handle.seek(BIG)
        handle.write(FAILURE.encode())
    return log


def _kb(tmp_path: Path, env: dict[str, str], *args: str, stdin: Path | None = None) -> tuple[int, str, str, int]:
    io_file = tmp_path / "io.txt"
    with open(stdin or os.devnull, "rb") as source:
        proc = subprocess.run(
            [sys.executable, "-c", DRIVER, str(io_file), *args],
            stdin=source,
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    counters = dict(line.split(": ") for line in io_file.read_text().splitlines())
    return proc.returncode, proc.stdout, proc.stderr, int(counters["rchar"])


@pytest.fixture
def env(make_catalogue, tmp_path):
    cat = make_catalogue({"alpha/D1-sample.yaml": record(extra=SIG)})
    return {**os.environ, "TRAINKB_CATALOGUE": str(cat), "XDG_CACHE_HOME": str(tmp_path / "cache")}


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts the bytes read through /proc")
@pytest.mark.parametrize("how", ["file", "folder", "stdin"])
def test_kb_triage_reads_the_tail_of_a_20_gb_log(big_log, env, tmp_path, how):
    args = {"file": [str(big_log)], "folder": [str(big_log.parent)], "stdin": ["-"]}[how]
    status, out, err, read = _kb(tmp_path, env, "triage", *args, stdin=big_log if how == "stdin" else None)
    assert status == 0, err
    assert "rank 1 broke first" in out
    assert "line numbers count from there" in err  # the numbers shown are not the file's
    assert read < LIMIT


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="counts the bytes read through /proc")
def test_kb_search_reads_the_tail_of_a_20_gb_log_given_as_stdin(big_log, env, tmp_path):
    status, out, err, read = _kb(tmp_path, env, "search", "-", stdin=big_log)
    assert status == 0, err
    assert "D1" in out and "rank 1 broke first" in out
    assert "line numbers count from there" in err
    assert read < LIMIT
