"""`kb run -- torchrun …` on a failing job: the triage block comes before the matches."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from faultgrid import JOB


@pytest.mark.timeout(600)
@pytest.mark.slow
def test_kb_run_torchrun_prints_triage_before_matches(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        TRIAGE_FAULT="nan",
        TRIAGE_RANK="1",
        TRIAGE_TIMEOUT="10",  # as in the fault grid: a rank starved of CPU must not time out first
        OMP_NUM_THREADS="1",
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    cmd = [
        sys.executable,
        "-m",
        "trainkb",
        "run",
        "--",
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node=2",
        "--log-dir",
        str(tmp_path / "logs"),
        "--tee",
        "3",
        str(JOB),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=540, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    err = proc.stderr
    block = err.index("── kb run: triage: 2 ranks; rank 1 broke first")
    assert "non-finite" in err[block:].splitlines()[1]
    # then the matches, led by the culprit's entry: P14's message (a non-finite norm) has several causes,
    # so the entry is the closest one, unconfirmed
    matches = err.index("no catalogue entry matches this output confidently ──")
    assert block < matches
    assert err[matches:].split("closest entries, unconfirmed:\n", 1)[1].split()[0] == "P14"
