"""`d` on a differential: the entry pane lists candidates, not one entry, and the Markdown on the clipboard says
the same: the evidence line, then each candidate with its title, its sign, its fix and its page (the words of
trainkb._present.diagnosis, which the site's button writes too). Pasted through Textual's real input parser."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_flows import bracketed_paste, settle

from trainkb._present import diagnosis, view
from trainkb.tui import TrainKBApp

ROOT = Path(__file__).resolve().parents[2]
OOM = ROOT / "tests/fixtures/oom/m1_activations.txt"


@pytest.fixture
def real_app(real_app: TrainKBApp, monkeypatch: pytest.MonkeyPatch) -> TrainKBApp:
    """The session's app over the bundled catalogue, with its pages at a site address (read when a link is made)."""
    monkeypatch.setenv("TRAINKB_SITE_URL", "https://kb.example.org")
    return real_app


def _oom_line() -> str:
    """The real OOM's exception line alone: the message all of M1–M7 print, with nothing that tells them apart."""
    return next(line for line in OOM.read_text(encoding="utf-8").splitlines() if "OutOfMemoryError" in line)


# one Pilot app per case: one case in `make quick`, the rest in `make test` too
@pytest.mark.parametrize("size", [pytest.param((120, 40), marks=pytest.mark.slow), (80, 24)], ids=["120x40", "80x24"])
async def test_d_copies_the_differential(real_app: TrainKBApp, size: tuple[int, int]) -> None:
    app = real_app
    async with app.run_test(size=size) as pilot:
        await bracketed_paste(pilot, app, _oom_line())
        response = app.current_response
        assert response is not None and response.status == "differential" and app.current_entry is None
        keys = {key.description: key for key in app.query("FooterKey")}
        assert not keys["Copy diagnosis"].has_class("-disabled")  # not dimmed: there is something to copy
        await pilot.press("d")
        await pilot.pause()
        copied = app.clipboard
        shown = view(response)
        assert copied == diagnosis(response, lambda i: f"https://kb.example.org/{i}/")
        assert copied.startswith(f"trainkb: {shown.headline}\n- Evidence, line 1: `torch.OutOfMemoryError: CUDA")
        for row in shown.rows[: shown.leads]:
            result = row.result
            assert result.tell is not None
            block = copied.split(f"**{result.id}: {result.title}** (candidate)\n", 1)[1].split("\n\n", 1)[0]
            assert f"Look for: {result.tell.says}" in block or f"In the paste: {result.tell.says}" in block
            assert f"- Fix: {result.fix_summary}" in block
            assert f"- Entry: https://kb.example.org/{result.id}/" in block
        message = str(list(app._notifications)[-1].message)
        assert message.startswith("Copied a Markdown diagnosis naming " + shown.rows[0].result.id)


# `d` is driven in `make quick` by test_d_copies_the_differential[80x24]; an entry read on its own in `make test`
@pytest.mark.slow
async def test_d_on_an_entry_read_on_its_own_names_it_without_a_file_path(
    real_app: TrainKBApp, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opened by id, no paste behind it: the entry, its fix and its page; a local site is a path, not a link."""
    monkeypatch.delenv("TRAINKB_SITE_URL")
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        app.jump("M1")
        await settle(pilot, app)
        await pilot.press("d")
        await pilot.pause()
        entry = app.kb.catalogue.entries["M1"]
        assert app.clipboard == (
            f"**M1: {entry.title}** (read on its own, not matched against a paste)\n"
            f"- Fix: {entry.fix_summary}\n- Entry: M1 in the trainkb catalogue (`kb show M1`)\n"
        )
