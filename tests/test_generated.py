"""Committed files built from the failure corpus must match what their builders give today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.parametrize("script", ["background.py", "coverage.py"])
def test_generated_file_is_up_to_date(script: str) -> None:
    run = subprocess.run([sys.executable, str(BENCHMARKS / script), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "is up to date" in run.stdout
