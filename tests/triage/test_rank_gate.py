"""`kb search` reads a paste for ranks only when it holds a word the rank log reader learns ranks from
(``trainkb.ranklog.may_name_ranks``); the gate must never skip a paste that triage would answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from captures import FIXTURES

from trainkb.ranklog import RANK_WORDS, may_name_ranks
from trainkb.triage import triage_text

ROOT = Path(__file__).resolve().parents[2]
LOGS = sorted(FIXTURES.glob("*/*/combined.log"))


def _without_rank_words(text: str) -> str:
    for word in RANK_WORDS:
        text = text.replace(word, word.upper())
    return text


def test_real_multirank_logs_pass_the_gate_and_triage() -> None:
    assert len(LOGS) >= 20
    for log in LOGS:
        text = log.read_text(encoding="utf-8")
        assert may_name_ranks(text), log
        assert triage_text(text, match=False) is not None, log


def test_without_its_rank_words_no_real_log_triages() -> None:
    """Each real log with every gate word upper-cased (the reader matches them case as written) names
    no rank: the gate's words are all the reader learns ranks from."""
    for log in LOGS:
        text = _without_rank_words(log.read_text(encoding="utf-8"))
        assert not may_name_ranks(text), log
        assert triage_text(text, match=False) is None, log


def test_no_benchmark_paste_the_gate_skips_would_triage() -> None:
    pastes = [
        json.loads(line)["text"]
        for path in sorted((ROOT / "benchmarks").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and isinstance(json.loads(line), dict) and isinstance(json.loads(line).get("text"), str)
    ]
    skipped = [text for text in pastes if not may_name_ranks(text)]
    assert len(skipped) >= 100  # the gate spares most single-process pastes the reader
    assert [text[:80] for text in skipped if triage_text(text, match=False) is not None] == []


@pytest.mark.parametrize("paste", ["RuntimeError: CUDA error: out of memory", "[rank1]: RuntimeError: boom"])
def test_search_imports_the_rank_reader_only_for_a_paste_that_names_a_rank(paste: str) -> None:
    probe = (
        "import sys; from trainkb.cli import main; main(['search', sys.argv[1]]); "
        "print('trainkb.ranklog._read' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", probe, paste], capture_output=True, text=True, env=env, timeout=120)
    assert done.stdout.splitlines()[-1] == str(may_name_ranks(paste))
