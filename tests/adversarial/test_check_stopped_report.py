"""A run stopped by a signal still writes its -o and --junit reports, with the verdicts it reached.

SIGTERM during `kb check --mutants -o r.json` used to leave no r.json at all: the checks that had
passed and the mutants already judged were lost with the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from helpers import checks_yaml, record
from leftovers import marked_tmpdir, wait_for_file, wait_for_no_survivors


def _checks(started: str) -> str:
    hangs = f"open({started!r}, 'w').close()\nimport time\ntime.sleep(300)\n"
    return checks_yaml(
        {"code": "x = 1\n", "expect": "ok", "mutation": {"find": "x = 1", "replace": "1 / 0", "why": "it raises"}},
        {"code": "x = 2\n", "expect": "ok", "mutation": {"find": "x = 2\n", "replace": hangs, "why": "it hangs"}},
        {"code": "x = 3\n", "expect": "ok", "mutation": {"find": "x = 3", "replace": "1 / 0", "why": "never reached"}},
    )


@pytest.mark.timeout(600)
def test_sigterm_during_the_mutants_keeps_the_verdicts_reached(make_catalogue, tmp_path):
    started = tmp_path / "started"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=_checks(str(started)))})
    out, junit = tmp_path / "r.json", tmp_path / "r.xml"
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "-j1", "--no-drift"]
    with marked_tmpdir() as tmp:
        proc = subprocess.Popen(
            [*command, "--mutants", "-o", str(out), "--junit", str(junit)],
            env=dict(os.environ, TMPDIR=str(tmp)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_for_file(started, proc)
            proc.send_signal(signal.SIGTERM)
            stdout, stderr = proc.communicate(timeout=240)
        finally:
            proc.kill()
        assert proc.returncode == 143, stdout + stderr
        assert "Traceback" not in stderr
        assert wait_for_no_survivors(str(tmp), 60) == []
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [r["status"] for r in report["results"]] == ["passed"] * 3
    mutants = {r["check"]: r for r in report["mutants"]["results"]}
    assert mutants["c0"]["status"] == "killed"
    assert mutants["c1"]["status"] == "skipped" and mutants["c1"]["message"].startswith("interrupted")
    assert mutants["c2"]["status"] == "skipped"
    assert mutants["c2"]["message"] == "not run: kb check was stopped by SIGTERM first (no verdict)"
    assert report["mutants"]["declared"] == 3
    assert ET.parse(junit).getroot().find("testsuite").get("tests") == "3"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("r.")) == ["r.json", "r.xml"]


@pytest.mark.timeout(600)
def test_sigterm_during_the_checks_reports_the_rest_as_not_run(make_catalogue, tmp_path):
    started = tmp_path / "started"
    hangs = f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)\n"
    checks = checks_yaml(
        {"code": "x = 1\n", "expect": "ok"}, {"code": hangs, "expect": "ok"}, {"code": "x = 3\n", "expect": "ok"}
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    out = tmp_path / "r.json"
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "-j1", "--no-drift"]
    proc = subprocess.Popen([*command, "-o", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_file(started, proc)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 143
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert [r["status"] for r in rows] == ["passed", "skipped", "skipped"]
    assert rows[2]["message"].startswith("not run: kb check was stopped by SIGTERM")
