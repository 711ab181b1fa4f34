"""Escape sequences in a pasted log never reach the terminal through the triage block of `kb triage`,
`kb search` or `kb run`: they are spelled out, in text and in JSON."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LOG = Path(__file__).resolve().parents[1] / "triage" / "fixtures" / "gloo" / "raise-n3-r1" / "combined.log"
OSC8 = "\x1b]8;;https://example.invalid/x\x1b\\"  # a hyperlink around the words that follow
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
RED = "\x1b[31m"
C1_CSI = "\x9b0m"  # the one-character CSI
BIDI = "\u202e"
CULPRIT = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x5 and 4x1)"
HOSTILE = f"RuntimeError: {OSC8}mat1{OSC8} and {CLEAR}mat2 {RED}shapes{C1_CSI} cannot {BIDI}be multiplied (8x5 and 4x1)"
RAW = (b"\x1b", b"\x07", "\x9b".encode(), BIDI.encode())


@pytest.fixture
def paste(tmp_path: Path) -> Path:
    text = LOG.read_text(encoding="utf-8")
    assert CULPRIT in text
    hostile = tmp_path / "combined.log"
    hostile.write_text(text.replace(CULPRIT, HOSTILE), encoding="utf-8")
    return hostile


def _kb(*argv: str, stdin: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    with open(stdin or os.devnull, "rb") as source:
        return subprocess.run(
            [sys.executable, "-m", "trainkb", *argv],
            stdin=source,
            capture_output=True,
            timeout=180,
            env=os.environ.copy(),
        )


def _safe(out: bytes) -> None:
    assert not [raw for raw in RAW if raw in out], out[:3000]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_kb_triage_spells_escapes_out(paste, json_flag):
    done = _kb("triage", *json_flag, str(paste))
    assert done.returncode in (0, 1), done.stderr
    _safe(done.stdout + done.stderr)
    if json_flag:
        culprit = next(r for r in json.loads(done.stdout)["triage"]["ranks"] if r["rank"] == 1)
        assert culprit["error"].startswith(f"RuntimeError: {OSC8}mat1")  # the JSON still carries the exact text
    else:
        assert b"rank 1" in done.stdout and b"\\x1b]8;;https://example.invalid/x" in done.stdout


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_kb_search_spells_escapes_out_in_its_triage_block(paste, json_flag):
    done = _kb("search", *json_flag, "-", stdin=paste)
    assert done.returncode in (0, 1), done.stderr
    _safe(done.stdout + done.stderr)
    if json_flag:
        assert json.loads(done.stdout)["triage"]["culprits"] == [1]
    else:
        assert b"\\x1b[2J" in done.stdout


def test_kb_run_spells_escapes_out_in_its_blocks(paste):
    """The command's own output passes through untouched (it is the command's); kb's blocks on stderr do not."""
    done = _kb("run", "--", "sh", "-c", f"cat '{paste}'; exit 1")
    assert done.returncode == 1
    assert b"\x1b]8;;" in done.stdout  # the command's output, as it printed it
    assert b"kb run: triage" in done.stderr
    _safe(done.stderr)


D8 = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"


def test_a_nul_between_words_parts_them():
    from trainkb.search import parse

    line = parse("RuntimeError: CUDA error: device-side assert triggered\x00\x00garbage\n").lines[0].text
    assert "triggered  garbage" in line and "\x00" not in line


def test_a_leading_bom_is_dropped_and_does_not_shift_the_evidence():
    from trainkb.search import search

    plain, bom = (search(prefix + D8 + "\n").to_json() for prefix in ("", "\ufeff"))
    assert bom == plain
    evidence = bom["results"][0]["evidence"][0]
    assert evidence["text"] == D8 and evidence["span"] == [14, 98] and "\\ufeff" not in json.dumps(bom)
