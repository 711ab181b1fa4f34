"""A reader's path in headless Chromium, from disk (file://), at desktop and phone sizes, light and dark.

Paste a traceback, land on the fix card, go Back to the same results; a real CUDA OOM shows the
causes that print it with what decides between them, or the one its tell singles out with why;
every page's header box; the entry page's tables, id links and code spans; the verification
filters; the area relation list.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from oom_family import captures, family_records

from trainkb._present import ADVICE_LEAD, HEADLINES
from trainkb._present import LABELS as VIEW_LABELS

TRACEBACK = """\
Traceback (most recent call last):
  File "/home/me/train.py", line 41, in <module>
    loss.backward()
RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error \
indicates that your module has parameters that were not used in producing loss.
"""
VIEWS = [(1280, 800, "light"), (1280, 800, "dark"), (390, 844, "light"), (390, 844, "dark")]
BACKGROUND = {"light": "rgb(255, 255, 255)", "dark": "rgb(21, 23, 26)"}


@pytest.fixture(params=VIEWS, ids=[f"{w}x{h}-{c}" for w, h, c in VIEWS])
def page(request, browser):  # type: ignore[no-untyped-def]
    """A page at one size and colour scheme that records errors and every request it makes."""
    width, height, scheme = request.param
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme=scheme)
    page.problems = []
    page.requests = []
    page.on("pageerror", lambda e: page.problems.append(str(e)))
    page.on("console", lambda m: page.problems.append(m.text) if m.type == "error" else None)
    page.on("request", lambda r: page.requests.append(r.url))
    page.scheme = scheme
    yield page
    assert page.problems == []
    assert all(url.startswith("file://") for url in page.requests), page.requests
    page.close()


def paste_into(page, selector: str, text: str) -> None:  # type: ignore[no-untyped-def]
    """What a browser does on Ctrl+V: the text lands (unless the page takes it) and a paste event fires."""
    page.evaluate(
        """([selector, text]) => {
        const box = document.querySelector(selector), data = new DataTransfer();
        data.setData("text/plain", text);
        box.focus();
        const event = new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true});
        if (box.dispatchEvent(event)) { box.value = text; box.dispatchEvent(new Event("input", {bubbles: true})); }
    }""",
        [selector, text],
    )


def index_requested(page) -> bool:  # type: ignore[no-untyped-def]
    return any(url.endswith("/static/search-index.js") for url in page.requests)


def in_view(page, selector: str) -> bool:  # type: ignore[no-untyped-def]
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] >= -1 and box["y"] + box["height"] <= page.viewport_size["height"] + 1


def test_a_paste_searches_lands_on_the_fix_and_back_restores(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "index.html").as_uri())
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == BACKGROUND[page.scheme]
    assert not index_requested(page) and page.evaluate("window.TRAINKB_INDEX === undefined")  # loaded on first use
    paste_into(page, "#paste-input", TRACEBACK)  # no button: the paste searches on its own
    top = page.locator("#paste-results li a").first
    assert top.inner_text().startswith("D8 ")
    assert "find_unused_parameters=True" in page.locator("#paste-results .fix-line").first.inner_text()
    assert index_requested(page)
    top.click()
    page.wait_for_url("**/D8/index.html#fix")
    assert page.evaluate("document.querySelector('h1').nextElementSibling.id") == "fix"  # the card under the title
    assert in_view(page, "#fix .fix-summary") and in_view(page, "#fix-heading")
    page.go_back()
    page.wait_for_selector("#paste-results li a")
    assert page.locator("#paste-results li a").first.inner_text().startswith("D8 ")
    assert page.input_value("#paste-input") == TRACEBACK


LABELS = set(VIEW_LABELS.values())  # what a result's place rests on, never a score


def labels(page) -> list[str]:  # type: ignore[no-untyped-def]
    """Each result's label; every one also keeps its score in its tooltip, and none shows a number."""
    shown = page.locator("#paste-results .confidence")
    titles = shown.evaluate_all("nodes => nodes.map(n => n.title)")
    assert titles and all(re.fullmatch(r"score \d+\.\d of 100", t) for t in titles), titles
    texts = shown.all_inner_texts()
    assert set(texts) <= LABELS, texts
    return texts


def test_a_differential_shows_what_decides(build_small: Callable[..., Path], page) -> None:  # type: ignore[no-untyped-def]
    """A real OOM whose output singles out no cause: the causes that print it, each with its sign and fix, first."""
    site = build_small(family_records())
    page.goto((site / "index.html").as_uri())
    paste_into(page, "#paste-input", captures()["real-oom-message-fields"])
    first = page.locator("#paste-results > :not(.result-tools)").first  # under the Copy diagnosis button
    first.wait_for()
    assert first.get_attribute("class") == "differential"
    assert first.locator(".verdict").inner_text() == HEADLINES["differential"]
    assert "torch.OutOfMemoryError: CUDA out of memory" in first.locator(".why").first.inner_text()  # once
    items = first.locator("li.candidate")
    assert [t.split(" ")[0] for t in items.all_inner_texts()] == ["D1", "D2", "D3", "D4", "D5"]
    one = items.first
    assert one.locator(".tell").inner_text().startswith("look for: reserved but unallocated is over half")
    assert one.locator(".fix-line").inner_text() == "Fix: Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True."
    assert one.locator(".fix-line code").count() == 1
    assert items.nth(4).locator(".tell").count() == 0 and items.nth(4).locator(".fix-line").count() == 1
    assert labels(page) == ["candidate"] * 5
    assert first.locator(".advice").inner_text().startswith(f"{ADVICE_LEAD} Several root causes print")
    assert page.locator("#paste-results .others").count() == 0  # five candidates are every result
    assert not re.search(r"\blow\b", page.inner_text("#paste-results"))
    # above the fold: with the results scrolled to, the heading and the first candidates' signs need no scrolling
    page.evaluate("document.getElementById('paste-results').scrollIntoView({block: 'start'})")
    assert in_view(page, "#paste-results .differential > .verdict")
    for n in (0, 1):
        assert in_view(page, f"#paste-results li.candidate:nth-child({n + 1}) .tell")

    # two tells fire: the two candidates, each with what the paste shows, then the others, unconfirmed
    paste_into(page, "#paste-input", captures()["broadcast-loss-on-gpu"])
    page.wait_for_selector("#paste-results .others")
    fired = page.locator("#paste-results li.candidate .tell.fired").all_inner_texts()
    assert [t.split(":")[0] for t in fired] == ["in your paste", "in your paste"]
    assert "than the whole card" in fired[1]
    assert page.locator(".others + ol li").count() == 3
    assert labels(page) == ["candidate", "candidate"] + ["closest, unconfirmed"] * 3


def test_a_tell_that_fires_answers_with_why(build_small: Callable[..., Path], page) -> None:  # type: ignore[no-untyped-def]
    site = build_small(family_records())
    page.goto((site / "index.html").as_uri())
    paste_into(page, "#paste-input", captures()["fragmented-pool-ooms"])
    page.wait_for_selector("#paste-results li")
    assert page.locator("#paste-results .differential").count() == 0
    assert page.locator("#paste-results > .verdict").inner_text() == "Read as a traceback."
    answer = page.locator("#paste-results li").first
    assert answer.locator("a").inner_text().startswith("D1 ")
    # the why right under the title, then the fix
    assert answer.evaluate("li => [...li.children].map(c => c.className)")[:4] == [
        "entry-link",
        "confidence medium",
        "reason",
        "fix-line",
    ]
    assert answer.locator(".reason").inner_text() == (
        "Why: reserved but unallocated is over half the allocated figure, and no other process is named"
    )
    assert labels(page) == ["medium"] + ["closest, unconfirmed"] * 4
    assert page.locator("#paste-results .fix-line").count() == 1  # an unconfirmed entry's fix is one click away
    assert page.locator("#paste-results .why").count() == 1  # the line all five matched, shown once


def test_a_real_oom_on_the_real_catalogue(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    """The catalogue's OOM entries print the same line: a differential, never a score beside "low"."""
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", captures()["real-oom-message-fields"])
    page.wait_for_selector("#paste-results .differential li")
    ids = [t.split(" ")[0] for t in page.locator("#paste-results li.candidate").all_inner_texts()]
    assert "M1" in ids and all(i.startswith("M") for i in ids)
    assert set(labels(page)) <= {"candidate", "closest, unconfirmed"}
    paste_into(page, "#paste-input", "my loss goes up and down and the accuracy is stuck")
    page.wait_for_selector("#paste-results li")
    assert page.locator("#paste-results > .verdict").inner_text() == HEADLINES["closest"]
    assert set(labels(page)) == {"closest, unconfirmed"}


def test_header_search_on_every_page(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    for rel in (
        "index.html",
        "D8/index.html",
        "distributed-launch/index.html",
        "verification/index.html",
        "search/index.html",
    ):
        page.goto((real_site / rel).as_uri())
        assert page.locator("header #q").count() == 1, rel
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "q", rel
    page.goto((real_site / "D1" / "index.html").as_uri())
    page.keyboard.press("/")
    page.keyboard.type("unused param")
    first = page.locator("#q-results li a").first
    assert "D8" in first.inner_text() and first.get_attribute("href").endswith("D8/index.html#fix")
    paste_into(page, "#q", TRACEBACK)  # a traceback pasted into the header goes to the paste search
    page.wait_for_url("**/search/index.html")
    assert page.locator("#paste-results li a").first.inner_text().startswith("D8 ")
    page.goto((real_site / "search" / "index.html").as_uri() + "?q=D19")
    assert page.locator("#find-results li a").first.inner_text().startswith("D19 ")


def test_entry_page_tables_id_links_code_and_measure(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "D8" / "index.html").as_uri())
    assert in_view(page, "#fix .fix-summary")  # opened from anywhere, the one-line fix needs no scrolling
    page.goto((real_site / "P1" / "index.html").as_uri())
    assert page.locator("article table").count() >= 1 and "|---" not in page.inner_text("article")
    refs = page.locator("article a.entry-ref")
    assert refs.count() >= 1
    for href in refs.evaluate_all("links => links.map(a => a.href)"):
        assert Path(href.removeprefix("file://").split("#")[0]).is_file(), href  # only ids that exist
    aliases = page.locator("details.aliases")
    assert aliases.count() == 1 and aliases.get_attribute("open") is None  # collapsed
    # about 75 characters a line: a paragraph's width over the width of one "0" in its font
    ratio = page.evaluate("""() => {
        const p = document.querySelector('#symptom ~ p') || document.querySelector('article p');
        const probe = document.createElement('span'); probe.textContent = '0'.repeat(100);
        p.appendChild(probe); const one = probe.getBoundingClientRect().width / 100; probe.remove();
        return p.getBoundingClientRect().width / one; }""")
    assert ratio <= 80
    page.goto((real_site / "D21" / "index.html").as_uri())
    assert page.locator("h1 code").count() == 1 and "`" not in page.inner_text("h1")
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1


def test_verification_grouped_filtered_sticky(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "verification" / "index.html").as_uri())
    areas = page.locator(".verify-area")
    assert areas.count() >= 2 and page.locator("tbody.verify-entry").count() >= 10
    page.locator(".filter[data-filter=not-run]").click()
    statuses = page.locator("tr[data-status]:visible").evaluate_all("rows => rows.map(r => r.dataset.status)")
    assert statuses and all("not-run" in s.split() for s in statuses)
    page.locator(".filter[data-filter=all]").click()
    page.mouse.wheel(0, 4000)
    page.wait_for_timeout(200)
    assert abs(page.locator(".filters").bounding_box()["y"]) < 2  # the filter bar stays at the top


def test_area_relations_readable_on_a_phone(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "distributed-launch" / "index.html").as_uri())
    assert page.locator(".relations li .rel-label").count() >= 3
    phone = page.viewport_size["width"] < 600
    assert page.locator(".graph-figure").is_visible() is not phone  # the tangle gives way to the list
    assert page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"] + 1
