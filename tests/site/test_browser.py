"""A reader's path in headless Chromium, from disk (file://): paste, open the top result, follow a link."""

from __future__ import annotations

from pathlib import Path

TRACEBACK = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 41, in <module>
    loss.backward()
RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error \
indicates that your module has parameters that were not used in producing loss.
"""


def test_paste_open_top_result_follow_cross_link(real_site: Path, browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto((real_site / "index.html").as_uri())
    page.fill("#paste-input", TRACEBACK)
    page.keyboard.press("Control+Enter")
    top = page.locator("#paste-results li a").first
    assert top.inner_text().startswith("D8 ")
    top.click()
    page.wait_for_url("**/D8/index.html")
    assert page.locator("h1").inner_text().startswith("D8")
    assert page.locator("pre.highlight button.copy").count() >= 1
    related = page.locator("#related ~ ul a").first
    target = related.inner_text()
    related.click()
    page.wait_for_url(f"**/{target}/index.html")
    assert page.locator("h1 .id").inner_text() == target
    shot = tmp_path / "journey.png"
    page.screenshot(path=str(shot))
    assert shot.stat().st_size > 10_000
    assert problems == []
    assert all(url.startswith("file://") for url in requests), requests
    page.close()


def test_full_text_search_and_keyboard(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "find-input"
    page.keyboard.type("unused param")
    first = page.locator("#find-results li a").first
    assert "D8" in first.inner_text()
    page.keyboard.press("Tab")  # results and boxes are reachable by keyboard: focus moves on
    assert page.evaluate("document.activeElement.tagName") in {"A", "BUTTON", "INPUT", "TEXTAREA"}
    page.goto((real_site / "search" / "index.html").as_uri() + "?q=D19")
    assert page.locator("#find-results li a").first.inner_text().startswith("D19 ")
    page.close()


def test_dark_mode_and_narrow_screen(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": 380, "height": 800}, color_scheme="dark")
    page.goto((real_site / "D8" / "index.html").as_uri())
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(21, 23, 26)"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 380 + 1  # nothing forces sideways scrolling of the page itself
    page.close()
