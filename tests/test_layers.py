"""A team's catalogue layered over the bundled one: searched, checked, shown, published; collisions found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import TEAM_AREAS, TEAM_RECORD, team_paste

from trainkb.catalogue import ENV_VAR, find_catalogue, find_catalogues, load_layers
from trainkb.cli import main
from trainkb.lint import lint_catalogue
from trainkb.search._index import load_index


def _write_team(layer: Path) -> Path:
    (layer / "cluster").mkdir(parents=True)
    (layer / "catalogue.yaml").write_text("name: team-x\n", encoding="utf-8")
    (layer / "areas.yaml").write_text(TEAM_AREAS, encoding="utf-8")
    (layer / "cluster" / "Q1-negative-shard-length.yaml").write_text(TEAM_RECORD, encoding="utf-8")
    return layer


@pytest.fixture
def team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team layer of this test's own, to change as it likes."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    return _write_team(tmp_path / "team")


@pytest.fixture(scope="module")
def _shared_team(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("layers")
    return _write_team(root / "team"), root / "cache"


@pytest.fixture
def read_team(_shared_team: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    """One team layer and index cache for the tests that only read it, so the layered index is built once."""
    layer, cache = _shared_team
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv(ENV_VAR, raising=False)
    return layer


def _kb(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_layer_goes_over_the_default_catalogue(read_team, tmp_path, monkeypatch):
    base = find_catalogue()
    assert find_catalogues(str(read_team)) == [base, read_team]
    assert find_catalogues([str(read_team)]) == [base, read_team]
    assert find_catalogues(f"{base}{os.pathsep}{read_team}") == [base, read_team]  # an explicit base is kept
    plain = tmp_path / "plain"
    plain.mkdir()
    assert find_catalogues(str(plain)) == [plain]  # without catalogue.yaml a folder is a whole catalogue
    monkeypatch.setenv(ENV_VAR, str(read_team))
    assert find_catalogues() == [base, read_team]


def test_team_entries_are_listed_searched_and_shown(read_team, capsys):
    code, out, _ = _kb(["--catalogue", str(read_team), "list", "--json"], capsys)
    rows = {r["id"]: r for r in json.loads(out)}
    assert code == 0 and "Q1" in rows and "D8" in rows
    assert rows["Q1"]["path"] == "team/cluster/Q1-negative-shard-length.yaml"
    assert rows["D8"]["path"].startswith("catalogue/")
    assert (rows["Q1"]["layer"], rows["D8"]["layer"]) == ("team-x", None)

    paste = team_paste()
    code, out, _ = _kb(["search", "--catalogue", str(read_team), "--json", paste], capsys)
    response = json.loads(out)
    assert code == 0 and not response["abstained"]
    assert response["results"][0]["id"] == "Q1"
    assert response["results"][0]["layer"] == "team-x"
    assert all(r["layer"] is None for r in response["results"][1:])
    assert response["results"][0]["evidence"][0]["via"] == "signature"
    code, out, _ = _kb(["search", "--json", paste], capsys)  # the bundled catalogue alone does not know it
    assert all(r["id"] != "Q1" for r in json.loads(out)["results"])

    code, out, _ = _kb(["--catalogue", str(read_team), "show", "Q1"], capsys)
    assert code == 0 and "team-x" in out
    code, out, _ = _kb(["--catalogue", str(read_team), "show", "D8"], capsys)
    assert code == 0 and "team-x" not in out
    code, out, _ = _kb(["--catalogue", str(read_team), "lint"], capsys)
    assert code == 0, out


def test_environment_path_list_layers_too(read_team, capsys, monkeypatch):
    monkeypatch.setenv(ENV_VAR, f"{find_catalogue()}{os.pathsep}{read_team}")
    code, out, _ = _kb(["search", "--json", team_paste()], capsys)
    assert code == 0 and json.loads(out)["results"][0]["id"] == "Q1"


def test_tui_marks_the_layer(read_team):
    from trainkb.tui._model import KnowledgeBase

    kb = KnowledgeBase.load(str(read_team))
    assert kb.search(team_paste()).results[0].id == "Q1"
    assert "from the team-x catalogue" in kb.header("Q1")[1]
    assert "team-x" not in kb.header("D8")[1] + kb.markdown("D8")


@pytest.mark.slow
def test_team_record_is_checked_then_published_with_both_layers(team, capsys, tmp_path):
    reports = tmp_path / "reports"  # beside the layer: the team's own check runs
    reports.mkdir()
    code, out, err = _kb(
        [
            "--catalogue",
            str(team),
            "check",
            "--layer",
            "team-x",
            "--jobs",
            "1",
            "--quiet",
            "-o",
            str(reports / "team.json"),
        ],
        capsys,
    )
    assert code == 0, out + err
    results = json.loads((reports / "team.json").read_text())["results"]
    assert [(r["entry"], r["status"]) for r in results] == [("Q1", "passed")]  # drift check searched both layers
    assert _kb(["--catalogue", str(team), "check", "--layer", "nobody"], capsys)[0] == 2

    out_dir = tmp_path / "site"
    code, out, err = _kb(["--catalogue", str(team), "site", "build", "-o", str(out_dir), "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["entries"] == len(load_layers(find_catalogues(str(team))).entries)
    page = (out_dir / "Q1" / "index.html").read_text(encoding="utf-8")
    assert "team-x" in page and "negative length" in page
    assert "verified on" in page  # the team's report, read beside the layer
    bundled = (out_dir / "D8" / "index.html").read_text(encoding="utf-8")
    assert "team-x" not in bundled and "verified on" in bundled  # the bundled reports still count
    assert "Q1" in (out_dir / "cluster" / "index.html").read_text(encoding="utf-8")
    assert '"Q1"' in (out_dir / "static" / "search-index.js").read_text(encoding="utf-8")


@pytest.mark.slow  # torch imported in a child; fast: test_run.py (kb run names an entry) and the layered search above
def test_kb_run_names_the_team_entry(read_team, capsys):
    code, _out, err = _kb(
        ["--catalogue", str(read_team), "run", "--", sys.executable, "-c", "import torch; torch.empty(3 - 4)"], capsys
    )
    assert code == 1 and "Q1" in err


def test_search_cache_follows_every_layer(team):
    roots = find_catalogues(str(team))
    assert [e["id"] for e in load_index(roots).entries][-1] == "Q1"
    record = team / "cluster" / "Q1-negative-shard-length.yaml"
    record.write_text(TEAM_RECORD.replace("Q1", "Q2"), encoding="utf-8")
    record.rename(team / "cluster" / "Q2-negative-shard-length.yaml")
    ids = {e["id"] for e in load_index(roots).entries}
    assert "Q2" in ids and "Q1" not in ids


def _lint(team: Path) -> list[str]:
    return [f"{f.rule}: {f.message}" for f in lint_catalogue(load_layers(find_catalogues(str(team))))]


def _collide(team: Path, extra: str = "", entry_id: str = "D8") -> Path:
    text = TEAM_RECORD.replace("id: Q1", f"id: {entry_id}{extra}").replace("area: cluster", "area: distributed-launch")
    text = text.replace("section: loaders", "section: ddp")
    path = team / "distributed-launch" / f"{entry_id}-our-own-take.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_id_collision_is_a_lint_error(team, capsys):
    _collide(team)
    assert any(
        f.startswith("id-collision: id 'D8' is already used by catalogue/distributed-launch/D8-") for f in _lint(team)
    )
    code, out, _ = _kb(["--catalogue", str(team), "lint"], capsys)
    assert code == 1 and "team/distributed-launch/D8-our-own-take.yaml" in out and "[id-collision]" in out
    cat = load_layers(find_catalogues(str(team)))
    assert "Our" not in cat.entries["D8"].title  # the lower record stays until the layer says overrides


def test_overrides_replaces_the_lower_record(team, capsys):
    _collide(team, extra="\noverrides: D8")
    assert _lint(team) == []
    cat = load_layers(find_catalogues(str(team)))
    assert cat.entries["D8"].title == "The shard loader asks torch for a buffer of negative length"
    assert cat.origin["D8"] == "team-x"
    code, out, _ = _kb(["--catalogue", str(team), "show", "D8", "--json"], capsys)
    assert code == 0 and json.loads(out)["path"] == "team/distributed-launch/D8-our-own-take.yaml"


def test_overrides_must_name_a_lower_record_and_its_own_id(team):
    record = team / "cluster" / "Q1-negative-shard-length.yaml"
    record.write_text(TEAM_RECORD.replace("id: Q1", "id: Q1\noverrides: Q1"), encoding="utf-8")
    assert any(f.startswith("override: no catalogue below this one has 'Q1'") for f in _lint(team))
    record.write_text(TEAM_RECORD.replace("id: Q1", "id: Q1\noverrides: D8"), encoding="utf-8")
    assert any(f.startswith("override: overrides must name this record's own id") for f in _lint(team))


def test_an_area_defined_twice_is_reported(team):
    (team / "areas.yaml").write_text(
        TEAM_AREAS
        + textwrap.indent(
            textwrap.dedent("""\
        - id: data-pipeline
          title: Data again
          order: 51
          scope: A second definition.
          sections:
            - {id: loaders, title: Loaders}
        """),
            "  ",
        ),
        encoding="utf-8",
    )
    assert any(f.startswith("area-collision: area 'data-pipeline'") for f in _lint(team))


def test_changed_since_looks_in_the_layers_repository(team):
    from trainkb.check import changed_entry_ids

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(team), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "team layer")
    cat = load_layers(find_catalogues(str(team)))
    before = changed_entry_ids(cat, "HEAD")  # the base is asked in its own repository
    assert "Q1" not in before
    record = team / "cluster" / "Q1-negative-shard-length.yaml"
    record.write_text(record.read_text(encoding="utf-8").replace("negative length", "negative size"), encoding="utf-8")
    assert changed_entry_ids(cat, "HEAD") - before == {"Q1"}


def test_layer_schema_is_optional_but_must_be_current(team):
    assert _lint(team) == []
    (team / "schema.json").write_text("{}\n", encoding="utf-8")
    assert _lint(team) == ["schema-stale: schema.json is out of date; run `kb schema -o team/schema.json`"]


def test_an_empty_marker_names_the_layer_after_its_folder(team):
    (team / "catalogue.yaml").write_text("", encoding="utf-8")
    cat = load_layers(find_catalogues(str(team)))
    assert cat.origin["Q1"] == "team" and not cat.problems
    (team / "catalogue.yaml").write_text("nmae: typo\n", encoding="utf-8")
    findings = lint_catalogue(load_layers(find_catalogues(str(team))))
    assert [(f.path, f.field, f.rule) for f in findings] == [("team/catalogue.yaml", "nmae", "schema")]


def test_lint_over_layers_judges_the_layers_not_the_base(tmp_path):
    from helpers import AREAS, record

    from trainkb.catalogue import load_catalogue, render_schema

    base = tmp_path / "base"
    (base / "alpha").mkdir(parents=True)
    (base / "areas.yaml").write_text(AREAS, encoding="utf-8")
    (base / "schema.json").write_text(render_schema(), encoding="utf-8")
    (base / "alpha" / "D1-sample.yaml").write_text(
        record().replace("symptom: Something prints an error.", "symptom: ''"), encoding="utf-8"
    )
    layer = tmp_path / "mine"
    (layer / "alpha").mkdir(parents=True)
    (layer / "catalogue.yaml").write_text("name: mine\n", encoding="utf-8")
    (layer / "alpha" / "D2-sample.yaml").write_text(record("D2").replace("fix: Do", "fix: TODO do"), encoding="utf-8")
    alone = [f.rule for f in lint_catalogue(load_catalogue(base))]
    assert alone == ["empty-prose"]  # the base's own finding, when the base is linted
    layered = lint_catalogue(load_layers([base, layer]))
    assert [(f.path, f.rule) for f in layered] == [("mine/alpha/D2-sample.yaml", "todo")]


BROKEN_LAYER_FILES = {
    "malformed": ("name: [unclosed\n", "invalid YAML"),
    "wrong-type": ("name: 42\n", "Input should be a valid string"),
    "not-a-mapping": ("- a\n- b\n", "expected a mapping of fields"),
    "binary": (b"\xff\xfe\x00\x01name", "not valid UTF-8"),
    "folder": (None, "is a directory; it must be a regular YAML file"),
    "fifo": ("fifo", "is not a regular file"),
    "broken-link": ("link", "cannot read"),
}


@pytest.mark.parametrize("kind", sorted(BROKEN_LAYER_FILES))
def test_a_broken_layer_file_keeps_the_layer_and_is_a_finding(team, kind):
    """The folder's name stands in for the layer's, its records stay the layer's, and lint says what is wrong."""
    content, reason = BROKEN_LAYER_FILES[kind]
    marker = team / "catalogue.yaml"
    marker.unlink()
    if content is None:
        marker.mkdir()
    elif content == "fifo":
        os.mkfifo(marker)
    elif content == "link":
        marker.symlink_to(team / "nowhere.yaml")
    else:
        marker.write_bytes(content if isinstance(content, bytes) else content.encode())
    cat = load_layers(find_catalogues(str(team)))
    assert [name for name, _root in cat.layers] == ["catalogue", "team"]
    assert cat.origin["Q1"] == "team" and "D8" in cat.entries
    findings = [f for f in lint_catalogue(cat) if f.path == "team/catalogue.yaml"]
    assert len(findings) == 1 and reason in findings[0].message, findings


def test_kb_check_names_a_broken_layer_file_instead_of_a_traceback(team, capsys):
    (team / "catalogue.yaml").write_text("name: [unclosed\n", encoding="utf-8")
    code, _out, err = _kb(["--catalogue", str(team), "check", "--layer", "team"], capsys)
    assert code == 2 and "Traceback" not in err
    assert "team/catalogue.yaml:2:1: invalid YAML" in err
