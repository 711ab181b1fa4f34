"""A limit kb cannot apply is a usage error before any check runs, never a column of false FAILs."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main


def _kb_check(root, *args, shell_prefix=""):
    kb = " ".join([sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", *args])
    return subprocess.run(
        ["bash", "-c", f"{shell_prefix}{kb}"], capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )


def test_a_hard_memory_limit_below_the_checkers_is_a_usage_error(make_catalogue, tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('1')\nraise ValueError('x')\n"
    root = make_catalogue(
        {
            "alpha/D1-sample.yaml": record(
                checks=checks_yaml({"code": code, "expect": {"raises": {"type": "ValueError", "match": "x"}}})
            )
        }
    )
    proc = _kb_check(root, shell_prefix="ulimit -v 12000000; ")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "hard address-space limit" in proc.stderr and "Traceback" not in proc.stderr
    assert "completed without raising" not in proc.stdout
    assert not marker.exists()


def _kb_check_here(root, capsys, *args) -> tuple[int, str]:
    """`kb check` in this process, its checks in the session's pool: for what a verdict says, not how kb starts."""
    status = main(["--catalogue", str(root), "check", "-q", *args])
    return status, capsys.readouterr().out


def test_an_absurd_memory_limit_is_a_usage_error(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    proc = _kb_check(root, "--memory-limit", "99999999999999999999G")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "argument --memory-limit" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.usefixtures("shared_pool")
def test_memory_refused_under_the_memory_limit_names_the_limit_and_shows_no_kb_frame(make_catalogue, capsys):
    """`bytearray(40 * 2**30)` under the default 16G read as the snippet's own bare `MemoryError:  ` with
    kb's `run_snippet` frame at the top of its traceback; the limit kb set is what the verdict names."""
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "bytearray(40 * 2**30)\n", "expect": "ok"}))}
    )
    status, out = _kb_check_here(root, capsys, "--no-drift", "--json")
    assert status == 1, out
    (result,) = json.loads(out)["results"]
    assert result["status"] == "failed"
    assert result["message"].startswith(
        "rank 0 raised MemoryError — it ran under kb check's memory limit (--memory-limit 16G, an address-space "
        "limit), which refuses any allocation past it"
    ), result["message"]
    assert "MemoryError:  " not in result["message"]
    output = result["output"]
    assert "_child.py" not in output and "run_snippet" not in output, output
    first_frame = output.split("Traceback (most recent call last):\n", 1)[1].splitlines()[0]
    assert first_frame.startswith('  File "') and "line 1, in <module>" in first_frame, output


@pytest.mark.usefixtures("shared_pool")
def test_a_memory_limit_given_is_the_one_named(make_catalogue, capsys):
    code = "import torch\ntorch.empty(2**31)\n"  # 8 GiB of float32 under a 4 GiB limit: torch's allocator refuses
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    _status, out = _kb_check_here(root, capsys, "--no-drift", "--memory-limit", "4G", "--json")
    (result,) = json.loads(out)["results"]
    assert result["status"] == "failed"
    assert "DefaultCPUAllocator: can't allocate memory" in result["message"]
    assert "(--memory-limit 4G, an address-space limit)" in result["message"], result["message"]
