"""What `kb check` prints comes from kb alone.

A snippet can open its supervisor's descriptors through ``/proc/<ppid>/fd``; when the forkserver
and so every supervisor held kb's own stdout and stderr, a snippet wrote forged workflow commands
and escape sequences into kb's output and broke its ``--json`` report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir

FORGE = (
    "import os\n"
    "for fd in (1, 2):\n"
    "    with open(f'/proc/{os.getppid()}/fd/{fd}', 'w') as f:\n"
    "        f.write('::error file=evil.py,line=1::FORGED\\n')\n"
)


@pytest.mark.slow  # a real kb check process: what it guards is its own stdout and stderr
def test_a_snippet_cannot_write_into_kbs_own_output(make_catalogue):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": FORGE, "expect": "ok"}))})
    with marked_tmpdir() as tmp:
        env = dict(os.environ, TMPDIR=str(tmp))
        command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "--no-drift", "--json"]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert "FORGED" not in done.stderr
    report = json.loads(done.stdout)  # the whole of stdout is kb's report
    [result] = report["results"]
    assert result["status"] == "passed", result
