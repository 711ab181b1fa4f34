"""Search agrees with triage on real multi-rank logs: a silent rank's peers' teardown is not the answer.

The fixtures are 2-rank NCCL runs captured on GPUs (tests/triage/fixtures/nccl/). Where one rank
stops without an error and the other times out in a collective, the victim's watchdog abort
(SIGABRT, `Fatal Python error: Aborted`) and torchrun's summary naming it used to put D26 ("worker
crashed in native code") first; now the hang's entries lead and the advice names the silent rank.
Runs where one rank failed with its own error are read without the other ranks' lines and their
blocks of torchrun's summary, so search leads with the entry triage names for the culprit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainkb.search import search
from trainkb.search._ranks import RANKS
from trainkb.triage import triage_text

ROOT = Path(__file__).resolve().parents[2]
NCCL = ROOT / "tests" / "triage" / "fixtures" / "nccl"
HANG_FAMILY = {"D19", "D20", "D21", "D22"}  # a collective that never completes: desync, a diverged or stalled rank
NOTE_START = RANKS.note.split("{", 1)[0]
SILENT_NOTE = RANKS.note.split("{culprit}")[1].split("{victims}")[0]  # " printed no error of its own while "
OWN_NOTE = RANKS.own_note.split("{culprit}")[1].split("{victims}")[0]  # " failed first with an error of its own and "
SIGNAL_NOTE = RANKS.signal_note.split("{culprit}")[1].split("{victims}")[0]  # " was killed by a signal first and "
ANY = {"answered", "differential", "unknown"}  # a tell of the hang's entries may decide it; triage's note stays

# fixture -> (statuses allowed, the first entry or the set it belongs to, the silent rank or None)
EXPECTED: dict[str, tuple[set[str], set[str], int | None]] = {
    "collective-n2-r0": ({"answered"}, {"D19"}, None),
    "collective-n2-r1": ({"answered"}, {"D19"}, None),
    "exit-n2-r0": (ANY, HANG_FAMILY, 0),
    "exit-n2-r1": (ANY, HANG_FAMILY, 1),
    "hang-n2-r0": (ANY, HANG_FAMILY, 0),
    "hang-n2-r1": (ANY, HANG_FAMILY, 1),
    "nan-n2-r0": ({"unknown"}, {"P14"}, None),
    "nan-n2-r1": ({"unknown"}, {"P14"}, None),
    "raise-n2-r0": ({"answered"}, {"M6"}, None),
    "raise-n2-r1": ({"answered"}, {"M6"}, None),
    "sigkill-n2-r0": ({"differential"}, {"D25"}, None),
    "sigkill-n2-r1": ({"differential"}, {"D25"}, None),
}


def test_every_nccl_fixture_is_listed() -> None:
    assert sorted(p.name for p in NCCL.iterdir() if (p / "combined.log").is_file()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_search_follows_triage(name: str) -> None:
    statuses, first, silent = EXPECTED[name]
    text = (NCCL / name / "combined.log").read_text(encoding="utf-8")
    response = search(text)
    assert response.status in statuses, (response.status, [r.id for r in response.results[:5]])
    assert response.results[0].id in first, [r.id for r in response.results[:5]]
    shown = response.advice if response.abstained else response.why
    if silent is None:
        assert SILENT_NOTE not in (shown or "")
        return
    # the victim's teardown drives nothing: D26 is neither first nor a candidate, and no evidence is a SIGABRT
    assert "D26" not in [r.id for r in response.results[: max(response.candidates, 1)]]
    assert not any("SIGABRT" in e.text or "Aborted" in e.text for r in response.results for e in r.evidence)
    assert shown is not None and f"{NOTE_START}rank {silent} printed no error of its own" in shown
    # the advice asks for no traceback that a silent rank never printed
    assert "Paste the traceback" not in shown


def test_the_tail_of_a_longer_output_keeps_its_line_numbers() -> None:
    """`kb run` passes the tail with the number of its first line: the timeout line is still the one kept."""
    text = (NCCL / "hang-n2-r1" / "combined.log").read_text(encoding="utf-8")
    whole = search(text)
    tail = search(text, first_line=101)
    assert [r.id for r in tail.results] == [r.id for r in whole.results]
    assert whole.results[1].evidence
    assert [e.line - 100 for e in tail.results[1].evidence] == [e.line for e in whole.results[1].evidence]


def test_a_single_process_paste_is_not_triaged() -> None:
    text = (NCCL.parents[2] / "fixtures" / "oom" / "m1_activations.txt").read_text(encoding="utf-8")
    response = search(text)
    assert response.status == "answered" and response.results[0].id == "M1"
    assert NOTE_START not in (response.why or "")


GLOO = NCCL.parent / "gloo"
OWN_ERROR = [GLOO / f"{name}/combined.log" for name in ("sigkill-n3-r0", "raise-n3-r1", "nan-n4-r0")] + [
    NCCL / f"{name}/combined.log" for name in ("sigkill-n2-r0", "sigkill-n2-r1", "raise-n2-r1", "nan-n2-r0")
]


@pytest.mark.parametrize("log", OWN_ERROR, ids=[f"{p.parent.parent.name}-{p.parent.name}" for p in OWN_ERROR])
def test_search_leads_with_the_entry_triage_names_for_the_culprit(log: Path) -> None:
    """One rank failed with its own error: the first result (or candidate) is triage's entry for it."""
    text = log.read_text(encoding="utf-8")
    triage = triage_text(text)
    assert triage is not None and triage.basis == "own-error" and triage.entry is not None
    response = search(text)
    assert response.results[0].id == triage.entry["id"], [r.id for r in response.results[:4]]
    shown = (response.advice if response.abstained else response.why) or ""
    verdict = triage.verdict()
    said = SIGNAL_NOTE if verdict is not None and verdict.how == "signal" else OWN_NOTE
    assert f"{NOTE_START}rank {triage.sole_culprit}{said}" in shown


def test_a_killed_rank_leads_with_the_torchrun_entry_not_a_peers_lost_connection() -> None:
    """gloo, 3 ranks, rank 0 SIGKILLed: rank 2's "Connection reset by peer" (its own lines and its block of the
    summary) used to put D20 first; the killed rank's summary leads now, D25 before the generic M8."""
    text = (GLOO / "sigkill-n3-r0" / "combined.log").read_text(encoding="utf-8")
    assert "Connection reset by peer" in text
    response = search(text)
    assert response.status == "differential"
    assert [r.id for r in response.results[: response.candidates]] == ["D25", "M8"]
    assert not any("Connection reset" in e.text for r in response.results for e in r.evidence)


@pytest.mark.parametrize(
    ("log", "aborts"),
    [(NCCL / "hang-n2-r1" / "combined.log", True), (NCCL.parent / "gloo" / "hang-n4-r1" / "combined.log", False)],
    ids=["nccl", "gloo"],
)
def test_the_note_names_aborts_only_where_the_log_shows_them(log: Path, aborts: bool) -> None:
    """NCCL's watchdog aborts its rank (SIGABRT); gloo's timed-out ranks are stopped by torchrun (SIGTERM)."""
    text = log.read_text(encoding="utf-8")
    assert ("SIGABRT" in text) is aborts
    response = search(text)
    shown = (response.advice if response.abstained else response.why) or ""
    assert NOTE_START in shown
    assert ("the aborts (SIGABRT)" in shown) is aborts


LOGS = sorted((NCCL.parent / "gloo").glob("*/combined.log")) + sorted(NCCL.glob("*/combined.log"))


@pytest.mark.parametrize("log", LOGS, ids=[f"{p.parent.parent.name}-{p.parent.name}" for p in LOGS])
def test_advice_promises_candidates_only_with_a_differential(log: Path) -> None:
    """One entry known for a line several causes print is named; "each candidate names the sign" needs candidates."""
    response = search(log.read_text(encoding="utf-8"))
    advice = response.advice or ""
    if response.status != "differential":
        assert "Each candidate names" not in advice, advice
    if "the catalogue covers one of them" in advice:
        assert f"one of them, {response.results[0].id}," in advice


def test_a_gloo_hang_is_a_differential_holding_the_stalled_rank_entry() -> None:
    """gloo, 4 ranks, rank 1 stops calling collectives: the others time out on their recv or send. D20 claims
    those lines, so the paste is a differential with D20 (not "no confident match", with D28 above D20)."""
    text = (GLOO / "hang-n4-r1" / "combined.log").read_text(encoding="utf-8")
    assert "for send operation to complete" in text and "for recv operation to complete" in text
    response = search(text)
    ids = [r.id for r in response.results]
    assert response.status == "differential"
    assert "D20" in ids[: response.candidates]
    assert "D28" not in ids or ids.index("D20") < ids.index("D28")
    assert response.advice is not None and f"{NOTE_START}rank 1{SILENT_NOTE}" in response.advice


def test_a_culprit_that_timed_out_too_is_behind_not_silent() -> None:
    """A public NCCL excerpt (F5-TTS issue 346): both ranks print the watchdog timeout, rank 1 at the earlier
    SeqNum. The note must not call rank 1 silent, nor list it among the ranks that waited for it."""
    row = next(
        json.loads(line)
        for line in (ROOT / "benchmarks" / "real_failures.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["id"] == "rf-a-134"
    )
    response = search(row["text"])
    shown = (response.advice if response.abstained else response.why) or ""
    assert "printed no error of its own" not in shown
    assert "rank 1 timed out too, but it is behind rank 0 in the collective sequence" in shown
    assert "ranks 0, 1" not in shown


def test_a_rank_killed_by_a_signal_is_worded_as_killed() -> None:
    """torchrun's summary shows rank 1 got SIGKILL: neither triage nor search calls that an error of its own."""
    from trainkb.triage import to_json, to_text

    text = (NCCL / "sigkill-n2-r1" / "combined.log").read_text(encoding="utf-8")
    triage = triage_text(text)
    assert triage is not None
    assert to_json(triage)["reason"] == "it was killed by SIGKILL"
    assert "rank 1 broke first — it was killed by SIGKILL" in to_text(triage)
    shown = search(text).advice or ""
    assert "rank 1 was killed by a signal first and rank 0 only went down with it" in shown
    assert OWN_NOTE not in shown


def test_a_gloo_hang_is_not_told_to_look_for_nccl_only_signs() -> None:
    """The 4-rank gloo hang prints no NCCL counters and has no NCCL flight recorder: a candidate's sign or fix that
    only NCCL can show says so, and the DETAIL switch is offered for gloo."""
    text = (GLOO / "hang-n4-r1" / "combined.log").read_text(encoding="utf-8")
    response = search(text)
    shown = response.results[: max(response.candidates, 1)]
    assert {r.id for r in shown} >= {"D19", "D20"}
    for result in shown:
        for said in (result.tell.says if result.tell else "", result.fix_summary):
            if "enqueued" in said or "flight recorder" in said:
                assert "NCCL's" in said or "on NCCL" in said, (result.id, said)
    d19 = next(r for r in shown if r.id == "D19")
    assert "gloo" in d19.fix_summary and d19.tell is not None and "gloo" in d19.tell.says


def test_ranks_in_a_row_are_written_as_a_range():
    """A job of 5,000 ranks named every victim, one 29,000-character line of advice."""
    from trainkb.search._ranks import _ranks

    assert _ranks([4]) == "rank 4"
    assert _ranks([0, 1]) == "ranks 0, 1"
    assert _ranks([0, 1, 2, 3, 5, 7, 8, 9]) == "ranks 0–3, 5, 7–9"
    assert _ranks([r for r in range(5000) if r != 4321]) == "ranks 0–4320, 4322–4999"
