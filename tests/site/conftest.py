"""Built sites shared by the site tests: the real catalogue once per session, small ones per test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from browsers import CHROMIUM, CHROMIUM_ARGS, require_browser

from trainkb.catalogue import Catalogue, find_catalogue, load_catalogue, load_verification
from trainkb.site import build_site

STAMP = "2000-01-01 00:00 UTC"

REPORT = {
    "format": "trainkb-check-report",
    "version": 1,
    "environments": [
        {
            "name": "cpu-torch2.13.0",
            "torch": "2.13.0+cpu",
            "cuda_available": False,
            "timestamp": "2026-01-02T03:04:05+00:00",
        }
    ],
    "results": [],
}


def write_report(folder: Path, rows: list[dict[str, str]], env: dict | None = None) -> Path:
    """A check report in the format `kb check --json` writes."""
    folder.mkdir(parents=True, exist_ok=True)
    report = dict(REPORT, results=rows)
    if env is not None:
        report["environments"] = [env]
    path = folder / f"{report['environments'][0]['name']}.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def real_catalogue() -> Catalogue:
    """This checkout's catalogue, loaded once, so the site and the Python engine see the same records."""
    return load_catalogue(find_catalogue())


@pytest.fixture(scope="session")
def real_site(tmp_path_factory: pytest.TempPathFactory, real_catalogue: Catalogue) -> Path:
    """The site of this checkout's catalogue, with one synthetic CPU report of its first checks."""
    cat = real_catalogue
    reports = tmp_path_factory.mktemp("reports")
    rows = [
        {
            "entry": e.id,
            "check": c.name,
            "status": "passed",
            "environment": "cpu-torch2.13.0",
            "seconds": 0.1,
            "message": "",
        }
        for e in cat.ordered()[:5]
        for c in e.checks
    ]
    write_report(reports, rows)
    out = tmp_path_factory.mktemp("site") / "_site"
    build_site(cat, load_verification(reports), out, stamp=STAMP)
    return out


@pytest.fixture
def build_small(make_catalogue: Callable[..., Path], tmp_path: Path) -> Callable[..., Path]:
    """Build a site from the given records (and optional report rows); return the output folder."""

    def build(
        records: dict[str, str], rows: list[dict[str, str]] | None = None, out: str = "_site", stamp: str = STAMP
    ) -> Path:
        root = make_catalogue(records)
        reports = tmp_path / "reports"
        shutil.rmtree(reports, ignore_errors=True)
        if rows is not None:
            write_report(reports, rows)
        cat = load_catalogue(root)
        assert not cat.problems, cat.problems
        target = tmp_path / out
        build_site(cat, load_verification(reports), target, stamp=stamp)
        return target

    return build


@pytest.fixture(scope="module")
def browser():  # type: ignore[no-untyped-def]
    """Headless Chromium driven by playwright; skipped with the reason when it is missing (failed under CI=true)."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()
