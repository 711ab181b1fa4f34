"""kb never reads its own advice back as the failure: saved `kb run` and hook output (tests/own_output/)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainkb._newrecord import propose_signatures
from trainkb._ownoutput import OWN, in_own_block, own_lines
from trainkb.search import search
from trainkb.triage import to_json, triage_text

SAVED = Path(__file__).parent / "own_output"
LOGS = sorted(p.name for p in SAVED.glob("*.log"))


def _read(name: str) -> str:
    return (SAVED / name).read_text(encoding="utf-8")


# the lines (1-based, blank ones aside) of kb's blocks in each saved log, read off the files by eye
KB_LINES = {
    "hook-ddp-unused-2rank-tee.log": set(range(47, 54)),  # the hook's block, behind [default0]:[rank0]:
    "kb-run-ddp-unused-2rank.log": set(range(86, 98)),  # the triage block, then the answer
    "kb-run-view-shape.log": {4, 5, 6, 7, 8, 10},  # the closest entries and what would help
}


def test_the_marker_finds_exactly_kbs_blocks():
    assert sorted(KB_LINES) == LOGS
    for name, expected in KB_LINES.items():
        text = _read(name)
        lines = text.split("\n")
        own = {i + 1 for i in own_lines(lines) if lines[i].strip()}
        assert own == expected, name
        starts = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
        found = {i + 1 for i in range(len(lines)) if lines[i].strip() and in_own_block(text, starts[i])}
        assert found == expected, name


@pytest.mark.parametrize("name", LOGS)
def test_search_cites_the_run_never_kbs_advice(name):
    text = _read(name)
    own = own_lines(text.split("\n"))
    response = search(text, top=3)
    assert all(ev.line - 1 not in own for r in response.results for ev in r.evidence)
    assert "kb run" not in (response.advice or "") and "closest" not in (response.advice or "")
    if "ddp" in name:
        assert response.status == "answered" and response.results[0].id == "D8"


def test_search_on_a_saved_run_answers_as_on_the_bare_traceback():
    text = _read("kb-run-view-shape.log")
    bare = text.split("── kb")[0]
    assert [(r.id, r.score) for r in search(text).results] == [(r.id, r.score) for r in search(bare).results]
    assert search(text).advice == search(bare).advice


@pytest.mark.parametrize("name", LOGS)
def test_kb_new_proposes_signatures_from_the_failure_only(name):
    text = _read(name)
    lines = text.split("\n")
    own = own_lines(lines)
    theirs = "\n".join(line for i, line in enumerate(lines) if i not in own)
    proposed = propose_signatures(text)
    assert proposed
    for signature in proposed:
        assert signature.example in theirs.replace("\n", " ") or signature.example in theirs
        assert "kb show" not in signature.example and "unconfirmed" not in signature.example


def test_kb_new_titles_a_saved_run_after_its_exception(tmp_path):
    log = SAVED / "kb-run-view-shape.log"
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "new", "--from", str(log), "--dry-run"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    title = next(line for line in proc.stdout.splitlines() if line.startswith("title:"))
    assert title.startswith("title: 'RuntimeError: shape ''[3]'' is invalid for input of size 4'  #")


@pytest.mark.parametrize("name", ["kb-run-ddp-unused-2rank.log", "hook-ddp-unused-2rank-tee.log"])
def test_triage_reads_the_ranks_not_kbs_block(name):
    text = _read(name)
    lines = text.split("\n")
    own = own_lines(lines)
    bare = "\n".join("" if i in own else line for i, line in enumerate(lines))  # same line numbers
    saved, plain = triage_text(text), triage_text(bare)
    assert saved is not None and plain is not None
    assert to_json(saved) == to_json(plain)
    assert all(v.line is None or v.line - 1 not in own for v in saved.ranks)


def test_kb_search_text_output_is_marked_as_kbs_own(capsys):
    from trainkb.cli import main

    main(["search", _read("kb-run-ddp-unused-2rank.log")])
    out = capsys.readouterr().out.rstrip("\n")
    assert out.startswith(f"{OWN.mark} triage: ") and f"\n{OWN.mark} search: this failure matches ──\n" in out
    assert own_lines(out.split("\n")) == set(range(len(out.split("\n"))))
    assert not search(out).results  # searched again, kb's answer is nothing to go on
