"""JSON nested 100,000 deep (a check report, a rank's error.json) is a one-line error or a skipped
file with a warning, never a RecursionError traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPTH = 100_000
FIXTURE = Path(__file__).resolve().parents[1] / "triage" / "fixtures" / "gloo" / "raise-n3-r1" / "logs"


def _deep(key: str = "results") -> str:
    """A report-shaped object whose ``key`` holds arrays nested DEPTH deep."""
    head = json.dumps({"format": "trainkb-check-report", "version": 1})[:-1]
    return f'{head}, "{key}": {"[" * DEPTH}{"]" * DEPTH}}}'


def _kb(*argv: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "trainkb", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=os.environ.copy())


def test_the_input_really_overflows_pythons_json():
    with pytest.raises(RecursionError):
        json.loads(_deep())


def test_report_merge_says_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text(_deep(), encoding="utf-8")
    done = _kb("report", "merge", str(deep))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"kb: error: {deep}: JSON nested too deeply; not a check report\n"


@pytest.mark.slow
def test_site_build_skips_the_report_with_a_warning(tmp_path):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "deep.json").write_text(_deep("environments"), encoding="utf-8")
    done = _kb("site", "build", "-o", str(tmp_path / "site"), "--reports", str(reports))
    assert done.returncode == 1, done.stderr  # built, with a report left out
    assert (tmp_path / "site" / "index.html").is_file() and "Traceback" not in done.stderr
    assert "deep.json: JSON nested too deeply" in done.stderr and "report skipped" in done.stderr


def test_triage_skips_a_deep_error_json_with_a_warning_and_triages_the_rest(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(FIXTURE, logs)
    [rank_dir] = [p for p in logs.glob("*/attempt_0/1")]
    (rank_dir / "error.json").write_text('{"message": ' + "[" * DEPTH + "]" * DEPTH + "}", encoding="utf-8")
    done = _kb("triage", "--no-match", str(logs))
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "rank 1 broke first" in done.stdout
    [warning] = done.stderr.splitlines()
    assert warning.startswith("kb: warning: ") and warning.endswith("error.json: JSON nested too deeply; skipped")
