"""Real crashes pasted into the TUI against the real catalogue: the entry pane always says what is known.

An answer opens its entry with why it and not its siblings; a symptom several causes print fills
the pane with the candidates, what decides between them and each fix; neither leaves the pane
empty or needs scrolling at 120×40. The pastes are real output: the checks' captures in the
committed reports and a 2-rank NCCL hang captured by the triage fixtures.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_flows import bracketed_paste, visible
from textual.widgets import Markdown, Static

from trainkb.tui import TrainKBApp
from trainkb.tui._entry import EntryView

ROOT = Path(__file__).resolve().parents[2]


def _capture(report: str, entry: str, check: str) -> str:
    rows = json.loads((ROOT / "reports" / report).read_text(encoding="utf-8"))["results"]
    return next(r["evidence"] for r in rows if r["entry"] == entry and r["check"] == check)


PASTES = {
    "cuda-oom": lambda: _capture("cuda-NVIDIA-H200-x2-torch2.11.0.json", "M1", "real-oom-message-fields"),
    "inplace": lambda: _capture("cpu-torch2.13.0.json", "A3", "inplace-relu-after-sigmoid-raises"),
}
NCCL_HANG = ROOT / "tests/triage/fixtures/nccl/hang-n2-r1/combined.log"


# Pilot apps of their own: the same kinds of paste (an OOM, an in-place autograd error) at the same size fill
# the pane in test_differential_fits.py's test_real_pastes_fill_the_pane_within_the_screen (quick)
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PASTES))
async def test_entry_pane_answers_or_lists_the_differential(real_app: TrainKBApp, name: str) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, PASTES[name]())
        response = app.current_response
        assert response is not None and response.status in ("answered", "differential"), response and response.status
        detail = app.query_one("#detail", EntryView)
        title = str(app.query_one("#title", Static).render())
        assert not title.startswith("Nothing selected")
        if response.status == "answered":  # the answer, why it and its fix are on screen; the entry reads on below
            assert app.current_entry == response.results[0].id
            assert "Why this entry" in str(app.query_one("#summary", Static).render())
            assert visible(app, "#summary") and detail.scroll_offset.y == 0
        else:
            assert detail.border_title == "Differential"
            heads = [str(w.render()).split(" · ")[0] for w in app.query(".candidate-head")]
            assert heads == [r.id for r in response.results[: response.candidates]]
            assert all(str(w.render()).startswith("Fix: ") for w in app.query(".candidate-fix"))
            assert detail.max_scroll_y == 0  # every candidate, its sign and its fix on screen, no scrolling


# a Pilot app of its own: the same NCCL hang at the same size is test_differential_fits.py's
# test_real_pastes_fill_the_pane_within_the_screen[nccl-timeout] (quick)
@pytest.mark.slow
async def test_an_unexplained_nccl_hang_still_fills_the_pane(real_app: TrainKBApp) -> None:
    """A 2-rank watchdog timeout where one rank stopped issuing collectives: no entry is confirmed yet, and the
    pane says so with what would help and the closest entries instead of staying empty."""
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, NCCL_HANG.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and response.results
        title = str(app.query_one("#title", Static).render())
        assert not title.startswith("Nothing selected")
        if response.status == "unknown":
            source = app.query_one("#doc", Markdown).source
            assert f"**{response.results[0].id}**" in source
            assert response.advice and visible(app, "#summary")
