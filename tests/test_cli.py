"""`kb` subcommands in-process through main(argv): output, JSON and exit codes."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import record

from trainkb import __version__
from trainkb.cli import COMMANDS, main


@pytest.fixture
def cat(make_catalogue):
    links = "links:\n  - {id: D2, relation: see-also, why: The other one explains the rest.}\n"
    return str(
        make_catalogue(
            {
                "alpha/D1-sample.yaml": record(extra=links),
                "beta/D2-other.yaml": record("D2", "beta", "three"),
                "alpha/D11-more.yaml": record("D11", "alpha", "two"),
            }
        )
    )


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"kb (trainkb) {__version__}"


def test_help_and_no_arguments(capsys):
    assert main(["--help"]) == 0
    assert "lint" in capsys.readouterr().out
    assert main([]) == 0
    assert "usage: kb" in capsys.readouterr().out


def test_unknown_command_is_a_usage_error(capsys):
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_list_text_and_json(cat, capsys):
    assert main(["--catalogue", cat, "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["D1", "D11", "D2"]
    assert main(["--catalogue", cat, "list", "--area", "beta", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows == [
        {
            "id": "D2",
            "title": "A sample failure for tests",
            "area": "beta",
            "section": "three",
            "tags": ["sample"],
            "checks": 0,
            "verification": "pending",
            "path": "catalogue/beta/D2-other.yaml",
            "layer": None,
        }
    ]


def test_list_unknown_area(cat, capsys):
    assert main(["--catalogue", cat, "list", "--area", "nope"]) == 2
    assert "unknown area 'nope'" in capsys.readouterr().err


def test_show_renders_markdown_with_backlinks(cat, capsys):
    assert main(["--catalogue", cat, "show", "d2"]) == 0
    out = capsys.readouterr().out
    assert "D2 — A sample failure for tests" in out
    assert "Linked from D1" in out


def test_show_json(cat, capsys):
    assert main(["--catalogue", cat, "show", "D2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["id"] == "D2"
    assert data["backlinks"] == [{"source": "D1", "relation": "see-also", "why": "The other one explains the rest."}]


def test_show_unknown_suggests_closest(cat, capsys):
    assert main(["--catalogue", cat, "show", "D12"]) == 2
    err = capsys.readouterr().err
    assert "unknown entry 'D12'" in err
    assert "did you mean D11, D2, D1?" in err


def test_lint_exit_codes_and_formats(make_catalogue, capsys):
    good = str(make_catalogue({"alpha/D1-sample.yaml": record()}))
    assert main(["--catalogue", good, "lint"]) == 0
    assert "1 entries, 0 finding(s)" in capsys.readouterr().out
    bad = make_catalogue({"alpha/D1-sample.yaml": record(extra="oops: 1\n")})
    assert main(["--catalogue", str(bad), "lint", "--format", "github"]) == 1
    # outside the working directory, an annotation names the file by its absolute path
    assert capsys.readouterr().out.startswith(f"::error file={bad / 'alpha' / 'D1-sample.yaml'},line=13,col=1")
    assert main(["--catalogue", str(bad), "lint", "--json"]) == 1
    [finding] = json.loads(capsys.readouterr().out)
    assert finding["rule"] == "schema" and finding["field"] == "oops"


# Every command that reads the catalogue, with arguments that would otherwise get it to its work.
READERS = {
    "list": [],
    "show": ["D1"],
    "lint": [],
    "search": ["RuntimeError: x"],
    "triage": ["{log}"],
    "check": [],
    "run": ["--", sys.executable, "-c", "open({marker!r}, 'w')"],
    "doctor": [],
    "tui": [],
    "site": ["build", "-o", "{site}"],
    "new": ["D1", "--dry-run"],
}


def test_every_command_that_reads_a_catalogue_is_listed():
    assert set(READERS) == set(COMMANDS) - {"schema", "report"}


@pytest.mark.parametrize("where", ["before", "after"])
@pytest.mark.parametrize("command", list(READERS))
def test_a_missing_catalogue_folder_is_refused_by_every_command(tmp_path, capsys, command, where):
    """One way to name a catalogue, `--catalogue` before or after the command; a folder that is not there
    is a usage error before any work, never a silent fallback."""
    log = tmp_path / "log.txt"
    log.write_text("[rank0]: RuntimeError: x\n[rank1]: RuntimeError: x\n", encoding="utf-8")
    marker = tmp_path / "ran"
    fill = {"log": str(log), "marker": str(marker), "site": str(tmp_path / "site")}
    args = [a.format(**fill) for a in READERS[command]]
    named = ["--catalogue", str(tmp_path / "nowhere")]
    argv = [*named, command, *args] if where == "before" else [command, *named, *args]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"kb: error: catalogue folder not found: {tmp_path / 'nowhere'}\n"
    assert not marker.exists()  # kb run refuses before it starts the command


def test_schema_prints_and_writes(tmp_path, capsys):
    assert main(["schema"]) == 0
    printed = capsys.readouterr().out
    assert json.loads(printed)["title"] == "trainkb catalogue entry"
    target = tmp_path / "schema.json"
    assert main(["schema", "-o", str(target)]) == 0
    assert target.read_text() == printed


def test_catalogue_precedence(monkeypatch, cat, tmp_path):
    from trainkb.catalogue import ENV_VAR, find_catalogue

    monkeypatch.setenv(ENV_VAR, cat)
    assert str(find_catalogue()) == cat
    assert find_catalogue(tmp_path) == tmp_path
    monkeypatch.delenv(ENV_VAR)
    assert find_catalogue().name == "catalogue"  # this checkout's copy


@pytest.mark.slow  # the whole catalogue's lint; `make test` also runs `kb lint` itself
def test_real_catalogue_is_lint_clean(capsys):
    """The shipped catalogue passes every rule (README's promise)."""
    status = main(["lint"])
    out = capsys.readouterr().out
    assert status == 0, out


def test_show_keeps_angle_brackets_in_aliases(make_catalogue, capsys):
    root = make_catalogue(
        {"alpha/D1-sample.yaml": record().replace("aliases: [sample alias]", "aliases: ['<image> token dropped']")}
    )
    assert main(["--catalogue", str(root), "show", "D1"]) == 0
    assert "<image> token dropped" in capsys.readouterr().out


def test_show_puts_the_fix_first(make_catalogue, capsys):
    cat = str(make_catalogue({"alpha/D1-sample.yaml": record()}))
    assert main(["--catalogue", cat, "show", "D1"]) == 0
    out = capsys.readouterr().out
    assert out.index("Apply the one-line remedy.") < out.index("Do the right thing.") < out.index("Something prints")


@pytest.mark.slow  # the whole catalogue's lint
def test_lint_families_json_is_one_document(capsys):
    """`kb lint --families --json` printed the families and then the findings: two JSON documents, parsed as none."""
    code = main(["lint", "--families", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"families", "findings"} and code == (1 if data["findings"] else 0)
    member = data["families"][0][0]
    assert set(member) == {"id", "tells"} and all(isinstance(t, str) for t in member["tells"])
