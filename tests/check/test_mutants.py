"""Counterfactual mutants: a killed mutant passes the run, a surviving one fails it, lint guards the edit."""

from __future__ import annotations

import json

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check import RunOptions, environment_block, select_tasks
from trainkb.check._mutants import mutant_report, run_mutants
from trainkb.cli import main
from trainkb.lint import lint_catalogue

# The claim: multiplying a (2,) by a (3,) tensor raises. Replacing the 3 removes the cause.
RAISES = {
    "code": "import torch\ntorch.ones(2) @ torch.ones(3)\n",
    "expect": {"raises": {"type": "RuntimeError", "match": "inconsistent|size"}},
}
KILLED = RAISES | {"mutation": {"find": "torch.ones(3)", "replace": "torch.ones(2)", "why": "shapes agree"}}
# A check built to give its answer: the mutant still passes, so the check proves nothing about torch.
TAUTOLOGY = {
    "code": "import torch\nloss = torch.nn.functional.mse_loss(torch.ones(2), torch.zeros(2))\n"
    "value = 1.0\nassert value == 1.0\n",
    "expect": "ok",
    "mutation": {
        "find": "torch.nn.functional.mse_loss(torch.ones(2), torch.zeros(2))",
        "replace": "torch.ones(())",
        "why": "no mse_loss",
    },
}
WARNS = {
    "code": "import torch\nimport torch.nn.functional as F\nF.softmax(torch.ones(2, 2))\n",
    "expect": {"warns": {"category": "UserWarning", "match": "Implicit dimension"}},
    "mutation": {
        "find": "F.softmax(torch.ones(2, 2))",
        "replace": "F.softmax(torch.ones(2, 2), dim=1)",
        "why": "dim given",
    },
}
HANGS = {
    "code": "import time\nimport torch\nfor _ in range(10 ** 9):\n    time.sleep(0.05)\n",
    "expect": {"hangs": {"seconds": 1}},
    "mutation": {"find": "range(10 ** 9)", "replace": "range(1)", "why": "the loop ends"},
}


def _mutants(make_catalogue, pool, *checks):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*checks))})
    cat = load_catalogue(root)
    assert cat.problems == []
    env = environment_block(pool.env | {"packages": {}}, root)
    return run_mutants(select_tasks(cat), RunOptions(timeout=120, jobs=2), pool, env)


def test_killed_and_survived_mutants_are_told_apart(make_catalogue, pool):
    run = _mutants(make_catalogue, pool, KILLED, TAUTOLOGY, WARNS, HANGS, RAISES)
    statuses = {r.check: r.status for r in run.results}
    assert statuses == {"c0": "killed", "c1": "survived", "c2": "killed", "c3": "killed"}
    survivor = next(r for r in run.results if r.check == "c1")
    assert survivor.message.startswith("the check does not depend on its claim")
    assert not run.ok
    report = mutant_report(run)
    assert report["declared"] == 4 and report["killed"] == 3 and report["survived"] == 1
    assert report["coverage"] == {"checks": 5, "with_mutation": 4, "percent": 80.0}
    assert next(r for r in report["results"] if r["check"] == "c1")["why"] == "no mse_loss"


@pytest.mark.slow
def test_cli_mutants_exit_status_and_json(make_catalogue, capsys):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(KILLED))})
    assert main(["--catalogue", str(root), "check", "--mutants", "--no-drift", "--jobs", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"] == {"passed": 1}
    assert report["mutants"]["killed"] == 1
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(TAUTOLOGY))})
    assert main(["--catalogue", str(root), "check", "--mutants-only", "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    assert "1 survived" in out and "SURVIVED D1:c0" in out and "does not depend on its claim" in out


def test_cli_refuses_a_broken_mutation(make_catalogue, capsys):
    bad = RAISES | {"mutation": {"find": "torch.zeros", "replace": "torch.ones", "why": "x"}}
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(bad))})
    assert main(["--catalogue", str(root), "check", "--mutants", "--jobs", "1"]) == 2
    assert "occurs 0 times" in capsys.readouterr().err


CODE = "import torch\nx = torch.ones(2)\nprint(x)\nassert x.sum() == 2\ny = x * 2  # twice\n"


@pytest.mark.parametrize(
    ("find", "replace", "message"),
    [
        ("torch.zeros(2)", "x", "mutation.find occurs 0 times in the code; it must occur exactly once"),
        ("2", "3", "mutation.find occurs 3 times in the code; it must occur exactly once"),
        ("torch.ones(2)", "torch.ones(2)", "mutation.replace equals mutation.find"),
        ("x * 2", "x *", "the mutated code does not compile"),
        ("x.sum() == 2", "x.sum() == 3", "the edit touches the assert on line 4"),
        ("print(x)", "print(x * 0)", "the edit touches line 3, which only prints or logs"),
        ("torch.ones(2)\nprint", "torch.zeros(2)\nprint", "the edit touches line 3, which only prints or logs"),
    ],
)
def test_lint_rules_on_mutations(make_catalogue, find, replace, message):
    check = {"code": CODE, "expect": "ok", "mutation": {"find": find, "replace": replace, "why": "w"}}
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(check))})
    findings = [f for f in lint_catalogue(load_catalogue(root)) if f.rule == "mutation"]
    assert len(findings) == 1
    assert message in findings[0].message
    assert findings[0].field == "checks[0].mutation"


def test_lint_accepts_an_edit_of_the_code_under_test(make_catalogue):
    check = {
        "code": CODE,
        "expect": "ok",
        "mutation": {"find": "torch.ones(2)", "replace": "torch.zeros(2)", "why": "w"},
    }
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(check))})
    assert [f for f in lint_catalogue(load_catalogue(root)) if f.rule == "mutation"] == []


def test_find_ending_in_newline_does_not_touch_the_next_line(make_catalogue):
    check = {
        "code": CODE,
        "expect": "ok",
        "mutation": {"find": "y = x * 2  # twice\n", "replace": "y = x\n", "why": "w"},
    }
    check["code"] = CODE.replace(
        "assert x.sum() == 2\ny = x * 2  # twice\n", "y = x * 2  # twice\nassert x.sum() == 2\n"
    )  # the assert right after the edit
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(check))})
    assert [f for f in lint_catalogue(load_catalogue(root)) if f.rule == "mutation"] == []


def test_a_mutant_keeps_its_checks_timeout(make_catalogue):
    from trainkb.check._mutants import mutant_tasks

    slow = HANGS | {"timeout": 100}
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(KILLED, slow, RAISES))})
    mutants = mutant_tasks(select_tasks(load_catalogue(root)))
    assert [m.check.timeout for m in mutants] == [None, 100]  # None: the run's --timeout, as for the check
    assert "torch.ones(2)" in mutants[0].check.code and mutants[0].check.mutation is not None


# The mutant breaks the pickler kb sends the outcome with: the snippet ran, kb never heard how it ended.
UNHEARD = {
    "code": "import torch\nx = torch.ones(2)\nassert x.sum().item() == 2\n",
    "expect": "ok",
    "mutation": {
        "find": "x = torch.ones(2)",
        "replace": "x = torch.ones(2)\n"
        "import multiprocessing.reduction as reduction\n"
        "reduction.ForkingPickler.dumps = None",
        "why": "no outcome",
    },
}


def test_a_mutant_kb_could_not_hear_is_an_error_not_killed(make_catalogue, pool):
    run = _mutants(make_catalogue, pool, UNHEARD)
    [result] = run.results
    assert result.status == "error", result.message
    assert "not a verdict" in result.message
