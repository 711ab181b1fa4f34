"""What a stressed reader meets after a paste, in headless Chromium from disk at 1280x900 and 390 px wide.

The answer (or the candidates) and its fix fill the first screen; the paste stays out of the address
bar; an entry opened from an unconfirmed result says it is one guess among several; triage's heading
agrees with its rows; advice shows code, not backticks; what a failure prints stays literal; every
existing id in prose links; the header list works by keyboard; code on the fix card stands out and
its Copy button covers none of it; "Copy diagnosis" puts a Markdown summary on the clipboard.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from oom_family import captures, oom_line
from test_browser import TRACEBACK, in_view, paste_into

from trainkb._present import diagnosis
from trainkb.catalogue import Catalogue
from trainkb.search import Index, search
from trainkb.search._index import build_data

OWN_OUTPUT = Path(__file__).resolve().parents[1] / "own_output"
NCCL_TIMEOUT = (Path(__file__).resolve().parents[1] / "fixtures" / "oom" / "nccl_timeout.txt").read_text(
    encoding="utf-8"
)
DDP_2RANK = (OWN_OUTPUT / "hook-ddp-unused-2rank-tee.log").read_text(encoding="utf-8")  # torchrun --tee 3, two ranks
VIEWS = [(1280, 900), (390, 844)]
# a Django traceback as its user posted it: https://github.com/DMOJ/online-judge/issues/1929
DJANGO = (Path(__file__).resolve().parents[1] / "fixtures" / "foreign" / "django_operational_error.txt").read_text(
    encoding="utf-8"
)


@pytest.fixture(params=VIEWS, ids=[f"{w}x{h}" for w, h in VIEWS])
def page(request, browser):  # type: ignore[no-untyped-def]
    """A light page at one size that fails the test on any script error."""
    width, height = request.param
    page = browser.new_page(viewport={"width": width, "height": height}, color_scheme="light")
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    yield page
    assert problems == []
    page.close()


def phone(page) -> bool:  # type: ignore[no-untyped-def]
    return page.viewport_size["width"] < 600


@pytest.mark.parametrize("paste", ["ddp", "ddp-2rank", "oom", "nccl-timeout"])
def test_the_answer_and_its_fix_fill_the_first_screen(real_site: Path, page, paste: str) -> None:  # type: ignore[no-untyped-def]
    """The NCCL timeout puts triage's ranks above the answer, and the answer's why is long: on a phone the why
    shows its first lines, and a tap shows all of it."""
    text = {
        "ddp": TRACEBACK,
        "ddp-2rank": DDP_2RANK,
        "oom": captures()["real-oom-message-fields"],
        "nccl-timeout": NCCL_TIMEOUT,
    }[paste]
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", text)
    first = page.locator("#paste-results li.result").first
    first.wait_for()
    page.wait_for_timeout(100)
    assert in_view(page, "#paste-results li.result a.entry-link")
    assert in_view(page, "#paste-results li.result .fix-line")
    if paste in ("ddp", "ddp-2rank"):
        assert first.locator("a").inner_text().startswith("D8 ")
    why = first.locator(".reason")
    if paste == "nccl-timeout":
        assert first.locator("a").inner_text().startswith("D20 ")
        shown = why.bounding_box()["height"]
        why.click()  # the whole why, on a phone too
        assert why.evaluate("n => n.scrollHeight <= n.clientHeight + 1") and why.bounding_box()["height"] >= shown


def test_the_paste_stays_out_of_the_address_bar(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "D1" / "index.html").as_uri())
    paste_into(page, "#q", TRACEBACK)  # from an entry page's header box to the search page
    page.wait_for_url("**/search/index.html")
    page.wait_for_selector("#paste-results li a")
    assert page.locator("#paste-results li a").first.inner_text().startswith("D8 ")
    assert "home" not in page.url and "Traceback" not in page.url and "paste" not in page.url
    assert page.input_value("#paste-input") == TRACEBACK
    page.locator("#paste-results li a").first.click()
    page.wait_for_url("**/D8/index.html#fix")
    page.go_back()
    page.wait_for_selector("#paste-results li a")  # Back: the same results, from the page state
    assert page.input_value("#paste-input") == TRACEBACK and "home" not in page.url
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", TRACEBACK)
    page.wait_for_selector("#paste-results li a")
    assert page.url == (real_site / "index.html").as_uri()


def test_an_unconfirmed_pick_is_marked_until_the_reader_moves_on(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", captures()["real-oom-message-fields"])
    page.wait_for_selector("#paste-results .differential li")
    ids = [t.split(" ")[0] for t in page.locator("#paste-results li.candidate a.entry-link").all_inner_texts()]
    page.locator("#paste-results li.candidate a.entry-link").first.click()
    page.wait_for_url(f"**/{ids[0]}/index.html#fix")
    note = page.locator(".unconfirmed-note")
    assert note.count() == 1 and in_view(page, ".unconfirmed-note strong")  # seen on landing at #fix
    assert f"{ids[0]} is one of {len(ids)} candidates" in note.inner_text()
    assert [t.split(" ")[0] for t in note.locator("li a").all_inner_texts()] == ids[1:]
    assert "unconfirmed" in (page.locator("#fix").get_attribute("class") or "")
    page.reload()
    assert page.locator(".unconfirmed-note").count() == 1  # the same history entry keeps the note
    note.locator("li a").first.click()  # another candidate: still one guess among the same ones
    page.wait_for_url(f"**/{ids[1]}/index.html#fix")
    assert f"{ids[1]} is one of {len(ids)} candidates" in page.locator(".unconfirmed-note").inner_text()
    page.locator(".unconfirmed-note .back-to-results").click()  # back past both candidates to the results
    page.wait_for_selector("#paste-results .differential li")
    assert page.url.endswith("/index.html") and "/M" not in page.url
    page.locator("#paste-results li.candidate a.entry-link").first.click()
    page.wait_for_url(f"**/{ids[0]}/index.html#fix")
    page.locator("#root-cause ~ * a.entry-ref, #root-cause + * a.entry-ref").first.click()  # moving on
    page.wait_for_load_state()
    assert page.locator(".unconfirmed-note").count() == 0
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", TRACEBACK)  # a confirmed answer opens unmarked
    page.locator("#paste-results li a").first.click()
    page.wait_for_url("**/D8/index.html#fix")
    assert page.locator(".unconfirmed-note").count() == 0


def test_triage_wording_agrees_with_its_rows(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", DDP_2RANK)  # both ranks raise the same error at once
    page.wait_for_selector("#paste-results .triage li", state="attached")  # folded under the verdict on a phone
    head = page.locator("#paste-results .triage .verdict").inner_text()
    roles = page.locator("#paste-results .triage li strong").all_text_contents()
    assert roles == ["rank 0 culprit: ", "rank 1 culprit: "]
    assert "suspect" not in head and head == "Ranks 0, 1 failed on their own at about the same time."


def test_advice_code_and_literal_text(real_site: Path, real_catalogue: Catalogue, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "index.html").as_uri())
    paste_into(page, "#paste-input", captures()["real-oom-message-fields"])
    advice = page.locator("#paste-results .advice").first
    advice.wait_for()
    assert "`" not in advice.inner_text() and advice.locator("code").count() >= 1
    page.goto((real_site / "M1" / "index.html").as_uri())
    # the "tell the siblings apart" paragraph: every sibling id a link
    linked = set(page.locator("#root-cause ~ p a.entry-ref, #symptom ~ p a.entry-ref").all_inner_texts())
    assert {"M2", "M3", "M4", "M5", "M6", "M7"} <= linked
    shown = page.locator(".signatures li > code").all_inner_texts()
    assert shown == [s.example.strip() for s in real_catalogue.entries["M1"].signatures]  # two spaces kept
    page.goto((real_site / "G1" / "index.html").as_uri())
    shown = page.locator(".signatures li > code").all_inner_texts()
    assert shown == [s.example.strip() for s in real_catalogue.entries["G1"].signatures]  # line breaks kept


def test_header_list_by_keyboard(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "D1" / "index.html").as_uri())
    page.keyboard.press("/")
    page.keyboard.type("unused param")
    page.wait_for_selector("#q-results li a")
    links = page.locator("#q-results li a")

    def focused() -> str:
        return str(page.evaluate("document.activeElement.id || document.activeElement.getAttribute('href')"))

    page.keyboard.press("ArrowDown")
    assert focused() == links.nth(0).get_attribute("href")
    page.keyboard.press("ArrowDown")
    assert focused() == links.nth(1).get_attribute("href")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")
    assert focused() == "q"
    page.keyboard.press("Escape")
    assert page.locator("#q-results").is_hidden() and focused() == "q"
    page.keyboard.type("s")
    page.wait_for_selector("#q-results li a")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")
    assert page.locator("#q-results").is_hidden() and focused() == "q"
    page.keyboard.press("ArrowDown")  # closed: Down does not reopen it behind the reader's back
    assert focused() == "q"
    page.keyboard.type("m")
    page.wait_for_selector("#q-results li a")
    target = links.nth(0).get_attribute("href")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_url("**/" + str(target).split("../")[-1])


def _luminance(rgb: str) -> float:
    parts = [int(x) / 255 for x in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in parts]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def _contrast(a: str, b: str) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_fix_card_code_stands_out_and_copy_covers_none_of_it(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "D8" / "index.html").as_uri())
    colours = page.evaluate("""() => {
        const card = getComputedStyle(document.getElementById('fix'));
        const pre = getComputedStyle(document.querySelector('#fix pre'));
        return [card.backgroundColor, pre.backgroundColor, pre.borderTopColor, pre.borderTopWidth]; }""")
    card, inside, edge, width = colours
    edged = float(width.removesuffix("px")) >= 1 and _contrast(card, edge) >= 1.5
    assert edged or _contrast(card, inside) >= 1.5, colours
    for n in range(page.locator("pre.highlight").count()):
        pre = page.locator("pre.highlight").nth(n)
        if not pre.is_visible():
            continue
        gap = pre.evaluate("""pre => {
            const b = pre.querySelector('button.copy').getBoundingClientRect();
            const lines = [...pre.querySelector('code').getClientRects()];
            return Math.min(...lines.map(r => r.top)) - b.bottom; }""")
        assert gap >= 0, n  # the button sits above the first line of code, not on it


def test_copy_diagnosis_puts_markdown_on_the_clipboard(real_site: Path, page) -> None:  # type: ignore[no-untyped-def]
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("""() => {  // what reaches the clipboard, by either of the page's two ways of copying
        if (navigator.clipboard) navigator.clipboard.writeText = t => { window.copied = t; return Promise.resolve(); };
        document.addEventListener('copy', e => { window.copied = e.target.value; }, true); }""")
    paste_into(page, "#paste-input", TRACEBACK)
    page.locator("#paste-results .copy-diagnosis").click()
    copied = page.wait_for_function("() => window.copied").json_value()
    assert copied.startswith("trainkb answer, high confidence")
    assert '**D8: DDP: "Expected to have finished reduction' in copied
    assert "(answer, high)" in copied
    assert "- Evidence, line 4: `RuntimeError: Expected to have finished reduction" in copied
    assert "- Fix: " in copied and "`find_unused_parameters=True`" in copied
    assert "`kb show D8`" in copied  # from disk: the entry by id, not a file path with a home folder in it
    assert "/home/me" not in copied


def test_copy_diagnosis_of_a_differential_lists_every_candidate(
    real_site: Path, real_catalogue: Catalogue, page
) -> None:  # type: ignore[no-untyped-def]
    """The bare OOM message: several causes print it, so the Markdown names the line once, then each candidate
    with its title, its sign, its fix and where to read it: what `d` copies in the TUI (trainkb._present)."""
    oom = oom_line(captures()["real-oom-message-fields"])
    response = search(oom, top=5, catalogue=Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash())))
    assert response.status == "differential" and response.candidates >= 2
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("""() => {
        if (navigator.clipboard) navigator.clipboard.writeText = t => { window.copied = t; return Promise.resolve(); };
        document.addEventListener('copy', e => { window.copied = e.target.value; }, true); }""")
    paste_into(page, "#paste-input", oom)
    page.locator("#paste-results .copy-diagnosis").click()
    copied = page.wait_for_function("() => window.copied").json_value()
    assert copied == diagnosis(response, lambda _: None)
    assert copied.count("- Evidence, line 1: `torch.OutOfMemoryError: CUDA out of memory") == 1
    for result in response.results[: response.candidates]:
        assert f"**{result.id}: {result.title}** (candidate)" in copied
        assert result.tell is not None and result.tell.says in copied
        assert f"- Fix: {result.fix_summary}" in copied and f"`kb show {result.id}`" in copied


def test_a_traceback_from_another_stack_is_named_not_matched(real_site: Path, real_catalogue: Catalogue, page) -> None:  # type: ignore[no-untyped-def]
    """A Django error is not a training failure: both engines say where it comes from and list no entry."""
    index = Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash()))
    want = search(DJANGO, top=5, catalogue=index).to_json()
    assert want["status"] == "unknown" and want["results"] == []
    assert want["advice"].startswith("This traceback comes from `django`")
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")
    got = page.evaluate("t => window.TrainkbSearch.paste(t, 5)", DJANGO)
    assert {k: got[k] for k in want} == want
    paste_into(page, "#paste-input", DJANGO)
    page.wait_for_selector("#paste-results .advice")
    assert page.locator("#paste-results li").count() == 0
    advice = page.locator("#paste-results .advice")
    assert advice.locator("code").inner_text() == "django" and "training failures only" in advice.inner_text()
    # a torch traceback through installed packages is still a training failure
    torch_frames = DJANGO.replace("django/db", "torch/nn").replace("django.db.utils.OperationalError", "RuntimeError")
    assert search(torch_frames, top=5, catalogue=index).results
