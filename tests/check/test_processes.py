"""Multi-rank checks, skips, and the guarantee that nothing outlives `kb check`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main

GLOO_DEADLOCK = """\
import os, time
import torch
import torch.distributed as dist
from pathlib import Path
Path(os.environ["PID_DIR"], f"rank{os.environ['RANK']}").write_text(str(os.getpid()))
dist.init_process_group("gloo")
if dist.get_rank() == 0:
    dist.all_reduce(torch.ones(1))   # rank 1 never joins: rank 0 waits forever
else:
    time.sleep(600)
"""

GLOO_OK = """\
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
t = torch.ones(1) * (dist.get_rank() + 1)
dist.all_reduce(t)
assert t.item() == 3.0, t
assert dist.get_world_size() == 2
dist.destroy_process_group()
"""

FORKS_GRANDCHILD = """\
import os, subprocess, sys, time
from pathlib import Path
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
Path(os.environ["PID_DIR"], "grandchild").write_text(str(child.pid))
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state not in {"Z", "X"}


@pytest.mark.slow
def test_two_rank_gloo_checks_and_deadlock_with_no_survivors(make_catalogue, tmp_path):
    """Run `kb check` as a real process; afterwards no rank and no grandchild may be alive."""
    piddir = tmp_path / "pids"
    piddir.mkdir()

    def with_dir(code: str) -> str:  # checks see an allow-listed environment, so the folder goes in the code
        return code.replace('os.environ["PID_DIR"]', repr(str(piddir)))

    checks = checks_yaml(
        {
            "name": "deadlock",
            "code": with_dir(GLOO_DEADLOCK),
            "expect": {"hangs": {"seconds": 3}},
            "requires": {"processes": 2},
        },
        {"name": "allreduce", "code": GLOO_OK, "expect": "ok", "requires": {"processes": 2}},
        {"name": "grandchild", "code": with_dir(FORKS_GRANDCHILD), "expect": {"hangs": {"seconds": 2}}},
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-o", str(report), "-j", "2"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    statuses = {r["check"]: r["status"] for r in json.loads(report.read_text())["results"]}
    assert statuses == {"deadlock": "passed", "allreduce": "passed", "grandchild": "passed"}
    pids = [int(p.read_text()) for p in piddir.iterdir()]
    assert len(pids) == 3
    deadline = time.monotonic() + 60  # a hang guard: killed processes are normally gone at once
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in pids if _alive(pid)] == []


def test_a_rank_that_raises_frees_the_others(make_catalogue, capsys):
    code = (
        "import torch, torch.distributed as dist\ndist.init_process_group('gloo')\n"
        "if dist.get_rank() == 1:\n    raise ValueError('rank one broke')\n"
        "dist.all_reduce(torch.ones(1))\n"
    )
    checks = checks_yaml(
        {
            "code": code,
            "expect": {"raises": {"type": "ValueError", "match": "rank one"}},
            "requires": {"processes": 2},
            "timeout": 600,  # a run that waited for rank 0 until the deadline would outlast pytest's timeout
        }
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift"]) == 0
    assert "1 passed" in capsys.readouterr().out


@pytest.mark.slow
def test_skips_are_reported_and_strict_fails_them(make_catalogue, capsys):
    checks = checks_yaml(
        {"name": "gpu", "code": "pass", "expect": "ok", "requires": {"cuda": True}},
        {"name": "pkg", "code": "pass", "expect": "ok", "requires": {"packages": ["surely_not_installed_pkg"]}},
        {"name": "old", "code": "pass", "expect": "ok", "requires": {"torch": "<1.0"}},
        {"name": "runs", "code": "pass", "expect": "ok"},
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    assert main(["--catalogue", str(root), "check", "-q"]) == 0
    out = capsys.readouterr().out
    assert "1 passed, 3 skipped" in out
    assert "needs CUDA; no GPU is available here" in out
    assert "needs package 'surely_not_installed_pkg' (ModuleNotFoundError" in out
    assert "needs torch<1.0; this is 2." in out
    assert main(["--catalogue", str(root), "check", "-q", "--strict"]) == 1


@pytest.mark.usefixtures("shared_pool")  # a report and a selection, not the pool: the session's pool runs it
def test_json_junit_and_github_outputs(make_catalogue, tmp_path, capsys):
    checks = checks_yaml(
        {"name": "good", "code": "pass", "expect": "ok"},
        {"name": "bad", "code": "assert False, 'nope'", "expect": "ok"},
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    status = main(
        ["--catalogue", str(root), "check", "-q", "-o", str(report), "--junit", str(junit), "--format", "github"]
    )
    assert status == 1
    out = capsys.readouterr().out
    assert "::error file=catalogue/alpha/D1-sample.yaml,line=" in out
    data = json.loads(report.read_text())
    assert data["format"] == "trainkb-check-report"
    env = data["environments"][0]
    assert env["torch"].startswith("2.") and env["python"] and env["platform"] and env["timestamp"]
    assert env["name"].startswith("cpu-torch")
    assert [(r["check"], r["status"]) for r in data["results"]] == [("good", "passed"), ("bad", "failed")]
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    assert suite.find("testcase[@name='bad']/failure").get("message").startswith("rank 0 raised AssertionError")


@pytest.mark.slow
def test_shards_partition_the_checks(make_catalogue, tmp_path):
    checks = checks_yaml(*({"name": f"c{i}", "code": "pass", "expect": "ok"} for i in range(8)))
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    seen = []
    for i in (1, 2, 3):
        out = tmp_path / f"s{i}.json"
        assert main(["--catalogue", str(root), "check", "-q", "--shard", f"{i}/3", "-o", str(out)]) == 0
        seen += [r["check"] for r in json.loads(out.read_text())["results"]]
    assert sorted(seen) == sorted(f"c{i}" for i in range(8))
    assert main(["--catalogue", str(root), "check", "--shard", "4/3"]) == 2


@pytest.mark.usefixtures("shared_pool")  # a report and a selection, not the pool: the session's pool runs it
def test_report_merge_builds_a_matrix(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    cpu = tmp_path / "cpu.json"
    assert main(["--catalogue", str(root), "check", "-q", "-o", str(cpu)]) == 0
    gpu_data = json.loads(cpu.read_text())
    gpu_data["environments"][0]["name"] = "cuda-NVIDIA-H100-torch2.11.0"
    for row in gpu_data["results"]:
        row["environment"] = "cuda-NVIDIA-H100-torch2.11.0"
    gpu = tmp_path / "gpu.json"
    gpu.write_text(json.dumps(gpu_data))
    merged = tmp_path / "all.json"
    assert main(["report", "merge", str(cpu), str(gpu), "-o", str(merged)]) == 0
    data = json.loads(merged.read_text())
    assert [e["name"] for e in data["environments"]][1] == "cuda-NVIDIA-H100-torch2.11.0"
    assert len(data["results"]) == 2
    assert main(["report", "merge", str(tmp_path / "missing.json")]) == 2


def test_usage_errors(make_catalogue, capsys):
    root = str(make_catalogue({"alpha/D1-sample.yaml": record()}))
    assert main(["--catalogue", root, "check", "ZZ9"]) == 2
    assert main(["--catalogue", root, "check", "--jobs", "0"]) == 2
    assert main(["--catalogue", root, "check", "--area", "nope"]) == 2
    assert "unknown" in capsys.readouterr().err


@pytest.mark.usefixtures("shared_pool")  # a report and a selection, not the pool: the session's pool runs it
def test_changed_since_selects_edited_records(make_catalogue, tmp_path):
    root = make_catalogue(
        {
            "alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"})),
            "beta/D2-other.yaml": record("D2", "beta", "three", checks=checks_yaml({"code": "pass", "expect": "ok"})),
        }
    )
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    (root / "beta/D2-other.yaml").write_text((root / "beta/D2-other.yaml").read_text() + "\n")
    out = tmp_path / "r.json"
    assert main(["--catalogue", str(root), "check", "-q", "--changed-since", "HEAD", "-o", str(out)]) == 0
    assert [r["entry"] for r in json.loads(out.read_text())["results"]] == ["D2"]


def test_merging_shards_of_one_environment_keeps_both(tmp_path, capsys):
    def report(checks):
        env = {"name": "cpu-torch2.13.0", "torch": "2.13.0"}
        rows = [{"entry": "D1", "check": c, "status": "passed", "environment": env["name"]} for c in checks]
        return {"format": "trainkb-check-report", "version": 1, "environments": [env], "results": rows}

    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(report(["x", "y"])))
    b.write_text(json.dumps(report(["z"])))
    assert main(["report", "merge", str(a), str(b)]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert [r["check"] for r in merged["results"]] == ["x", "y", "z"]
    assert merged["summary"] == {"passed": 3}


@pytest.mark.slow
def test_signature_drift_fails_the_run(make_catalogue, capsys, tmp_path, monkeypatch):
    """A raises check whose output search does not map back to its entry is a failure."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    check = checks_yaml(
        {
            "code": "import torch\ntorch.zeros(2, 3).view(4)\n",
            "expect": {"raises": {"type": "RuntimeError", "match": "is invalid for input"}},
        }
    )
    good = (
        "signatures:\n  - {literal: 'is invalid for input of size', type: RuntimeError,\n"
        "     example: \"RuntimeError: shape '[4]' is invalid for input of size 6\", names_cause: true}\n"
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=check, extra=good)})
    assert main(["--catalogue", str(root), "check", "-q"]) == 0
    capsys.readouterr()
    drifted = tmp_path / "drifted" / "catalogue"
    shutil.copytree(root, drifted)
    (drifted / "alpha/D1-sample.yaml").write_text(record(checks=check))  # the signature is gone
    assert main(["--catalogue", str(drifted), "check", "-q"]) == 1
    assert "signature drift: search abstained" in capsys.readouterr().out


# Rank 0 takes the MASTER_PORT kb picked before the store can bind it, as another program on a busy
# machine may in the moment between kb's pick and the bind; only on the first run (the marker file).
TAKES_ITS_PORT = """\
import os, socket
from pathlib import Path
import torch.distributed as dist
marker = Path(MARKER)
if os.environ["RANK"] == "0" and not marker.exists():
    marker.write_text(os.environ["MASTER_PORT"])
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    squatter.bind(("127.0.0.1", int(os.environ["MASTER_PORT"])))
    squatter.listen()
dist.init_process_group("gloo")
dist.barrier()  # without it rank 0 may close its gloo pairs while rank 1 still connects ("Connection closed by peer")
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_a_master_port_taken_by_someone_else_runs_the_check_again(make_catalogue, tmp_path):
    """EADDRINUSE on the port kb picked is the machine's doing, not the check's verdict."""
    marker = tmp_path / "first-port"
    code = TAKES_ITS_PORT.replace("MARKER", repr(str(marker)))
    checks = checks_yaml({"code": code, "expect": "ok", "requires": {"processes": 2}, "timeout": 120})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-o", str(report), "--no-drift"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert marker.exists(), proc.stdout + proc.stderr  # the port was taken on the first run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [r["status"] for r in json.loads(report.read_text())["results"]] == ["passed"]


@pytest.mark.slow
def test_a_differential_that_names_the_entry_is_no_drift(make_catalogue, capsys, tmp_path, monkeypatch):
    """A check's output that several entries print gives a differential; the entry among its candidates passes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    check = checks_yaml(
        {
            "code": "import torch\ntorch.zeros(2, 3).view(4)\n",
            "expect": {"raises": {"type": "RuntimeError", "match": "is invalid for input"}},
        }
    )
    shared = (
        "signatures:\n  - {{literal: 'is invalid for input of size', type: RuntimeError,\n"
        "     example: \"RuntimeError: shape '[4]' is invalid for input of size 6\", names_cause: false}}\n"
        "tells:\n  - says: a sign only {id} shows\n    when:\n      - line: 'only-{id}-prints-this'\n"
        "    source: 'check:sample'\n    example: 'only-{id}-prints-this'\n"
    )
    # D2 shares the line and carries more of the paste's words, so it ranks first
    rival = record("D2", extra=shared.format(id="D2")).replace(
        "title: A sample failure for tests", "title: view shape is invalid for input of size (RuntimeError)"
    )
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=check, extra=shared.format(id="D1")), "alpha/D2-rival.yaml": rival}
    )
    from trainkb.search import search

    response = search("RuntimeError: shape '[4]' is invalid for input of size 6", top=3, catalogue=root)
    assert response.status == "differential" and response.results[0].id == "D2", response
    assert main(["--catalogue", str(root), "check", "-q", "D1"]) == 0, capsys.readouterr().out
