"""What kb check writes survives what a snippet raised and where kb's own output goes.

A lone surrogate or a NUL in an exception message, a closed or full stderr, a deleted working
folder: each costs at most what cannot be shown, never the report, the summary or the exit status.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main

pytestmark = pytest.mark.timeout(900)

HOSTILE = (
    "import os\n"
    "os.write(1, b'out\\x00put \\x1b[2J\\xff\\n')\n"
    "raise ValueError('lone \\ud800 surrogate, a NUL \\x00 and an escape \\x1b[31m')\n"
)


@pytest.mark.usefixtures("shared_pool")
def test_a_message_no_utf8_or_xml_can_hold_keeps_every_report(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": HOSTILE, "expect": "ok"}))})
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    args = ["--catalogue", str(root), "check", "--no-drift", "-o", str(report), "--junit", str(junit)]
    assert main(args) == 1
    [row] = json.loads(report.read_text(encoding="utf-8"))["results"]
    assert row["status"] == "failed" and "\\ud800" in row["message"]
    [failure] = ET.parse(junit).getroot().iter("failure")
    assert "\\ud800" in failure.get("message", "") and "\\x00" in (failure.text or "")
    assert "1 failed" in capsys.readouterr().out


def _kb(root, report, *extra, **popen):
    return subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "--no-drift", "-o", str(report), *extra],
        stdout=subprocess.PIPE,
        timeout=600,
        **popen,
    )


# each is a kb check process with a pool of its own, so both wait for `make test`
@pytest.mark.slow
@pytest.mark.parametrize("stderr", ["closed", "full"])
def test_a_closed_or_full_stderr_costs_the_progress_only(make_catalogue, tmp_path, stderr):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    report = tmp_path / "r.json"
    if stderr == "closed":
        done = _kb(root, report, "--json", preexec_fn=lambda: os.close(2))
    else:
        with open("/dev/full", "w") as full:
            done = _kb(root, report, "--json", stderr=full)
    assert done.returncode == 0, done.stdout[-2000:]
    assert json.loads(done.stdout)["summary"] == {"passed": 1}  # stdout holds the report alone
    assert json.loads(report.read_text(encoding="utf-8"))["summary"] == {"passed": 1}


def test_a_deleted_working_folder_is_one_error_line(make_catalogue, tmp_path):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    gone = tmp_path / "gone"
    gone.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q"],
        cwd=gone,
        preexec_fn=gone.rmdir,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("kb: error:") and len(done.stderr.strip().splitlines()) == 1
