"""What a newcomer hit on the site, in headless Chromium: a short paste after an answer, a triage row's guess, Back
from an entry at desktop width, what the silent rank last printed, and the answer's place on a phone."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_browser import in_view
from test_browser_paste_again import ctrl_v, first_result, open_page

from trainkb.site import make_server

ROOT = Path(__file__).resolve().parents[2]
OOM = (ROOT / "tests/fixtures/oom/m1_activations.txt").read_text(encoding="utf-8")
GLOO_HANG = (ROOT / "tests/triage/fixtures/gloo/hang-n4-r1/combined.log").read_text(encoding="utf-8")
SIGKILL = (ROOT / "tests/triage/fixtures/gloo/sigkill-n3-r0/combined.log").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def served(real_site: Path) -> Iterator[str]:
    """The built site under `kb site serve`'s own server, on a free port."""
    server = make_server(real_site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    yield f"http://{host!s}:{port}/"
    server.shutdown()
    server.server_close()


def test_a_short_paste_after_an_answer_replaces_the_box(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", OOM)
    assert first_result(page) == "M1"
    page.evaluate("() => { const box = document.getElementById('paste-input'); box.setSelectionRange(300, 300); }")
    line = "RuntimeError: CUDA error: device-side assert triggered"
    ctrl_v(page, "#paste-input", line)  # one short line, the caret mid-traceback
    page.wait_for_timeout(300)
    assert page.input_value("#paste-input") == line
    assert first_result(page) != "M1"
    page.keyboard.type(" again")  # typing still edits what is there
    assert page.input_value("#paste-input") == line + " again"
    assert page.problems == []


def test_a_guess_opened_from_a_triage_row_is_marked(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", SIGKILL)
    row = page.locator("#paste-results .triage li", has=page.locator("a.entry-link")).first
    row.wait_for()
    assert row.inner_text().endswith("(unconfirmed)")
    link = row.locator("a.entry-link")
    picked = link.inner_text().split(" ")[0]
    link.click()
    page.wait_for_url(f"**/{picked}/index.html#fix")
    note = page.locator("#fix .unconfirmed-note")
    assert note.count() == 1 and "Unconfirmed:" in note.inner_text()
    assert page.problems == []


@pytest.mark.parametrize("how", ["file", "served"])
def test_back_from_an_entry_returns_to_the_results(real_site: Path, served: str, browser, how: str) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri() if how == "file" else served + "index.html")
    ctrl_v(page, "#paste-input", OOM)
    assert first_result(page) == "M1"
    page.wait_for_timeout(400)
    before = page.evaluate("window.scrollY")
    assert before > 0
    page.locator("#paste-results li a.entry-link").first.click()
    page.wait_for_url("**/M1/index.html#fix")
    page.go_back()
    page.wait_for_selector("#paste-results li a.entry-link")
    page.wait_for_timeout(500)
    assert abs(page.evaluate("window.scrollY") - before) <= 2
    assert in_view(page, "#paste-results li a.entry-link")
    assert page.problems == []


NCCL_TIMEOUT = (ROOT / "tests/fixtures/oom/nccl_timeout.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("log", "shows"),
    [
        (GLOO_HANG, ["rank 1 culprit: ", "its last line: step 1 loss 0.4167"]),
        (NCCL_TIMEOUT, ["rank 1 culprit: ", "(exit code -15, sent by the launcher)", "(last enqueued 3, completed 3)"]),
    ],
    ids=["gloo-hang", "nccl-timeout"],
)
def test_a_silent_rank_shows_what_the_cli_shows(real_site: Path, browser, log: str, shows: list[str]) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", log)
    row = page.locator("#paste-results .triage li.culprit").first
    row.wait_for()
    text = row.inner_text()
    assert all(part in text for part in shows), text
    assert page.problems == []


@pytest.mark.parametrize("log", [SIGKILL, GLOO_HANG], ids=["sigkill", "gloo-hang"])
def test_on_a_phone_the_answer_comes_before_the_ranks(real_site: Path, browser, log: str) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 390, 844)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", log)
    page.wait_for_selector("#paste-results li.result")
    page.wait_for_timeout(300)
    assert in_view(page, "#paste-results .triage .verdict")
    assert in_view(page, "#paste-results li.result a.entry-link")
    assert in_view(page, "#paste-results li.result .fix-line")
    assert not page.locator("#paste-results .triage li.culprit").is_visible()
    page.click("#paste-results .triage summary")  # one tap shows every rank
    assert page.locator("#paste-results .triage li.culprit").is_visible()
    assert page.problems == []


def test_slash_after_a_paste_goes_to_the_header_box(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", OOM)
    assert first_result(page) == "M1"
    page.wait_for_timeout(300)
    page.keyboard.press("/")  # focus is still in the paste box, now above the screen
    assert page.input_value("#paste-input") == OOM
    assert page.evaluate("document.activeElement.id") == "q"
    assert page.problems == []


def test_copy_diagnosis_under_serve_names_entries_not_the_loopback_address(served: str, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto(served + "index.html")
    ctrl_v(page, "#paste-input", NCCL_TIMEOUT)
    first_result(page)
    page.evaluate("window.TrainkbCopy = (text, button) => { window.copied = text; }")
    page.click("#paste-results .copy-diagnosis")
    copied = page.evaluate("window.copied")
    assert "kb show D20" in copied and "127.0.0.1" not in copied
    assert copied.count("that peer stopped calling collectives") == 1  # the why, not the why and its sign again
    assert page.problems == []


def test_a_page_opened_from_a_medium_answer_says_so(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", OOM)
    assert first_result(page) == "M1"
    assert page.locator("#paste-results li.result .confidence").first.inner_text() == "medium"
    page.locator("#paste-results li a.entry-link").first.click()
    page.wait_for_url("**/M1/index.html#fix")
    note = page.locator("#fix .confidence-note")
    assert note.count() == 1 and note.inner_text().startswith("Medium confidence: M1 is the search's answer")
    assert page.locator(".unconfirmed-note").count() == 0
    page.reload()  # kept in the history entry
    assert page.locator("#fix .confidence-note").count() == 1
    assert page.problems == []


def test_the_phone_nav_shows_that_it_scrolls(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 390, 844)
    page.goto((real_site / "index.html").as_uri())
    row = page.locator(".site-header nav ul")
    assert row.evaluate("n => n.scrollWidth > n.clientWidth")  # more than one screen of areas
    assert "gradient" in row.evaluate("n => getComputedStyle(n).maskImage || getComputedStyle(n).webkitMaskImage")
    row.evaluate("n => { n.scrollLeft = n.scrollWidth; }")  # at the end the last link is clear of the fade
    last = page.locator(".site-header nav li").last.bounding_box()
    edge = row.bounding_box()
    assert last is not None and edge is not None and last["x"] + last["width"] <= edge["x"] + edge["width"] - 16
    assert page.problems == []


def test_ids_in_a_results_fix_line_are_links(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", SIGKILL)
    fix = page.locator("#paste-results li.result", has=page.locator("a.entry-link[data-id='D25']")).locator(".fix-line")
    fix.first.wait_for()
    assert "(M8)" in fix.first.inner_text()
    assert (fix.first.locator("a.entry-ref", has_text="M8").get_attribute("href") or "").endswith("M8/index.html")
    assert fix.first.locator("code a").count() == 0
    assert page.problems == []
