"""`kb report merge` keeps what `kb check --mutants` found: shards' mutant verdicts are not dropped."""

from __future__ import annotations

import json

import pytest

from trainkb.check._mutants import MutantRun, MutantStatus, mutant_report
from trainkb.check._report import make_report
from trainkb.check._runner import CheckResult
from trainkb.cli import main


def _result(check: str, status: str) -> CheckResult:
    return CheckResult("D1", check, status, 0.1, "", "failure", "It behaves as claimed.", "ok", "D1.yaml", 3)


def _shard(env: str, checks: list[str], mutants: dict[str, str]) -> dict[str, object]:
    report = make_report({"name": env}, [_result(c, "passed") for c in checks])
    run = MutantRun([_result(c, s) for c, s in mutants.items()], len(checks), {("D1", c): "edit" for c in mutants})
    return dict(report, mutants=mutant_report(run))


def test_merging_shards_keeps_their_mutants(tmp_path, capsys):
    one = _shard("cpu", ["c0", "c1"], {"c0": MutantStatus.KILLED})
    two = _shard("cpu", ["c2", "c3"], {"c2": MutantStatus.SURVIVED, "c3": MutantStatus.KILLED})
    paths = []
    for i, report in enumerate((one, two)):
        paths.append(tmp_path / f"s{i}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", *map(str, paths), "-o", str(out)]) == 0
    mutants = json.loads(out.read_text(encoding="utf-8"))["mutants"]
    assert (mutants["declared"], mutants["killed"], mutants["survived"]) == (3, 2, 1)
    assert mutants["coverage"] == {"checks": 4, "with_mutation": 3, "percent": 75.0}
    assert {(r["check"], r["status"], r["environment"]) for r in mutants["results"]} == {
        ("c0", "killed", "cpu"),
        ("c2", "survived", "cpu"),
        ("c3", "killed", "cpu"),
    }


def test_a_later_run_wins_for_the_same_mutant_and_environment(tmp_path):
    first = _shard("cpu", ["c0"], {"c0": MutantStatus.SURVIVED})
    again = _shard("cpu", ["c0"], {"c0": MutantStatus.KILLED})
    other = _shard("cuda", ["c0"], {"c0": MutantStatus.SURVIVED})
    paths = []
    for i, report in enumerate((first, again, other)):
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", *map(str, paths), "-o", str(out)]) == 0
    mutants = json.loads(out.read_text(encoding="utf-8"))["mutants"]
    assert [(r["environment"], r["status"]) for r in mutants["results"]] == [("cpu", "killed"), ("cuda", "survived")]


def test_reports_without_mutants_merge_without_a_block(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(make_report({"name": "cpu"}, [_result("c0", "passed")])), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", str(path), "-o", str(out)]) == 0
    assert "mutants" not in json.loads(out.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ({"mutants": {"results": 3}}, "mutants.results is int, not a list"),
        ({"mutants": [1, 2]}, "mutants is list, not an object"),
        ({"mutants": {"results": [{"entry": "D1", "check": "c0"}]}}, "mutants.results[0] needs the text fields"),
        ({"mutants": {"coverage": {"checks": "all"}}}, "mutants.coverage needs a whole number of checks"),
        ({"environments": [{"name": "cuda", "gpus": 5}]}, "environments[0].gpus must be a list of device names"),
        ({"environments": [{"name": "cuda", "torch": 2.13}]}, "environments[0].torch is float, not str"),
    ],
)
def test_a_malformed_block_is_one_error_line_and_nothing_is_written(tmp_path, capsys, extra, said):
    """A block merge or a reader would trip over (a TypeError traceback) or drop in silence is refused by name."""
    path = tmp_path / "r.json"
    path.write_text(json.dumps(make_report({"name": "cpu"}, [_result("c0", "passed")]) | extra), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kb: error: {path}: ") and said in err and err.count("\n") == 1
    assert not out.exists()


def test_prune_drops_the_rows_of_checks_the_catalogue_no_longer_has(tmp_path, capsys):
    """A check renamed or removed leaves rows in old reports; `--prune` drops them and names them, the rest stays."""
    kept = CheckResult("D8", "unused-branch-raises", "passed", 0.1, "", "failure", "It raises.", "ok", "D8.yaml", 3)
    gone = _result("renamed-away", "passed")
    report = dict(
        make_report({"name": "cpu"}, [kept, gone]),
        mutants=mutant_report(
            MutantRun([kept, gone], 2, {("D8", "unused-branch-raises"): "e", ("D1", "renamed-away"): "e"})
        ),
    )
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", str(path), "-o", str(out)]) == 0
    assert len(json.loads(out.read_text(encoding="utf-8"))["results"]) == 2  # without --prune, nothing is dropped
    assert main(["report", "merge", "--prune", str(path), "-o", str(out)]) == 0
    merged = json.loads(out.read_text(encoding="utf-8"))
    assert [(r["entry"], r["check"]) for r in merged["results"]] == [("D8", "unused-branch-raises")]
    assert [(r["entry"], r["check"]) for r in merged["mutants"]["results"]] == [("D8", "unused-branch-raises")]
    assert merged["summary"] == {"passed": 1}
    assert "dropped the rows of 1 check(s) the catalogue no longer has: D1:renamed-away" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"version": 99}, "version 99"),
        ({"version": "1"}, "version '1'"),
        ({"status": "banana"}, "status 'banana'"),
        ({"environment": "nowhere"}, "environment 'nowhere' is not among"),
    ],
)
def test_a_report_kb_cannot_vouch_for_is_refused_by_merge(tmp_path, capsys, change, said):
    """A newer format, a verdict kb does not know or a row of no listed environment merged silently (the version
    even came out as 1, and the summary counted 'banana' as a fifth verdict)."""
    report = make_report({"name": "cpu"}, [_result("c0", "passed")])
    if "version" in change:
        report["version"] = change["version"]
    else:
        report["results"][0].update(change)
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert main(["report", "merge", str(path), "-o", str(tmp_path / "all.json")]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "all.json").exists()


def test_prune_that_drops_every_row_leaves_no_coverage_of_gone_checks(tmp_path, capsys):
    """Every row dropped, the coverage still counted the old report's checks: 643 checks, none with a mutation."""
    report = _shard("cpu", ["gone0", "gone1"], {"gone0": MutantStatus.KILLED})
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    out = tmp_path / "all.json"
    assert main(["report", "merge", "--prune", str(path), "-o", str(out)]) == 0
    merged = json.loads(out.read_text(encoding="utf-8"))
    assert merged["results"] == [] and merged["mutants"]["coverage"]["checks"] == 0
