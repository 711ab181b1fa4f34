"""`kb check` options a user can get wrong: each is one usage line (exit 2) before any check runs, never a
silent default (`--changed-since=--` ran every check; `--memory-limit 0` meant no limit; `--timeout 1e-9`
failed every check as "timed out")."""

from __future__ import annotations

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main


@pytest.fixture
def cat_and_marker(make_catalogue, tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').close()\n"
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": code, "expect": "ok"}))})
    return root, marker


def _refused(root, capsys, *option: str) -> str:
    try:
        code = main(["--catalogue", str(root), "check", "-q", "--no-drift", *option])
    except SystemExit as stop:  # argparse's own usage errors
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


@pytest.mark.parametrize("ref", ["--changed-since=--", "--changed-since=", "--changed-since=-x"])
def test_a_changed_since_that_is_no_ref_is_refused(cat_and_marker, capsys, ref):
    root, marker = cat_and_marker
    line = _refused(root, capsys, ref)
    assert "give a git ref" in line
    assert not marker.exists()


@pytest.mark.parametrize(("option", "value"), [("--timeout", "1e-9"), ("--timeout", "0.09"), ("--memory-limit", "0")])
def test_a_limit_no_check_could_run_under_is_refused(cat_and_marker, capsys, option, value):
    root, marker = cat_and_marker
    line = _refused(root, capsys, option, value)
    assert f"argument {option}" in line
    assert not marker.exists()
