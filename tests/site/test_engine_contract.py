"""engine.js reads the engine contract it declares, and refuses loudly an index it cannot read.

An index of another contract version, or one missing any declared field, must stop the engine
with an Error naming what is wrong, and the site's search boxes must say that search is out of
date, never rank entries with undefined constants.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from browsers import require_browser

from trainkb.search.contract import (
    ENGINE_CONTRACT_VERSION,
    EngineContract,
    EntryContract,
    ExcludeContract,
    PhraseContract,
    SignatureContract,
    TellContract,
    _condition,
)

ITEMS = {
    "entries": EntryContract,
    "sigs": SignatureContract,
    "phrases": PhraseContract,
    "excludes": ExcludeContract,
    "tells": TellContract,
}
TABLES = ("constants", "patterns", "advice")
SAMPLE_TELL: TellContract = {"entry": 0, "says": "a sign that decides", "when": [_condition({"line": "zeros_like"})]}

# Each run: a copy of the real index with one field taken away (or the version changed), given to the engine.
# A list the real catalogue leaves empty gets ``sample`` as its first item, then loses the field.
BREAK = """([table, item, field, version, sample]) => {
    const data = Object.assign({}, window.TRAINKB_INDEX.search);
    if (version !== null) data.version = version;
    else if (table === null) delete data[field];
    else if (item === null) { data[table] = Object.assign({}, data[table]); delete data[table][field]; }
    else {
        data[table] = data[table].slice();
        data[table][item] = Object.assign({}, data[table][item] || sample);
        delete data[table][item][field];
    }
    try { new window.TrainkbEngine.Engine(data); return null; }
    catch (error) { return [error.constructor.name, error.message]; }
}"""


@pytest.fixture(scope="module")
def ready_page(real_site: Path, browser):  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")
    yield page
    page.close()


def _declared(page: Any) -> dict[str, Any]:
    return page.evaluate("window.TrainkbEngine.CONTRACT")  # type: ignore[no-any-return]


def test_engine_declares_the_python_contract(ready_page) -> None:  # type: ignore[no-untyped-def]
    declared = _declared(ready_page)
    shipped = ready_page.evaluate("window.TRAINKB_INDEX.search")
    assert declared["version"] == ENGINE_CONTRACT_VERSION == shipped["version"]
    assert sorted(declared["fields"]) == sorted(EngineContract.__required_keys__) == sorted(shipped)
    for table in TABLES:
        assert sorted(declared[table]) == sorted(shipped[table]), table
    for name, fields in ITEMS.items():
        assert sorted(declared[name]) == sorted(fields.__required_keys__), name


def test_every_missing_field_stops_the_engine(ready_page) -> None:  # type: ignore[no-untyped-def]
    declared = _declared(ready_page)
    cases: list[tuple[str | None, int | None, str, str]] = [(None, None, f, f) for f in declared["fields"]]
    cases += [(t, None, f, f"{t}.{f}") for t in TABLES for f in declared[t]]
    cases += [(n, 0, f, f"{n}[0].{f}") for n in ITEMS for f in declared[n]]
    assert ready_page.evaluate(BREAK, [None, None, "", None, None]) is None  # the intact index loads
    for table, item, field, named in cases:
        got = ready_page.evaluate(BREAK, [table, item, field, None, SAMPLE_TELL])
        assert got is not None, f"the engine accepted an index without {named}"
        kind, message = got
        assert kind == "Error" and "out of date" in message, got
        assert (f"lacks {named}" in message) if field != "version" else "version undefined" in message, got


def test_another_version_stops_the_engine(ready_page) -> None:  # type: ignore[no-untyped-def]
    for version in (ENGINE_CONTRACT_VERSION - 1, ENGINE_CONTRACT_VERSION + 1, "1"):
        kind, message = ready_page.evaluate(BREAK, [None, None, "", version, None])
        assert kind == "Error" and "out of date" in message, message
        assert (
            f"reads index contract version {ENGINE_CONTRACT_VERSION} but the site's search index is version "
            f"{version}." in message
        )


def _stale_site(real_site: Path, tmp_path: Path) -> Path:
    """The real site with its index one contract version ahead of its engine.js."""
    site = tmp_path / "site"
    shutil.copytree(real_site, site)
    index = site / "static" / "search-index.js"
    text = index.read_text(encoding="utf-8")
    end = f'"version":{ENGINE_CONTRACT_VERSION}}}}};\n'  # sorted keys: the search part's last field, then the end
    assert text.endswith(end)
    index.write_text(text.removesuffix(end) + f'"version":{ENGINE_CONTRACT_VERSION + 1}}}}};\n', encoding="utf-8")
    return site


def test_the_search_boxes_say_search_is_out_of_date(real_site: Path, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    site = _stale_site(real_site, tmp_path)
    page = browser.new_page()
    page.goto((site / "index.html").as_uri())
    with pytest.raises(Exception, match="out of date"):  # the test and console entry point rejects
        page.evaluate("window.TrainkbSearch.ready()")
    page.fill("#paste-input", "RuntimeError: Expected to have finished reduction in the prior iteration")
    page.click("#paste-go")
    shown = page.locator("#paste-results .engine-error")
    shown.wait_for()
    assert shown.inner_text().startswith("Search is unavailable: trainkb search engine out of date")
    assert page.locator("#paste-results li").count() == 0  # no results from a mismatched engine
    page.fill("#q", "nccl timeout")  # the header box's full-text search reads the same index
    assert page.locator("#q-results .engine-error").inner_text().startswith("Search is unavailable")
    page.close()


def test_browser_tests_fail_in_ci_when_chromium_is_missing(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Locally a missing browser skips the browser tests; with CI=true it fails them."""
    import browsers

    monkeypatch.setattr(browsers, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the browser tests cannot run: needs Debian's"):
        require_browser()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="needs Debian's chromium"):
        require_browser()
    monkeypatch.setattr(browsers, "CHROMIUM", Path(__file__))  # a browser, but no playwright
    monkeypatch.setattr(browsers.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(pytest.skip.Exception, match="playwright"):
        require_browser()
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true but the browser tests cannot run: needs the playwright"):
        require_browser()
