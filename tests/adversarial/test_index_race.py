"""A catalogue edited while a cold `kb search` builds its index never leaves one version's index
stored under the other version's key: search never answers from stale wording."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import record

import trainkb.catalogue
from trainkb.search import cache_dir
from trainkb.search._index import load_index

OLD = "title: Alpha wording of the sample failure"
NEW = "title: Bravo wording of the sample failure"
SIGNATURE = """\
signatures:
  - literal: "GadgetError: the widget sprocket overflowed"
    example: "GadgetError: the widget sprocket overflowed"
    names_cause: true
"""
PASTE = "GadgetError: the widget sprocket overflowed"


def _text(title: str) -> str:
    return record("D1", extra=SIGNATURE).replace("title: A sample failure for tests", title)


@pytest.fixture
def cat(make_catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return make_catalogue({"alpha/D1-sample.yaml": _text(OLD)})


def _title(root: Path) -> str:
    """What a fresh `kb search` process answers with: the index from the disk cache, or built anew."""
    [entry] = load_index(root).entries
    return entry["title"]


def test_an_edit_that_lands_while_the_index_is_built_is_not_cached_under_the_old_key(cat, monkeypatch):
    record_file = cat / "alpha" / "D1-sample.yaml"
    real = trainkb.catalogue.load_layers

    def edited_mid_build(roots, known=None):  # the editor saves after kb hashed the catalogue, before it parsed it
        record_file.write_text(_text(NEW), encoding="utf-8")
        return real(roots, known)

    monkeypatch.setattr(trainkb.catalogue, "load_layers", edited_mid_build)
    assert _title(cat) == NEW[len("title: ") :]  # this search answers from what it parsed
    monkeypatch.setattr(trainkb.catalogue, "load_layers", real)
    record_file.write_text(_text(OLD), encoding="utf-8")  # the edit is undone: the first state again
    assert _title(cat) == OLD[len("title: ") :]
    record_file.write_text(_text(NEW), encoding="utf-8")
    assert _title(cat) == NEW[len("title: ") :]


def test_an_unchanged_catalogue_is_still_cached(cat):
    _title(cat)
    assert len(list(cache_dir().glob("index-*.marshal"))) == 1


@pytest.mark.slow
def test_cold_searches_racing_an_editor_never_keep_a_wrong_index(cat):
    """The probe that found it: cold `kb search` processes while another process rewrites the record
    (before the fix, about half the runs stored one version's index under the other's key)."""
    import marshal

    from trainkb.catalogue import catalogue_digest

    record_file = cat / "alpha" / "D1-sample.yaml"
    wording = {}
    for line in (OLD, NEW):
        record_file.write_text(_text(line), encoding="utf-8")
        wording[catalogue_digest(cat)] = line[len("title: ") :]
    stop = threading.Event()

    def editor() -> None:
        flip = False
        while not stop.is_set():
            record_file.write_text(_text(NEW if flip else OLD), encoding="utf-8")
            flip = not flip
            time.sleep(0.002)

    wrong, stored = 0, 0
    thread = threading.Thread(target=editor)
    thread.start()
    try:
        for _ in range(16):
            for old in cache_dir().glob("index-*.marshal"):
                old.unlink()
            subprocess.run(
                [sys.executable, "-m", "trainkb", "--catalogue", str(cat), "search", PASTE],
                capture_output=True,
                timeout=120,
                env=os.environ.copy(),
            )
            for kept in cache_dir().glob("index-*.marshal"):
                data = marshal.loads(kept.read_bytes())
                stored += 1
                title = data["entries"][0]["title"] if data["entries"] else None  # None: parsed mid-write
                wrong += data["hash"] in wording and title != wording[data["hash"]]
    finally:
        stop.set()
        thread.join()
    print(f"{stored} indexes stored, {wrong} under another version's key")
    assert wrong == 0


@pytest.mark.parametrize("shape", ["keys missing", "wrong types"])
def test_a_cache_file_of_the_right_key_but_the_wrong_shape_is_a_miss(cat, shape):
    import marshal

    first = load_index(cat)
    [cached] = cache_dir().glob("index-*.marshal")
    data = marshal.loads(cached.read_bytes())
    bad = (
        {"format": data["format"], "hash": data["hash"]}
        if shape == "keys missing"
        else {key: (value if key in ("format", "hash") else 7) for key, value in data.items()}
    )
    cached.write_bytes(marshal.dumps(bad))
    index = load_index(cat)  # rebuilt, not a traceback
    assert [e["id"] for e in index.entries] == [e["id"] for e in first.entries]


@pytest.mark.parametrize("value", ["relative/cache", ""])
def test_a_relative_or_empty_cache_home_is_ignored(monkeypatch, tmp_path, value):
    monkeypatch.setenv("XDG_CACHE_HOME", value)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "trainkb"
