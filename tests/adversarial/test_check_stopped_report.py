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


# a stopped run's -o and --junit reports: test_a_stopped_run_never_reads_as_a_pass[SIGINT] (quick); stopped
# during --mutants needs a real kb check run through a killed and a hanging mutant
@pytest.mark.slow
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
    assert report["stopped"] == "SIGTERM"
    assert [r["status"] for r in report["results"]] == ["passed"] * 3
    mutants = {r["check"]: r for r in report["mutants"]["results"]}
    assert mutants["c0"]["status"] == "killed"
    assert mutants["c1"]["status"] == "skipped" and mutants["c1"]["message"].startswith("interrupted")
    assert mutants["c2"]["status"] == "skipped"
    assert mutants["c2"]["message"] == "not run: kb check was stopped by SIGTERM first (no verdict)"
    assert report["mutants"]["declared"] == 3
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "4" and suite.get("errors") == "1"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("r.")) == ["r.json", "r.xml"]


# the checks not reached are skips saying so in test_a_stopped_run_never_reads_as_a_pass[SIGINT] (quick);
# this is the same with SIGTERM and a check after the one stopped, another real kb check run
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sigterm_during_the_checks_reports_the_rest_as_not_run(make_catalogue, tmp_path):
    started = tmp_path / "started"
    hangs = f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)\n"
    checks = checks_yaml(
        {"code": "x = 1\n", "expect": "ok"}, {"code": hangs, "expect": "ok"}, {"code": "x = 3\n", "expect": "ok"}
    )
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    out = tmp_path / "r.json"
    proc, _printed = _stop_midway(root, tmp_path, started, signal.SIGTERM, "--no-drift", "-o", str(out))
    assert proc.returncode == 143
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert [r["status"] for r in rows] == ["passed", "skipped", "skipped"]
    assert rows[2]["message"].startswith("not run: kb check was stopped by SIGTERM")


def _default(signum: int) -> None:
    """kb keeps a signal its parent ignores (`nohup` ignores SIGHUP): the test's kb starts with the default."""
    signal.signal(signum, signal.SIG_DFL)


def _stop_midway(root, tmp_path, started, signum: int, *extra: str) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "-j1", *extra]
    proc = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=lambda: _default(signum)
    )
    try:
        wait_for_file(started, proc)
        proc.send_signal(signum)
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        proc.kill()
    return proc, stdout + stderr


@pytest.mark.timeout(600)
# SIGINT in `make quick`; SIGHUP, the same path with another signal's name, in `make test` too
@pytest.mark.parametrize(
    "signum",
    [
        pytest.param(signal.SIGINT, id="SIGINT"),
        pytest.param(signal.SIGHUP, marks=pytest.mark.slow, id="SIGHUP"),
    ],
)
def test_a_stopped_run_never_reads_as_a_pass(make_catalogue, tmp_path, signum):
    """Every check it reached passed and the rest are skips: the report, the JUnit file, the text
    and the exit status still say that the run did not finish."""
    started = tmp_path / "started"
    hangs = f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)\n"
    checks = checks_yaml({"code": "x = 1\n", "expect": "ok"}, {"code": hangs, "expect": "ok"})
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    out, junit = tmp_path / "r.json", tmp_path / "r.xml"
    proc, printed = _stop_midway(root, tmp_path, started, signum, "--no-drift", "-o", str(out), "--junit", str(junit))
    name = signal.Signals(signum).name
    assert proc.returncode == 128 + signum, printed
    assert "Traceback" not in printed
    assert f"kb check was stopped by {name} before every check ran: this run is not a pass" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["stopped"] == name
    assert report["summary"] == {"passed": 1, "skipped": 1}
    suite = ET.parse(junit).getroot().find("testsuite")
    assert [(p.get("name"), p.get("value")) for p in suite.iter("property")] == [("stopped", name)]
    errors = [case for case in suite.iter("testcase") if case.find("error") is not None]
    assert [(c.get("classname"), c.find("error").get("type")) for c in errors] == [("kb-check", name)]


@pytest.mark.usefixtures("shared_pool")  # what the report says, not how a process ends: the session's pool runs it
def test_a_finished_run_says_it_was_not_stopped(make_catalogue, capsys):
    from trainkb.cli import main

    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "x = 1\n", "expect": "ok"}))})
    status = main(["--catalogue", str(root), "check", "-q", "--no-drift", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert json.loads(out)["stopped"] is None
    assert "not a pass" not in err


def test_merging_keeps_a_stopped_runs_mark(tmp_path):
    from trainkb.check import merge_reports

    def report(name: str, stopped: str | None) -> dict:
        env = {"name": name, "torch": "2.13.0"}
        row = {"entry": "D1", "check": "c0", "status": "passed", "environment": name}
        return {
            "format": "trainkb-check-report",
            "version": 1,
            "environments": [env],
            "summary": {},
            "results": [row],
        } | ({"stopped": stopped} if stopped is not None else {})

    assert merge_reports([report("a", "SIGTERM"), report("b", None)])["stopped"] == "SIGTERM"
    assert merge_reports([report("a", None), report("b", None)])["stopped"] is None
    assert merge_reports([report("a", "SIGTERM"), report("b", "SIGINT")])["stopped"] == "SIGINT"


# a stopped run's verdicts: test_a_stopped_run_never_reads_as_a_pass[SIGINT] (quick); drift judged in it
# needs another real kb check run
@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_stopped_run_judges_drift_on_the_checks_that_ran(make_catalogue, tmp_path):
    """A raises check whose error search does not lead back to its record fails for drift in a stopped
    run as in a finished one; the check the run never reached stays a skip."""
    started = tmp_path / "started"
    hangs = f"open({str(started)!r}, 'w').close()\nimport time\ntime.sleep(300)\n"
    raises = {
        "code": "raise ValueError('zq unrelated words')\n",
        "expect": {"raises": {"type": "ValueError", "match": "zq"}},
    }
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(raises, {"code": hangs, "expect": "ok"}))})
    out = tmp_path / "r.json"
    _stop_midway(root, tmp_path, started, signal.SIGTERM, "-o", str(out))
    rows = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert [r["status"] for r in rows] == ["failed", "skipped"], rows
    assert rows[0]["message"].startswith("signature drift"), rows[0]
