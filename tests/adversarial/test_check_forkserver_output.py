"""What kb's forkserver prints before it dies reaches the user, on one line, instead of /dev/null.

A torch whose import raises something other than ImportError killed the forkserver with a
traceback nobody saw; `kb check` then died itself with a traceback about an "unexpected EOF".
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import checks_yaml, record

import trainkb


@pytest.mark.timeout(300)
def test_the_forkservers_dying_words_are_in_the_one_line_error(make_catalogue, tmp_path):
    fake = tmp_path / "site" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text('raise RuntimeError("zq-broken-build: libtorch_cpu.so mismatch")\n')
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "x = 1\n", "expect": "ok"}))})
    src = str(Path(trainkb.__file__).resolve().parents[1])  # the trainkb under test, not an installed one
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(fake.parent), src]))
    done = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "--no-drift", "-q"],
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kb: error: kb check could not start its check processes"), lines
    assert "RuntimeError: zq-broken-build: libtorch_cpu.so mismatch" in lines[0]
