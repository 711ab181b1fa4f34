"""Run faultjob.py under torchrun with one injected fault and capture what a user would see.

Shared by the fault-injection test (tests/triage/test_fault_injection.py) and by the script that
refreshed the committed fixtures; the GPU machine runs the same job with TRIAGE_BACKEND=nccl.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

JOB = Path(__file__).with_name("faultjob.py")
# what faultjob.py can do to a rank; here, not there, so naming them does not import torch
FAULTS = ("raise", "sigkill", "exit", "hang", "collective", "nan")


@dataclass(frozen=True)
class Captured:
    nproc: int
    rank: int
    fault: str
    output: str  # stdout and stderr of torchrun, interleaved as the terminal shows them
    log_dir: Path  # torchrun --log-dir: <run_id>/attempt_0/<local_rank>/{stdout,stderr}.log, error.json
    returncode: int
    seconds: float


def run_fault(
    nproc: int, rank: int, fault: str, workdir: Path, backend: str = "gloo", timeout: float = 3.0, limit: float = 120.0
) -> Captured:
    """One torchrun job where ``rank`` suffers ``fault``; the others run the same loop unharmed."""
    log_dir = workdir / f"{fault}-n{nproc}-r{rank}"
    env = dict(
        os.environ,
        TRIAGE_FAULT=fault,
        TRIAGE_RANK=str(rank),
        TRIAGE_BACKEND=backend,
        TRIAGE_TIMEOUT=str(timeout),
        PYTHONUNBUFFERED="1",
        OMP_NUM_THREADS="1",
    )
    if fault == "collective":  # what D19 tells a user to rerun a suspected desync with
        env["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "--log-dir",
        str(log_dir),
        "--tee",
        "3",
        str(JOB),
    ]
    start = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=limit, check=False)
    return Captured(
        nproc, rank, fault, proc.stdout.decode("utf-8", "replace"), log_dir, proc.returncode, time.monotonic() - start
    )
