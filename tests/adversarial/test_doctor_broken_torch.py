"""`kb doctor` with a torch that raises, crashes, exits or hangs on import: the real error in one
line with the next step, a non-zero exit, and kb itself never stopped or frozen by it. A fake
`torch` package first on PYTHONPATH stands in for the broken install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trainkb.commands._exit import Exit

# what `import torch` raised where its CUDA runtime was missing (https://github.com/pytorch/pytorch/issues/10910)
# each test starts kb doctor over a fake torch that fails to import (one hangs until its timeout)
pytestmark = pytest.mark.slow

LIBCUDART = "libcudart.so.9.0: cannot open shared object file: No such file or directory"
BROKEN = {
    "import-error": f"raise ImportError({LIBCUDART!r})",
    "system-exit": "raise SystemExit(3)",
    "segfault": "import ctypes\nctypes.string_at(0)",
    "hang": "import time\ntime.sleep(3600)",
    "os-exit": "import os\nos._exit(5)",
}


def _doctor(tmp_path: Path, body: str | None, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = os.environ.copy()
    if body is not None:
        fake = tmp_path / "fake"
        (fake / "torch").mkdir(parents=True)
        (fake / "torch" / "__init__.py").write_text(body + "\n", encoding="utf-8")
        env["PYTHONPATH"] = os.pathsep.join([str(fake), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-m", "trainkb", "doctor", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("import-error", f"torch does not import: ImportError: {LIBCUDART}"),
        ("system-exit", "torch does not import: SystemExit: 3"),
        ("segfault", "importing torch kills the process (SIGSEGV)"),
        ("os-exit", "importing torch ends the process (exit status 5)"),
        ("hang", "importing torch did not finish within 3 s"),
    ],
)
def test_a_broken_torch_is_reported_with_its_real_error(tmp_path, kind, said):
    done = _doctor(tmp_path, BROKEN[kind], "--import-timeout", "3", timeout=90)  # a hang fails here
    assert done.returncode == Exit.FINDINGS, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    [line] = [ln for ln in done.stdout.splitlines() if ln.startswith("[FAIL]")]
    assert line.split("versions", 1)[1].strip() == said
    after = done.stdout.splitlines()[done.stdout.splitlines().index(line) + 1]
    assert "reinstall" in after or "importtime" in after  # the next step, on the line under it
    assert "dev_shm_size" in done.stdout  # the probes that need no torch still ran


def test_a_broken_torch_in_json(tmp_path):
    done = _doctor(tmp_path, BROKEN["import-error"], "--json")
    assert done.returncode == Exit.FINDINGS
    [versions] = [row for row in json.loads(done.stdout) if row["probe"] == "versions"]
    assert versions["status"] == "error" and LIBCUDART in versions["observed"]


def test_no_torch_at_all_is_not_an_error(tmp_path):
    """An environment without torch is one kb doctor serves: the torch probes say n/a."""
    body = "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')"
    done = _doctor(tmp_path, body, "--json")
    [versions] = [row for row in json.loads(done.stdout) if row["probe"] == "versions"]
    assert versions["status"] == "n/a" and versions["observed"] == "torch not importable"


def test_a_missing_source_file_is_a_usage_error(tmp_path):
    done = _doctor(tmp_path, None, str(tmp_path / "nonexistent.py"))
    assert done.returncode == Exit.USAGE
    assert done.stderr == f"kb: error: no such file or folder: {tmp_path / 'nonexistent.py'}\n"
    assert done.stdout == ""


def test_the_installed_torch_still_imports(tmp_path):
    """The child's trial import passes on a healthy torch: the probes see it as before."""
    done = _doctor(tmp_path, None, "--json")
    [versions] = [row for row in json.loads(done.stdout) if row["probe"] == "versions"]
    assert versions["status"] == "info" and versions["observed"].startswith("torch 2.")
