"""Code blocks in headless Chromium, from disk, at desktop and phone widths: a line longer than its block scrolls
sideways and a shadow on the hidden side says so (Chromium, like phones, may show no scrollbar)."""

from __future__ import annotations

from pathlib import Path

import pytest

VIEWS = [(1280, 900, "light"), (390, 844, "light"), (390, 844, "dark")]
EDGE = """pre => {
    const style = getComputedStyle(pre);
    return {overflow: style.overflowX, image: style.backgroundImage, attachment: style.backgroundAttachment,
            wider: pre.scrollWidth > pre.clientWidth, color: style.backgroundColor};
}"""


@pytest.fixture(params=VIEWS, ids=[f"{w}x{h}-{c}" for w, h, c in VIEWS])
def page(request, browser):  # type: ignore[no-untyped-def]
    width, height, scheme = request.param
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    yield page
    assert problems == []
    page.close()


def test_a_code_block_too_wide_shows_that_it_scrolls(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "M1" / "index.html").as_uri())
    blocks = [page.locator("pre").nth(i).evaluate(EDGE) for i in range(page.locator("pre").count())]
    wide = [block for block in blocks if block["wider"]]
    assert wide, "no code line wider than its block on M1: pick a page that has one"
    for block in blocks:  # every block, on the fix card or not, highlighted or not
        assert block["overflow"] in ("auto", "scroll")
        assert block["image"].count("radial-gradient") == 2 and "linear-gradient" in block["image"], block
        assert block["attachment"] == "local, local, scroll, scroll", block
    card = page.locator("#fix pre").first.evaluate(EDGE)  # the fix card's code keeps its own panel colour
    body = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert card["color"] == body
