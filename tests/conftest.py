"""Shared fixtures (small throw-away catalogues written to tmp_path) and the browser marker."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import AREAS

from trainkb.catalogue import render_schema


@pytest.fixture
def make_catalogue(tmp_path: Path) -> Callable[..., Path]:
    """Write areas.yaml, schema.json and the given records; return the catalogue folder."""

    def make(records: dict[str, str | bytes], areas: str = AREAS, schema: bool = True) -> Path:
        root = tmp_path / "catalogue"
        root.mkdir(exist_ok=True)
        (root / "areas.yaml").write_text(areas, encoding="utf-8")
        if schema:
            (root / "schema.json").write_text(render_schema(), encoding="utf-8")
        for rel, text in records.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, bytes):
                path.write_bytes(text)
            else:
                path.write_text(text, encoding="utf-8")
        return root

    return make


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects anything
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives Chromium (it uses the `browser` fixture, itself or through another) is marked browser."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
