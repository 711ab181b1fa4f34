"""A limit kb cannot apply is a usage error before any check runs, never a column of false FAILs."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import checks_yaml, record


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


def test_an_absurd_memory_limit_is_a_usage_error(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    proc = _kb_check(root, "--memory-limit", "99999999999999999999G")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "argument --memory-limit" in proc.stderr and "Traceback" not in proc.stderr
