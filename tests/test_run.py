"""`kb run`: output passes through, the failure is diagnosed, the exit status and signals survive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest
from helpers import record

SHAPE_SIG = """\
signatures:
  - {literal: "is invalid for input of size", type: RuntimeError,
     example: "RuntimeError: shape '[4]' is invalid for input of size 6", names_cause: true}
"""


@pytest.fixture
def cat(make_catalogue, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = record(extra=SHAPE_SIG).replace(
        "title: A sample failure for tests", "title: view() on a tensor of the wrong size"
    )
    return str(make_catalogue({"alpha/D1-sample.yaml": text}))


def kb(*args, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "trainkb", *args], capture_output=True, text=True, timeout=120, **kwargs
    )


def test_failure_is_diagnosed_after_the_traceback_and_status_kept(cat):
    script = (
        "import sys\nprint('epoch 1', flush=True)\nprint('warn', file=sys.stderr)\n"
        "raise RuntimeError(\"shape '[4]' is invalid for input of size 6\")\n"
    )
    proc = kb("--catalogue", cat, "run", "--", sys.executable, "-c", script)
    assert proc.returncode == 1
    assert proc.stdout == "epoch 1\n"  # stdout untouched and separate
    err = proc.stderr
    assert err.startswith("warn\nTraceback (most recent call last):")
    assert err.index("RuntimeError: shape") < err.index("D1  view() on a tensor of the wrong size")
    assert "fix: Apply the one-line remedy." in err  # the record's fix_summary
    assert "more: kb show D1" in err


def test_success_prints_nothing_extra(cat):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainkb",
            "--catalogue",
            cat,
            "run",
            "--",
            sys.executable,
            "-c",
            "print('\\rstep 1\\rstep 2', end='')",
        ],
        capture_output=True,
        timeout=120,
    )
    assert proc.returncode == 0
    assert proc.stdout == b"\rstep 1\rstep 2"  # carriage-return progress output is passed through intact
    assert proc.stderr == b""


def test_exit_status_of_a_signal_death(cat):
    proc = kb("--catalogue", cat, "run", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), 9)")
    assert proc.returncode == 128 + 9
    assert "was killed by signal 9" in proc.stderr


def test_usage_errors(cat):
    assert kb("--catalogue", cat, "run").returncode == 2
    assert kb("--catalogue", cat, "run", "--", "no-such-binary-xyz").returncode == 127  # as a shell


def test_ctrl_c_reaches_the_child(cat, tmp_path):
    marker = tmp_path / "got-sigint"
    script = (
        f"import signal, sys, time\n"
        f"def stop(*_):\n    open({str(marker)!r}, 'w').write('1')\n    sys.exit(42)\n"
        f"signal.signal(signal.SIGINT, stop)\nprint('ready', flush=True)\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainkb", "--catalogue", cat, "run", "--", sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "ready\n"
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=120) == 42
    assert marker.read_text() == "1"


def test_idle_timeout_diagnoses_a_hang(cat, tmp_path):
    """The job goes quiet and stays quiet until kb has spoken (it waits for a file the test writes then)."""
    go_on = tmp_path / "go-on"
    script = (
        "import os, sys, time\nprint(\"RuntimeError: shape '[4]' is invalid for input of size 6\", "
        f"file=sys.stderr, flush=True)\nwhile not os.path.exists({str(go_on)!r}):\n    time.sleep(0.05)\n"
    )
    job = [sys.executable, "-c", script]
    proc = subprocess.Popen(
        [sys.executable, "-m", "trainkb", "--catalogue", cat, "run", "--idle-timeout", "1", "--", *job],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        err = ""
        while "more: kb show D1" not in err:
            line = proc.stderr.readline()
            assert line, err  # kb ended without a diagnosis
            err += line
        go_on.write_text("1")
        err += proc.stderr.read()
        assert proc.wait(timeout=120) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "no output for 1 s" in err
    assert "D1  view() on a tensor" in err


@pytest.mark.slow
def test_two_rank_gloo_job_failing_on_one_rank(tmp_path):
    """A real torchrun job; the real catalogue must name the DDP unused-parameter entry."""
    script = tmp_path / "train.py"
    script.write_text(
        "import torch, torch.distributed as dist\nfrom torch import nn\n"
        "from torch.nn.parallel import DistributedDataParallel as DDP\n"
        "dist.init_process_group('gloo')\n"
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.a, self.b = nn.Linear(4, 4), nn.Linear(4, 4)\n"
        "    def forward(self, x):\n        return self.a(x)\n"
        "model = DDP(M())\nfor _ in range(2):\n    model(torch.randn(2, 4)).sum().backward()\n"
    )
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "run", "--", torchrun, "--standalone", "--nproc-per-node=2", str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1
    assert "ChildFailedError" in proc.stderr
    diagnosis = proc.stderr.split("this failure matches ──", 1)[1]  # after the triage block (tests/triage)
    assert diagnosis.splitlines()[1].strip().startswith("D8 ")


def test_an_oom_gets_the_differential_and_no_request_for_more(tmp_path, monkeypatch):
    """A real CUDA OOM (torch 2.11 on an H200, from the committed GPU report) printed by a job under
    `kb run`: kb holds the whole output, so it answers or lists what decides, and never asks for a paste."""
    import json
    from pathlib import Path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    report = Path(__file__).resolve().parents[1] / "reports" / "cuda-NVIDIA-H200-x2-torch2.11.0.json"
    rows = json.loads(report.read_text(encoding="utf-8"))["results"]
    capture = next(r["evidence"] for r in rows if r["entry"] == "M1" and r["check"] == "real-oom-message-fields")
    log = tmp_path / "oom.log"
    log.write_text(capture, encoding="utf-8")
    script = f"import sys\nsys.stderr.write(open({str(log)!r}).read())\nsys.exit(1)\n"
    proc = kb("run", "--", sys.executable, "-c", script)
    assert proc.returncode == 1
    diagnosis = proc.stderr.split(capture.rstrip()[-60:], 1)[-1]
    assert "several causes print this failure" in diagnosis or "this failure matches" in diagnosis, diagnosis
    assert "fix:" in diagnosis
    assert "paste" not in diagnosis.lower()
