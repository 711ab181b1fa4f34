"""`kb search` never hides that it read only the end of its input: a log whose error lies above the part
kept was called a description ("A description alone rarely names one cause…"), and nothing said that
46 MB of it had been dropped."""

from __future__ import annotations

import json
import subprocess
import sys

from trainkb.search._hint import ADVICE

OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
FILLER = "B" * 100 + "\n"


def _kb_search(data: bytes, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainkb", "search", *args, "-"],
        input=data.decode(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_log_cut_before_its_error_says_so_and_is_not_called_a_description():
    data = (OOM + FILLER * 500_000).encode()  # 50.5 MB through a pipe: its last 4 MB are kept
    proc = _kb_search(data, "--json")
    assert proc.returncode == 1, proc.stderr
    response = json.loads(proc.stdout)
    lines = 500_001
    searched = response["input"]
    assert searched["cut"] is True and searched["bytes"] == len(data)
    kept_lines = lines - searched["searched_from_line"] + 1
    assert searched["searched_chars"] == kept_lines * len(FILLER)  # whole filler lines, the last of them
    assert 1 < searched["searched_from_line"] <= lines
    assert response["advice"] not in (ADVICE["prose"], ADVICE["log"])
    assert "description" not in response["advice"]
    assert f"from line {searched['searched_from_line']} on" in response["advice"]
    assert proc.stderr == (
        f"kb: the input holds 50.5 MB; search read its end only, the last {searched['searched_chars']:,} characters, "
        f"from line {searched['searched_from_line']} on: an error above that line is not seen\n"
    )


def test_the_text_output_says_it_too():
    proc = _kb_search((OOM + FILLER * 500_000).encode())
    assert proc.returncode == 1
    assert proc.stderr.startswith("kb: the input holds 50.5 MB; search read its end only")
    assert "A description alone" not in proc.stdout and "may lie above that line" in proc.stdout


def test_search_s_own_limit_is_said_although_the_pipe_kept_everything():
    """Under the 4 MB a pipe keeps, search still reads only its last 200,000 characters."""
    data = (OOM + FILLER * 3_000).encode()  # 300 kB
    response = json.loads(_kb_search(data, "--json").stdout)
    assert response["input"]["cut"] is True and response["input"]["bytes"] == len(data)
    assert response["input"]["searched_from_line"] > 1


def test_a_whole_input_is_not_cut_and_keeps_its_answer_and_advice():
    data = (OOM + FILLER * 10).encode()
    proc = _kb_search(data, "--json")
    searched = json.loads(proc.stdout)["input"]
    assert searched == {"bytes": len(data), "searched_from_line": 1, "searched_chars": len(data), "cut": False}
    assert proc.stderr == ""


def test_one_line_longer_than_search_reads_is_not_said_to_have_lines_above():
    """A 1 MB line was read from its end: the advice said the error "may lie above" line 1."""
    data = ("x" * 1_000_000 + "\n").encode()
    proc = _kb_search(data)
    assert proc.returncode == 1
    assert "part of line 1, a line longer than that: an error earlier in that line is not seen" in proc.stderr
    assert "above that line" not in proc.stdout + proc.stderr
