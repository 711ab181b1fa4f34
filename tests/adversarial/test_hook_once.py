"""`trainkb.install()` in a real torchrun job where every rank raises: the advice prints once per job.

torchrun SIGTERMs the other ranks as soon as one exits, usually while the rank that claimed the
job's advice is still searching; and a fixed MASTER_PORT or the default run id "none" must
not silence the next job. Each run costs a torchrun start (2-6 s on a 2-core machine).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
from helpers import record

SIG = """\
signatures:
  - {literal: "is invalid for input of size", type: RuntimeError,
     example: "RuntimeError: shape '[4]' is invalid for input of size 6", names_cause: true}
"""

# The message torch prints for `torch.zeros(6).view(4)`; raised directly so each rank starts in
# a fraction of a second instead of importing torch.
TRAIN = """\
import trainkb
trainkb.install()
raise RuntimeError("shape '[4]' is invalid for input of size 6")
"""

RUNS = 20


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.timeout(900)
@pytest.mark.slow
def test_every_rank_raises_and_each_job_prints_its_advice_once(make_catalogue, tmp_path):
    cat = make_catalogue({"alpha/D1-sample.yaml": record(extra=SIG)})
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    markers = tmp_path / "tmp"
    markers.mkdir()
    env = {
        **os.environ,
        "TRAINKB_CATALOGUE": str(cat),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(markers),
    }
    port = _free_port()
    counts = []
    for run in range(RUNS):
        # Half the jobs as --standalone (a fresh run id each), half on one fixed port with the
        # default run id "none": consecutive jobs that look alike must print all the same.
        how = ["--standalone"] if run % 2 == 0 else ["--master-addr=127.0.0.1", f"--master-port={port}"]
        proc = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", *how, "--nproc-per-node=2", str(script)],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode != 0
        assert proc.stderr.count("is invalid for input of size 6") >= 2, proc.stderr  # both ranks raised
        counts.append(proc.stderr.count("more: kb show D1"))
    assert max(counts) == 1, counts  # never once per rank
    assert counts.count(1) >= RUNS - 1, counts
