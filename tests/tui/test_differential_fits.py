"""A differential of ANSWER.max_candidates entries fits the entry pane at 120×40: each candidate's head, sign and fix
on screen with no scrolling, pasted through Textual's real input parser, against the real catalogue.

The candidates are real records (the CUDA OOM family M1–M5, and the five entries whose sign and fix are
longest, the worst case), each with its first tell and one-line fix as search gives them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_flows import bracketed_paste
from textual.widgets import Static

from trainkb.search import SearchResponse, SearchResult, get_index
from trainkb.search._policy import ANSWER
from trainkb.search._search import Tell
from trainkb.tui import TrainKBApp
from trainkb.tui._entry import EntryView

ROOT = Path(__file__).resolve().parents[2]
OOM = ROOT / "tests/fixtures/oom/m1_activations.txt"
PASTES = {
    "cuda-oom": OOM,
    "nccl-timeout": ROOT / "tests/triage/fixtures/nccl/hang-n2-r1/combined.log",
    "inplace": ROOT / "tests/fixtures/oom/a3_inplace.txt",
}
SIZE = (120, 40)


def _oom_line() -> str:
    """The real OOM's exception line alone: the message all of M1–M7 print, with nothing that tells them apart."""
    return next(line for line in OOM.read_text(encoding="utf-8").splitlines() if "OutOfMemoryError" in line)


def _differential(ids: list[str]) -> SearchResponse:
    """A differential of these real entries, each with its first tell and its fix, as search lists candidates."""
    index = get_index()
    results = []
    for entry_id in ids:
        n = next(i for i, e in enumerate(index.entries) if e["id"] == entry_id)
        entry, tells = index.entries[n], index.tells.get(n, [])
        tell = Tell(tells[0]["says"], False) if tells else None
        results.append(
            SearchResult(entry["id"], entry["title"], entry["area"], 40.0, "low", [], entry["fix_summary"], None, tell)
        )
    return SearchResponse("traceback", True, results, None, _oom_line(), "differential", None, len(results))


def _longest() -> list[str]:
    index = get_index()
    size = {
        e["id"]: len(e["fix_summary"]) + len(index.tells[n][0]["says"]) + len(e["title"])
        for n, e in enumerate(index.entries)
        if index.tells.get(n)
    }
    return sorted(size, key=lambda i: (-size[i], i))[: ANSWER.max_candidates]


def _all_on_screen(app: TrainKBApp) -> None:
    """Every candidate's lines lie inside the pane and the terminal; the pane does not scroll."""
    detail = app.query_one("#detail", EntryView)
    pane = detail.region
    assert detail.max_scroll_y == 0, f"the pane scrolls by {detail.max_scroll_y} rows"
    for widget in detail.query(".candidate Static"):
        region = widget.region
        assert region.height > 0 and pane.y < region.y and region.bottom <= pane.bottom - 1 <= SIZE[1] - 1


async def _show(app: TrainKBApp, pilot, response: SearchResponse) -> None:  # type: ignore[no-untyped-def]
    detail = app.query_one("#detail", EntryView)
    await detail.show_diagnosis(response)
    await pilot.pause(0.2)


# one Pilot app per case: the longest candidates in `make quick`, the OOM family in `make test` too
@pytest.mark.parametrize("which", [pytest.param("oom-family", marks=pytest.mark.slow), "longest"])
async def test_five_candidates_fit_without_scrolling(real_app: TrainKBApp, which: str) -> None:
    ids = ["M1", "M2", "M3", "M4", "M5"] if which == "oom-family" else _longest()
    app = real_app
    async with app.run_test(size=SIZE) as pilot:
        await bracketed_paste(pilot, app, _oom_line())  # the real message first, through the input parser
        await _show(app, pilot, _differential(ids))
        heads = [str(w.render()) for w in app.query(".candidate-head")]
        assert [h.split(" · ")[0] for h in heads] == ids
        assert len(app.query(".candidate-fix")) == ANSWER.max_candidates
        _all_on_screen(app)


# One Pilot app per paste: the OOM in `make quick`; the NCCL timeout and the in-place error, pastes of the
# same kind, in `make test` too
@pytest.mark.parametrize(
    "name", [n if n == "cuda-oom" else pytest.param(n, marks=pytest.mark.slow) for n in sorted(PASTES)]
)
async def test_real_pastes_fill_the_pane_within_the_screen(real_app: TrainKBApp, name: str) -> None:
    """A real CUDA OOM, the NCCL timeout and an in-place autograd error, pasted as a terminal sends them."""
    app = real_app
    async with app.run_test(size=SIZE) as pilot:
        await bracketed_paste(pilot, app, PASTES[name].read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and response.results
        detail = app.query_one("#detail", EntryView)
        assert not str(app.query_one("#title", Static).render()).startswith("Nothing selected")
        if response.status == "answered":  # its fix and why under the title, at the top of the pane
            assert app.current_entry == response.results[0].id
            summary = app.query_one("#summary", Static)
            assert "Fix:" in str(summary.render()) and detail.scroll_offset.y == 0
            assert summary.region.height > 0 and summary.region.bottom <= detail.region.bottom - 1
        elif response.status == "differential":
            assert len(app.query(".candidate-fix")) == response.candidates
            _all_on_screen(app)
        else:  # unknown: the advice (naming the silent rank for the NCCL hang) and the closest entries
            summary = app.query_one("#summary", Static)
            assert response.advice and summary.region.height > 0
            assert summary.region.bottom <= detail.region.bottom - 1
            if name == "nccl-timeout":
                assert "rank 1 printed no error of its own" in str(summary.render())


# a Pilot app of its own: the bare OOM line's candidates fit the pane in
# test_five_candidates_fit_without_scrolling[longest] and
# test_real_pastes_fill_the_pane_within_the_screen[cuda-oom] (quick)
@pytest.mark.slow
async def test_the_bare_oom_message_lists_its_candidates(real_app: TrainKBApp) -> None:
    """The OOM message alone: several M entries print it, so the pane lists them with signs and fixes."""
    app = real_app
    async with app.run_test(size=SIZE) as pilot:
        await bracketed_paste(pilot, app, _oom_line())
        response = app.current_response
        assert response is not None and response.status == "differential" and response.candidates >= 2
        heads = [str(w.render()).split(" · ")[0] for w in app.query(".candidate-head")]
        assert heads == [r.id for r in response.results[: response.candidates]]
        _all_on_screen(app)


async def test_the_matches_are_wrapped_to_the_width_left_by_their_scrollbar(real_app: TrainKBApp) -> None:
    """The candidates overflow the Matches pane, so its scrollbar takes two columns without a resize; every
    option must still be wrapped to the width that is left, or its last line is cut off the list."""
    from trainkb.tui._results import ResultsList

    app = real_app
    async with app.run_test(size=SIZE) as pilot:
        await bracketed_paste(pilot, app, _oom_line())
        results = app.query_one("#results", ResultsList)
        assert results.show_vertical_scrollbar
        width = results.scrollable_content_region.width
        prompts = [results.get_option_at_index(i).prompt for i in range(results.option_count)]
        rows = sum(len(prompt.wrap(app.console, width)) for prompt in prompts)
        assert results.virtual_size.height == rows
