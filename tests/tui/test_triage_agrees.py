"""Pilot test (through Textual's real input parser): on a torchrun log where one rank was SIGKILLed, the Ranks
panel's entry for the culprit and the first match are the same entry, the torchrun one (D25), not the generic
host-OOM entry (M8) or a victim's lost connection (D20)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_flows import bracketed_paste

from trainkb.tui import TrainKBApp
from trainkb.tui._triage import TriagePanel

FIXTURES = Path(__file__).resolve().parents[1] / "triage" / "fixtures"
KILLED = [FIXTURES / "gloo/sigkill-n3-r0/combined.log", FIXTURES / "nccl/sigkill-n2-r1/combined.log"]


# one Pilot app per log: the two-rank NCCL log in `make quick`, the three-rank gloo one in `make test` too
@pytest.mark.parametrize(
    "log", [pytest.param(KILLED[0], marks=pytest.mark.slow), KILLED[1]], ids=["gloo-3-ranks", "nccl-2-ranks"]
)
async def test_the_ranks_panel_and_the_first_match_name_one_entry(real_app: TrainKBApp, log: Path) -> None:
    app = real_app
    async with app.run_test(size=(120, 40)) as pilot:
        await bracketed_paste(pilot, app, log.read_text(encoding="utf-8"))
        response = app.current_response
        assert response is not None and response.results
        panel = app.query_one("#triage", TriagePanel)
        assert panel.display
        assert response.results[0].id == "D25", [r.id for r in response.results[:4]]
        assert "→ D25" in panel.render_text().plain
