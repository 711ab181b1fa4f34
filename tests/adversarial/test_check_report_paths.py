"""A record's file name reaches `kb check`'s text summary, progress and JUnit report as data: a newline
in it cannot start a line a CI runner reads as a workflow command, and an ESC or BEL in it cannot
make the JUnit file unreadable."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import CheckStatus
from trainkb.check._mutants import MutantRun, mutant_summary
from trainkb.check._progress import Progress
from trainkb.check._report import junit_xml, summary_text
from trainkb.check._runner import CheckResult
from trainkb.cli import main

# The file name the adversarial pass used: a newline, then a GitHub Actions command; and a window
# retitle (ESC ... BEL), which XML 1.0 cannot hold in an attribute.
FORGED = "E2-x\n::error file=evil.py::FORGED.yaml"
RETITLE = "E2-x\x1b]0;PWNED\x07\r\n.yaml"


def _failed(path: str) -> CheckResult:
    return CheckResult(
        entry="E2",
        check="c0",
        status=CheckStatus.FAILED,
        seconds=0.5,
        message="rank 0 raised AssertionError:  (expected a clean exit)",
        demonstrates="failure",
        claim="x is 1",
        expect="ok",
        path=path,
        line=13,
    )


def _no_command_line(text: str) -> None:
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line
    assert "\x1b" not in text and "\x07" not in text and "\r" not in text


@pytest.mark.parametrize("name", [FORGED, RETITLE])
def test_summary_spells_out_a_file_names_line_breaks(name):
    text = summary_text([_failed(f"catalogue/alpha/{name}")], "cpu-torch2.13.0", 1.0)
    _no_command_line(text)
    assert "\\x0a::error file=evil.py::FORGED.yaml:13)" in text or "\\x1b]0;PWNED\\x07\\x0d\\x0a" in text


def test_mutant_summary_spells_out_a_file_names_line_breaks():
    survived = _failed(f"catalogue/alpha/{FORGED}")
    survived.status = "survived"
    text = mutant_summary(MutantRun([survived], 1, {("E2", "c0"): "no\n::warning::x"}))
    _no_command_line(text)


def test_progress_keeps_a_result_on_one_line():
    stream = io.StringIO()
    result = _failed("p")
    result.entry = "E2\n::error::forged"
    Progress(1, stream)(result)
    _no_command_line(stream.getvalue())


@pytest.mark.parametrize("name", [FORGED, RETITLE])
def test_junit_stays_well_formed(name):
    result = _failed(f"catalogue/alpha/{name}")
    result.entry = "E2\x1b[2J"
    root = ET.fromstring(junit_xml([result], "cpu\x00-torch2.13.0"))
    case = root.find("testsuite/testcase")
    assert case is not None
    assert "PWNED" in case.get("file", "") or "FORGED" in case.get("file", "")


@pytest.mark.usefixtures("shared_pool")
@pytest.mark.slow
def test_kb_check_on_a_record_whose_file_name_forges_a_command(make_catalogue, tmp_path, capsys):
    checks = checks_yaml({"code": "x = 1\nassert x == 2\n", "expect": "ok"})
    root = make_catalogue({"alpha/D1-x\x1b]0;PWNED\x07\n::error file=evil.py::FORGED.yaml": record(checks=checks)})
    junit = tmp_path / "r.xml"
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift", "--junit", str(junit)]) == 1
    out = capsys.readouterr().out
    assert "FORGED" in out
    _no_command_line(out)
    case = ET.parse(junit).getroot().find("testsuite/testcase")
    assert case is not None and "FORGED" in case.get("file", "")
