"""`--top 1` on a line several causes print: the differential keeps every candidate (2 to 5, as the
JSON contract says), and the text lists them all under its "what decides" heading."""

from __future__ import annotations

import json
import subprocess
import sys

from trainkb.search import search

# the watchdog line torch prints (D19's signature example); D19 and D20 both print it
WATCHDOG = (
    "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, "
    "NumelOut=1, Timeout(ms)=600000) ran for 600010 milliseconds before timing out."
)


def test_a_differential_is_never_cut_below_two_candidates() -> None:
    whole = search(WATCHDOG, top=10)
    assert whole.status == "differential" and whole.candidates >= 2
    for top in (1, 2):
        cut = search(WATCHDOG, top=top)
        assert cut.status == "differential"
        assert cut.candidates == whole.candidates
        assert [r.id for r in cut.results] == [r.id for r in whole.results][: max(top, whole.candidates)]


def test_kb_search_top_1_json_and_text_show_every_candidate() -> None:
    run = [sys.executable, "-m", "trainkb.cli", "search", "--top", "1"]
    data = json.loads(subprocess.run([*run, "--json", WATCHDOG], capture_output=True, text=True).stdout)
    assert data["status"] == "differential" and 2 <= data["candidates"] <= 5
    ids = [r["id"] for r in data["results"][: data["candidates"]]]
    text = subprocess.run([*run, WATCHDOG], capture_output=True, text=True).stdout
    assert "what decides between them" in text
    assert all(f"  {i} " in text or f"  {i}  " in text for i in ids), text
