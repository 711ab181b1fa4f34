"""Report files: a bad destination is one error line before any check runs; a write is all or nothing."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from helpers import checks_yaml, record

from trainkb.cli import main
from trainkb.commands._exit import UsageError
from trainkb.commands._output import write_atomic


@pytest.mark.parametrize("option", ["-o", "--junit"])
@pytest.mark.parametrize("where", ["missing", "folder"])
def test_a_bad_report_path_is_refused_before_checks_run(make_catalogue, tmp_path, capsys, option, where):
    marker = tmp_path / "ran"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": f"open({str(marker)!r}, 'w')\n", "expect": "ok"}))}
    )
    target = str(tmp_path / "nonexistent" / "r.out") if where == "missing" else str(tmp_path)
    assert main(["--catalogue", str(root), "check", "-q", option, target]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error:") and len(err.strip().splitlines()) == 1
    assert not marker.exists()


@pytest.mark.usefixtures("shared_pool")
def test_json_prints_the_report_and_output_writes_it(make_catalogue, tmp_path, capsys):
    """`--json` is a flag, as on every other command; an entry id right after it is an id to check."""
    checks = checks_yaml({"name": "good", "code": "pass", "expect": "ok"})
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks), "alpha/D2-sample.yaml": record("D2", checks=checks)}
    )
    report = tmp_path / "r.json"
    assert main(["--catalogue", str(root), "check", "--no-drift", "--json", "D1", "-o", str(report)]) == 0
    out, err = capsys.readouterr()
    printed = json.loads(out)
    assert [(r["entry"], r["status"]) for r in printed["results"]] == [("D1", "passed")]
    assert json.loads(report.read_text())["results"] == printed["results"]
    assert "1 passed" in err and "deprecated" not in err  # the summary, on stderr: stdout is the report alone


@pytest.mark.usefixtures("shared_pool")
def test_json_with_a_file_still_writes_it_with_a_note(make_catalogue, tmp_path, capsys):
    """The old spelling keeps working: `--json FILE` writes FILE and says once what to write instead."""
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    report = tmp_path / "old.json"
    assert main(["--catalogue", str(root), "check", "-q", "--no-drift", "--json", str(report)]) == 0
    out, err = capsys.readouterr()
    assert json.loads(report.read_text())["summary"] == {"passed": 1}
    assert "1 passed" in out
    assert err.splitlines() == [
        f"kb check: `--json FILE` is deprecated; write `-o {report}` (`--json` alone prints it)"
    ]


@pytest.mark.parametrize(
    "args",
    [["--json", "a.json", "-o", "b.json"], ["-o", "-"]],
    ids=["two-report-files", "output-to-stdout"],
)
def test_a_report_named_two_ways_is_refused(make_catalogue, tmp_path, capsys, args):
    marker = tmp_path / "ran"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": f"open({str(marker)!r}, 'w')\n", "expect": "ok"}))}
    )
    assert (
        main(
            ["--catalogue", str(root), "check", "-q", *[str(tmp_path / a) if a.endswith(".json") else a for a in args]]
        )
        == 2
    )
    assert capsys.readouterr().err.splitlines()[-1].startswith("kb: error:")
    assert not marker.exists()


def test_schema_to_a_missing_folder_is_one_error_line(tmp_path, capsys):
    assert main(["schema", "-o", str(tmp_path / "nonexistent" / "x")]) == 2
    assert capsys.readouterr().err.startswith("kb: error:")


def test_changed_since_cannot_pass_an_option_to_git(make_catalogue, tmp_path, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    victim = tmp_path / "victim"
    victim.write_text("keep")
    assert main(["--catalogue", str(root), "check", f"--changed-since=--output={victim}"]) == 2
    assert victim.read_text() == "keep"


def test_a_failed_write_keeps_the_old_report_and_leaves_no_temp(tmp_path, monkeypatch):
    report = tmp_path / "r.json"
    report.write_text("old")

    def full(_fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(UsageError, match="No space left"):
        write_atomic(report, "new" * 1000)
    assert report.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_a_write_replaces_the_report_whole(tmp_path):
    report = tmp_path / "r.json"
    report.write_text("old")
    write_atomic(report, "new")
    assert report.read_text() == "new"
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["r.json"]


def test_a_write_into_a_folder_that_takes_no_new_file_is_a_usage_error():
    """/proc takes no new file, for root too (os.access says yes to root): no raw OSError."""
    with pytest.raises(UsageError, match="could not write"):
        write_atomic(Path("/proc/kb-report.json"), "{}")


@pytest.mark.parametrize("command", [["schema", "-o"], ["check", "-q", "--junit"], ["check", "-q", "-o"]])
def test_a_destination_in_a_folder_that_takes_no_new_file_is_refused_first(make_catalogue, tmp_path, capsys, command):
    marker = tmp_path / "ran"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": f"open({str(marker)!r}, 'w')\n", "expect": "ok"}))}
    )
    assert main(["--catalogue", str(root), *command, "/proc/version"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error:") and len(err.strip().splitlines()) == 1, err
    assert not marker.exists()


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    """Renaming over `/dev/stdout`, a FIFO or a device node replaces it with a plain file (as root,
    `kb schema -o /dev/full` did exactly that); what is not a regular file is written through."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        write_atomic(fifo, "through")
        assert os.read(reader, 100) == b"through"
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipe"]


def test_a_link_to_a_report_stays_a_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "r.json"
    link.symlink_to(real)
    write_atomic(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_replaced_report_keeps_its_mode(tmp_path):
    report = tmp_path / "r.json"
    report.write_text("old")
    report.chmod(0o644)
    write_atomic(report, "new")
    assert stat.S_IMODE(report.stat().st_mode) == 0o644


@pytest.mark.usefixtures("shared_pool")
def test_a_report_that_cannot_be_written_at_the_end_keeps_the_other_and_the_summary(
    make_catalogue, tmp_path, capsys, monkeypatch
):
    """The disk fills up during the run: the JUnit file and the summary still come out, exit 2."""
    from trainkb.commands import check as check_command

    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass", "expect": "ok"}))})
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    real = check_command.write_atomic

    def full(path, text):
        if path == report:
            raise UsageError(f"could not write {path}: No space left on device")
        real(path, text)

    monkeypatch.setattr(check_command, "write_atomic", full)
    code = main(["--catalogue", str(root), "check", "-q", "--no-drift", "-o", str(report), "--junit", str(junit)])
    out, err = capsys.readouterr()
    assert code == 2
    assert "1 passed" in out and junit.exists()
    assert err.strip().splitlines()[-1] == f"kb: error: could not write {report}: No space left on device"


@pytest.mark.parametrize("junit", ["same", "link"])
def test_the_json_and_junit_reports_in_one_file_are_refused_before_checks_run(make_catalogue, tmp_path, capsys, junit):
    marker = tmp_path / "ran"
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": f"open({str(marker)!r}, 'w')\n", "expect": "ok"}))}
    )
    report = tmp_path / "r.json"
    report.write_text("{}", encoding="utf-8")
    other = report if junit == "same" else tmp_path / "link.xml"
    if junit == "link":
        other.symlink_to(report)
    assert main(["--catalogue", str(root), "check", "-q", "-o", str(report), "--junit", str(other)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error:") and len(err.strip().splitlines()) == 1
    assert not marker.exists() and report.read_text(encoding="utf-8") == "{}"


def test_a_usage_error_quoting_what_was_typed_sends_no_escape_to_the_terminal(make_catalogue, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    assert main(["--catalogue", str(root), "check", "-q", "D1\x1b]0;owned\x07\x1b[2J"]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert "D1\\x1b]0;owned\\x07\\x1b[2J" in err


def test_a_merge_that_cannot_be_written_keeps_the_old_file(tmp_path):
    """`kb report merge A B -o A` under a file-size limit (or a full disk): A is kept whole, no temp is left."""
    import resource
    import subprocess
    import sys

    reports = Path(__file__).parents[2] / "reports"
    first, second = sorted(reports.glob("*.json"))[:2]
    target = tmp_path / first.name
    target.write_bytes(first.read_bytes())
    before = target.read_bytes()
    assert len(before) > 64 * 1024

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    proc = subprocess.run(
        [sys.executable, "-m", "trainkb", "report", "merge", str(target), str(second), "-o", str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("kb: error:") and len(proc.stderr.strip().splitlines()) == 1
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [first.name]


def test_a_merge_to_a_missing_folder_is_refused_before_reading(tmp_path, capsys):
    reports = sorted((Path(__file__).parents[2] / "reports").glob("*.json"))[:1]
    assert main(["report", "merge", str(reports[0]), "-o", str(tmp_path / "no" / "all.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error: -o") and len(err.strip().splitlines()) == 1


# both need a real process (its stdout is what fails) and each starts a pool, so both wait for `make test`
@pytest.mark.slow
@pytest.mark.parametrize("stdout", ["full", "closed"])
def test_a_stdout_that_fails_costs_the_printed_report_only(make_catalogue, tmp_path, stdout):
    """`kb check --json -o r.json --junit j.xml >/dev/full` (or `>&-`): both files are still written."""
    import subprocess
    import sys

    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml({"code": "pass\n", "expect": "ok"}))})
    report, junit = tmp_path / "r.json", tmp_path / "j.xml"
    args = [sys.executable, "-m", "trainkb", "--catalogue", str(root), "check", "-q", "--no-drift", "--json"]
    args += ["-o", str(report), "--junit", str(junit)]
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    if stdout == "full":
        with open("/dev/full", "w") as full:
            subprocess.run(args, stdout=full, stderr=subprocess.PIPE, timeout=900, env=env)
    else:
        subprocess.run(
            args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=900,
            env=env,
            preexec_fn=lambda: os.close(1),
        )
    assert json.loads(report.read_text(encoding="utf-8"))["results"][0]["status"] == "passed"
    assert "<testsuite" in junit.read_text(encoding="utf-8")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_report_holding_a_non_json_number_is_refused_not_merged(tmp_path, capsys, constant):
    # Python's json reads NaN and Infinity; written back out, the merge was no longer JSON.
    source = sorted((Path(__file__).parents[2] / "reports").glob("*.json"))[0]
    data = json.loads(source.read_text(encoding="utf-8"))
    data["results"][0]["seconds"] = float(constant.replace("Infinity", "inf"))
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    assert constant in bad.read_text(encoding="utf-8")
    merged = tmp_path / "merged.json"
    assert main(["report", "merge", str(bad), str(source), "-o", str(merged)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kb: error:") and len(err.strip().splitlines()) == 1
    assert f"{constant} is not a JSON number" in err
    assert not merged.exists()
