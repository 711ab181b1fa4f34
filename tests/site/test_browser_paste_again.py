"""A second crash pasted with a real Ctrl+V, and the results of a phone-width paste, in headless Chromium from disk.

A paste into a box that already holds a searched crash replaces it (after a reload too); the victim rows of a
four-rank timeout wrap at 390 px; the answer's fix is in the first screen however long its "why"; the culprit
label is legible in both themes; ids in the advice are links; an unconfirmed pick names the answer above it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oom_family import captures
from test_browser import TRACEBACK, in_view
from test_browser_after_paste import _contrast

ROOT = Path(__file__).resolve().parents[2]
GLOO_HANG = (ROOT / "tests/triage/fixtures/gloo/hang-n4-r1/combined.log").read_text(encoding="utf-8")
GLOO_NAN = (ROOT / "tests/triage/fixtures/gloo/nan-n4-r0/combined.log").read_text(encoding="utf-8")
NCCL_TIMEOUT = (ROOT / "tests/fixtures/oom/nccl_timeout.txt").read_text(encoding="utf-8")


@pytest.fixture(params=["light", "dark"])
def scheme(request) -> str:  # type: ignore[no-untyped-def]
    return str(request.param)


def open_page(browser, width: int, height: int, scheme: str = "light"):  # type: ignore[no-untyped-def]
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
    page.problems = []
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    return page


def ctrl_v(page, selector: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """A real Ctrl+V: the text goes on the clipboard (copied from a scratch box), then the box gets the keystroke,
    with whatever caret or selection it had."""
    page.evaluate(
        """text => { const scratch = document.createElement("textarea"); scratch.value = text;
        document.body.appendChild(scratch); scratch.select(); document.execCommand("copy"); scratch.remove(); }""",
        text,
    )
    page.focus(selector)
    page.keyboard.press("Control+V")


def first_result(page) -> str:  # type: ignore[no-untyped-def]
    page.wait_for_selector("#paste-results li a.entry-link")
    page.wait_for_timeout(100)
    return page.locator("#paste-results li a.entry-link").first.inner_text().split(" ")[0]


def test_a_second_crash_pasted_replaces_the_first(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", TRACEBACK)
    assert first_result(page) == "D8"
    oom = captures()["real-oom-message-fields"]
    ctrl_v(page, "#paste-input", oom)  # focus still in the box, the caret after the first crash
    page.wait_for_timeout(300)
    assert page.input_value("#paste-input") == oom and first_result(page) != "D8"
    page.reload()  # the box comes back filled from the page state; a paste still replaces it
    page.wait_for_selector("#paste-results li a.entry-link")
    page.click("#paste-input")
    ctrl_v(page, "#paste-input", TRACEBACK)
    page.wait_for_timeout(300)
    assert page.input_value("#paste-input") == TRACEBACK and first_result(page) == "D8"
    page.fill("#paste-input", "")  # a few words pasted into what one is typing join it
    page.keyboard.type("loss is ")
    ctrl_v(page, "#paste-input", "nan")
    assert page.input_value("#paste-input") == "loss is nan"
    assert page.problems == []


def test_a_four_rank_timeout_does_not_scroll_sideways_on_a_phone(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 390, 844)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", GLOO_HANG)
    page.click("#paste-results .triage summary")  # the rows fold under the verdict on a phone
    page.wait_for_selector("#paste-results .triage li")
    page.wait_for_timeout(100)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.problems == []


def test_the_fix_is_in_the_first_screen_however_long_the_why(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 390, 844)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", NCCL_TIMEOUT)
    assert first_result(page) == "D20"
    assert in_view(page, "#paste-results li.result .fix-line")
    assert page.problems == []


def test_the_culprit_label_is_legible_in_both_themes(real_site: Path, browser, scheme: str) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900, scheme)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", GLOO_HANG)
    label = page.locator("#paste-results .triage li.culprit strong, #paste-results .triage li.suspect strong").first
    label.wait_for()
    colour, background = label.evaluate("""node => {
        let at = node, bg = "rgba(0, 0, 0, 0)";
        while (at && (bg === "rgba(0, 0, 0, 0)" || bg === "transparent")) { bg = getComputedStyle(at).backgroundColor;
          at = at.parentElement; }
        return [getComputedStyle(node).color, bg]; }""")
    assert _contrast(colour, background) >= 4.5, (colour, background)


def test_ids_in_the_advice_are_links(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", GLOO_NAN)  # no confident match: the advice names the one entry it covers
    advice = page.locator("#paste-results .advice").first
    advice.wait_for()
    assert "P14" in advice.inner_text()
    links = advice.locator("a", has_text="P14")
    assert links.count() >= 1
    assert all((links.nth(n).get_attribute("href") or "").endswith("P14/index.html") for n in range(links.count()))


def test_an_unconfirmed_pick_names_the_answer_above_it(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    page = open_page(browser, 1280, 900)
    page.goto((real_site / "index.html").as_uri())
    ctrl_v(page, "#paste-input", (ROOT / "tests/fixtures/oom/m1_activations.txt").read_text(encoding="utf-8"))
    answer = first_result(page)
    closest = page.locator("""#paste-results li.result a.entry-link[data-group^='{"kind":"closest"']""").first
    picked = closest.inner_text().split(" ")[0]
    assert picked != answer
    closest.click()
    page.wait_for_url(f"**/{picked}/index.html#fix")
    note = page.locator(".unconfirmed-note")
    assert note.count() == 1 and answer in [t.split(" ")[0] for t in note.locator("a.entry-link").all_inner_texts()]
