"""Each record's part of the index, and its parsed document, is kept under the SHA-256 of its file, in a
file named (and stamped inside) with the code's digest and the Python version: an edit parses and rebuilds
only the edited record, and a part or document kept for other bytes, another code or in a file that is
not one kb wrote is never used."""

from __future__ import annotations

import datetime
import marshal
from pathlib import Path

import pytest
from helpers import build_ahead, record

from trainkb.catalogue import _yamlio, load_layers
from trainkb.search import _index as index_module
from trainkb.search import search
from trainkb.search._index import build_data, load_index

PASTE = "A sample failure for tests"


@pytest.fixture
def shipped(make_catalogue, tmp_path, monkeypatch) -> tuple[Path, Path]:
    """Two records, their index and parts built ahead into a folder of their own, an empty user cache."""
    root = make_catalogue({"alpha/D1-sample.yaml": record(), "alpha/D2-other.yaml": record("D2")})
    return root, build_ahead(root, tmp_path, monkeypatch)


def _parts_made(monkeypatch) -> list[str]:
    """The ids of the records whose part is made from here on."""
    made: list[str] = []
    real = index_module._entry_part

    def counted(entry, distinct):
        made.append(entry.id)
        return real(entry, distinct)

    monkeypatch.setattr(index_module, "_entry_part", counted)
    return made


def _parsed(monkeypatch) -> list[str]:
    """The record files parsed from here on (a document kept under the file's digest is not parsed)."""
    parsed: list[str] = []
    real = _yamlio._decode

    def counted(raw, shown):
        parsed.append(Path(shown).name)
        return real(raw, shown)

    monkeypatch.setattr(_yamlio, "_decode", counted)
    return parsed


def _edit(root: Path, title: str) -> None:
    path = root / "alpha" / "D1-sample.yaml"
    path.write_text(path.read_text().replace("title: A sample failure for tests", f"title: {title}"))


def _fresh(root: Path) -> dict:
    """The index of ``root`` built from its records alone."""
    cat = load_layers([root.resolve()])
    return build_data(cat.ordered(), index_module.layers_digest([root.resolve()]), cat.origin)


def _titles(root: Path) -> set[str]:
    return {row["title"] for row in load_index(root).entries}


def test_an_edit_makes_only_the_edited_records_part_and_the_index_is_the_same(shipped, monkeypatch):
    root, _folder = shipped
    _edit(root, "An edited title")
    made = _parts_made(monkeypatch)
    index = load_index(root)
    assert made == ["D1"]
    assert index.entries == _fresh(root)["entries"]
    assert search("An edited title", catalogue=index).results[0].title == "An edited title"


def test_a_part_kept_for_other_bytes_is_never_used(shipped, monkeypatch):
    """The prebuilt part of D1 is under its old bytes' digest: after the edit it is stale."""
    root, folder = shipped
    [kept] = folder.glob("parts-*.marshal")
    stored = marshal.loads(kept.read_bytes())
    _edit(root, "An edited title")
    assert _titles(root) == {"An edited title", "A sample failure for tests"}
    assert len(stored["parts"]) == 2  # both records had parts, D1's under the bytes it no longer has


def test_a_tampered_part_under_a_key_of_another_code_is_refused(shipped, monkeypatch):
    """A parts file written for other code (its stamp inside says so) is ignored even under this code's name."""
    root, folder = shipped
    [kept] = folder.glob("parts-*.marshal")
    stored = marshal.loads(kept.read_bytes())
    for part in stored["parts"].values():
        part["row"][1] = "A tampered title"
    stored["code"] = "parts-00000000-py0.marshal"
    kept.write_bytes(marshal.dumps(stored))
    _edit(root, "An edited title")
    made = _parts_made(monkeypatch)
    assert _titles(root) == {"An edited title", "A sample failure for tests"}
    assert sorted(made) == ["D1", "D2"]


@pytest.mark.parametrize(
    "content",
    [b"not marshal at all", marshal.dumps([1, 2]), b""],
    ids=["garbage", "a-list", "empty"],
)
def test_a_corrupt_parts_file_is_only_a_miss(shipped, content):
    root, folder = shipped
    [kept] = folder.glob("parts-*.marshal")
    kept.write_bytes(content)
    _edit(root, "An edited title")
    assert load_index(root).entries == _fresh(root)["entries"]


def test_a_part_not_of_the_index_shape_rebuilds_every_record(shipped, monkeypatch):
    root, folder = shipped
    [kept] = folder.glob("parts-*.marshal")
    stored = marshal.loads(kept.read_bytes())
    for key in stored["parts"]:
        stored["parts"][key] = {"row": "not a row"}
    kept.write_bytes(marshal.dumps(stored))
    _edit(root, "An edited title")
    made = _parts_made(monkeypatch)
    index = load_index(root)
    assert sorted(made) == ["D1", "D1", "D2"]  # the edited one, then all once the kept part failed
    assert index.entries == _fresh(root)["entries"]


def test_a_build_keeps_the_parts_in_the_users_cache(shipped, tmp_path, monkeypatch):
    root, folder = shipped
    other = tmp_path / "cache" / "trainkb" / "parts-00000000-py30.marshal"  # another code's parts
    other.parent.mkdir(parents=True)
    other.write_bytes(b"")
    _edit(root, "An edited title")
    load_index(root)
    assert not other.exists()
    for kept in folder.glob("parts-*.marshal"):
        kept.unlink()  # the next edit finds every part in the user's cache
    _edit(root, "An edited title")  # no change of bytes: nothing to do but read the index
    path = root / "alpha" / "D2-other.yaml"
    path.write_text(path.read_text() + "# changed\n")
    made = _parts_made(monkeypatch)
    assert _titles(root) == {"An edited title", "A sample failure for tests"}
    assert made == ["D2"]
    assert list((tmp_path / "cache" / "trainkb").glob("parts-*.marshal"))


def test_an_edit_parses_only_the_edited_record(shipped, monkeypatch):
    root, _folder = shipped
    _edit(root, "An edited title")
    parsed = _parsed(monkeypatch)
    index = load_index(root)
    assert parsed == ["areas.yaml", "D1-sample.yaml"]
    assert index.entries == _fresh(root)["entries"]


def test_a_kept_document_that_does_not_validate_is_read_from_its_file(shipped, monkeypatch):
    """A document kept under D2's digest (tampered, or of an older record format) is not trusted: the file decides."""
    root, folder = shipped
    [kept] = folder.glob("parts-*.marshal")
    stored = marshal.loads(kept.read_bytes())
    assert len(stored["docs"]) == 2
    stored["docs"] = {key: {"id": 5} for key in stored["docs"]}
    kept.write_bytes(marshal.dumps(stored))
    _edit(root, "An edited title")
    parsed = _parsed(monkeypatch)
    assert _titles(root) == {"An edited title", "A sample failure for tests"}
    assert sorted(parsed) == ["D1-sample.yaml", "D2-other.yaml", "areas.yaml"]


def test_a_document_marshal_cannot_write_is_left_out_and_the_rest_kept(tmp_path):
    """A YAML date (or any value marshal refuses) costs that record a parse next time, not the whole file."""
    path = tmp_path / index_module._parts_path(tmp_path).name
    docs = {"a" * 64: {"id": "D1"}, "b" * 64: {"id": "D2", "when": datetime.date(2026, 1, 1)}}
    index_module._write_parts(path, {}, docs)
    assert index_module._read_parts(path) == ({}, {"a" * 64: {"id": "D1"}})
