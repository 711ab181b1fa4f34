"""CUDA checks take turns on the GPU: with --jobs, one check's memory must never show in another's verdict."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

from trainkb.catalogue import Check
from trainkb.check import _runner
from trainkb.check._tasks import CheckTask
from trainkb.check._verdict import Verdict


def _task(name: str, cuda: bool) -> CheckTask:
    check = Check.model_validate(
        {
            "name": name,
            "claim": "c",
            "demonstrates": "failure",
            "code": "pass",
            "expect": "ok",
            "requires": {"cuda": cuda},
        }
    )
    return CheckTask("D1", check, "catalogue/x.yaml", 1)


def test_cuda_checks_never_overlap_while_others_do(monkeypatch) -> None:
    running = {"cuda": 0, "any": 0}
    peak = {"cuda": 0, "any": 0}
    lock = threading.Lock()

    def fake_run(pool, task, options, waiting):  # type: ignore[no-untyped-def]
        kind = "cuda" if task.check.requires.cuda else "cpu"
        with lock:
            running["any"] += 1
            running["cuda"] += kind == "cuda"
            peak["any"] = max(peak["any"], running["any"])
            peak["cuda"] = max(peak["cuda"], running["cuda"])
        time.sleep(0.05)
        with lock:
            running["any"] -= 1
            running["cuda"] -= kind == "cuda"
        return Verdict("passed", "ok"), 0.05, ""

    monkeypatch.setattr(_runner, "_run_one", fake_run)
    monkeypatch.setattr(_runner, "skip_reason", lambda check, env: None)
    tasks = [_task(f"gpu-{i}", True) for i in range(6)] + [_task(f"cpu-{i}", False) for i in range(6)]
    pool = SimpleNamespace(closed=False)  # a pool that was never stopped: every verdict counts
    results = _runner.run_tasks(tasks, _runner.RunOptions(jobs=6), pool=pool, env={})  # type: ignore[arg-type]
    assert [r.status for r in results] == ["passed"] * 12
    assert peak["cuda"] == 1
    assert peak["any"] > 1  # the CPU checks still run side by side
