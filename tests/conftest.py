"""Shared fixtures (small throw-away catalogues written to tmp_path, one warm check pool) and the browser marker."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import AREAS

from trainkb.catalogue import render_schema

# Tests press Ctrl-C on the commands they start. A suite launched as a background job (`make quick &`)
# starts with SIGINT ignored and would hand that on to every child, so `kb run` would rightly keep it
# ignored and those tests would wait on a command that cannot be interrupted.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


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


@pytest.fixture(scope="session")
def pool() -> Iterator[Any]:
    """A warm pool shared by the session: its forkserver (and its torch import) starts once per worker."""
    from trainkb.check import WarmPool

    pool = WarmPool()
    pool.env = pool.probe([])
    yield pool
    pool.shutdown()


class _Borrowed:
    """The session's pool lent to one `kb check` run: the run's shutdown hands it back instead of ending it."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def shutdown(self) -> None:
        """Every check the run started has been stopped by now; the forkserver stays for the next run."""


@pytest.fixture
def shared_pool(pool: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """`kb check` called in this process runs in the session's pool, not a fresh one (a torch import each):
    for tests of what kb reports, not of how its pool starts or stops (tests/check and the slow tier cover that)."""
    monkeypatch.setattr("trainkb.check._session.WarmPool", lambda: _Borrowed(pool))
    return pool


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects anything
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives Chromium (it uses the `browser` fixture, itself or through another) is marked browser.

    For xdist's loadgroup (`make quick`) each test module is one unit of work, as under loadscope, so its module
    fixtures are built once; but the modules that use the warm check pool are one unit together, so one worker
    pays the pool's torch import (seconds of CPU) instead of every worker."""
    pooled = {item.nodeid.split("::")[0] for item in items if "pool" in getattr(item, "fixturenames", ())}
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
        module = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group("check-pool" if module in pooled else module))
