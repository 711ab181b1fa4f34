"""`kb check` options a user can get wrong: each is one usage line (exit 2) before any check runs, never a
silent default (`--changed-since=--` ran every check; `--memory-limit 0` meant no limit; `--timeout 1e-9`
failed every check as "timed out")."""

from __future__ import annotations

import zlib

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


@pytest.mark.parametrize("shard", ["1/2", "1/99999999999999999999"])
def test_more_shards_than_checks_is_refused(cat_and_marker, capsys, shard):
    """A catalogue of one check split in two or more: a typo, not a run of "0 checks" that exits 0."""
    root, marker = cat_and_marker
    line = _refused(root, capsys, "--shard", shard)
    assert line == f"kb: error: --shard {shard}: the catalogue has 1 check(s); split them into at most 1"
    assert not marker.exists()


def test_a_shard_left_empty_says_so(make_catalogue, capsys):
    """Two checks that both hash to shard 1 of 2: shard 2/2 runs nothing, and says why rather than "0 checks"."""
    checks = checks_yaml({"code": "pass\n", "expect": "ok"}, {"code": "pass\n", "expect": "ok"})
    assert {zlib.crc32(f"D1:c{i}".encode()) % 2 for i in (0, 1)} == {0}
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks)})
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift", "--shard", "2/2"]) == 0
    assert "kb check: shard 2/2 holds none of the 2 check(s) selected\n" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("ref", "said"),
    [
        ("no-such-ref", "'no-such-ref' names no commit"),  # it showed the git command line that failed
        ("HEAD:catalogue", "'HEAD:catalogue' names no commit"),  # a tree: every record counted as changed
    ],
)
def test_a_changed_since_that_names_no_commit_says_why(capsys, ref, said):
    try:
        code = main(["check", "-q", "--no-drift", "--changed-since", ref])
    except SystemExit as stop:
        code = stop.code
    assert code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert said in line and "returned non-zero exit status" not in line


def test_a_run_of_no_checks_ends_its_summary_cleanly():
    from trainkb.check import summary_text

    assert summary_text([], "cpu-torch2.13.0", 2.8) == "kb check on cpu-torch2.13.0: 0 checks in 2.8 s"
