"""The index built ahead for the shipped catalogue (`make setup`, the wheel) answers a first search only
for the very catalogue state it was built from: an edited record, a prebuilt file renamed to another
state's name, or a team layer over the catalogue builds its own index instead."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import build_ahead, record

from trainkb.search import _index as index_module
from trainkb.search import search
from trainkb.search._index import load_index

PASTE = "A sample failure for tests"


@pytest.fixture
def shipped(make_catalogue, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """A catalogue, its index built ahead into a folder of its own, and an empty user cache."""
    root = make_catalogue({"alpha/D1-sample.yaml": record()})
    return root, build_ahead(root, tmp_path, monkeypatch)


def _builds(monkeypatch) -> list[int]:
    """Count the index builds from here on."""
    built: list[int] = []
    real = index_module.build_data

    def counted(*args, **kwargs):
        built.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(index_module, "build_data", counted)
    return built


def _title(root: Path) -> str:
    return search(PASTE, catalogue=load_index(root)).results[0].title


def test_a_first_search_reads_the_prebuilt_index_and_keeps_a_copy(shipped, tmp_path, monkeypatch):
    root, folder = shipped
    built = _builds(monkeypatch)
    assert _title(root) == "A sample failure for tests"
    assert built == []
    [copy] = (tmp_path / "cache" / "trainkb").glob("index-*.marshal")
    [original] = folder.glob("index-*.marshal")
    assert copy.name == original.name and copy.read_bytes() == original.read_bytes()
    original.unlink()  # the next search reads the user's copy
    assert _title(root) == "A sample failure for tests" and built == []


def test_an_edited_record_never_reads_the_prebuilt_index(shipped, monkeypatch):
    root, folder = shipped
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    path = root / "alpha" / "D1-sample.yaml"
    path.write_text(path.read_text().replace("title: A sample failure for tests", "title: An edited title"))
    built = _builds(monkeypatch)
    assert _title(root) == "An edited title"
    assert built == [1]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_prebuilt_index_under_another_states_name_is_refused(shipped, monkeypatch):
    root, folder = shipped
    [stale] = folder.glob("index-*.marshal")
    path = root / "alpha" / "D1-sample.yaml"
    path.write_text(path.read_text().replace("title: A sample failure for tests", "title: An edited title"))
    name = index_module._cache_path(index_module.layers_digest([root.resolve()])).name
    stale.rename(folder / name)  # the old state's index, named as the edited state's would be
    built = _builds(monkeypatch)
    assert _title(root) == "An edited title"
    assert built == [1]


def test_a_team_layer_over_the_catalogue_builds_its_own_index(shipped, tmp_path, monkeypatch):
    root, _folder = shipped
    layer = tmp_path / "team"
    layer.mkdir()
    (layer / "catalogue.yaml").write_text("name: team\n", encoding="utf-8")
    built = _builds(monkeypatch)
    load_index([root.resolve(), layer.resolve()])
    assert built == [1]


@pytest.mark.parametrize("argv", [["/nonexistent"], ["--help"], ["catalogue", "out", "extra"]])
def test_the_prebuild_tool_refuses_what_is_no_catalogue_and_keeps_the_shipped_index(tmp_path, capsys, argv):
    """`_prebuild /nonexistent` (or `--help`) wrote an index of nothing over the shipped one, exit 0."""
    from trainkb.search._prebuild import main

    folder = tmp_path / "prebuilt"
    folder.mkdir()
    kept = folder / "index-0-py311-0.marshal"
    kept.write_bytes(b"the shipped index")
    args = [arg.replace("out", str(folder)) for arg in argv] if len(argv) > 1 else [*argv, str(folder)]
    assert main(args) in (1, 2)
    assert kept.read_bytes() == b"the shipped index" and [p.name for p in folder.iterdir()] == [kept.name]
    assert capsys.readouterr().err.strip()
