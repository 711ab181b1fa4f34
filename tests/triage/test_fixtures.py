"""Triage of captured real runs (gloo on CPU, NCCL on two GPUs): the right rank, for the right reason.

Each fixture folder holds what torchrun printed (combined.log) and its --log-dir; both inputs
must name the faulty rank. Two ranks entering different collectives are symmetric: triage
must name both as suspects, never one of them alone.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from captures import FIXTURES, captures, expected

from trainkb.cli import main
from trainkb.triage import to_json, to_text, triage_path, triage_text

# an early exit is silent, except on rank 0 under gloo, which can abort at exit (faulthandler's SIGABRT)
BASIS = {
    "raise": "own-error",
    "sigkill": "own-error",
    "nan": "own-error",
    "exit": {"silent", "own-error"},
    "hang": {"silent", "behind"},
    "collective": "mismatch",
}
ALL = [pytest.param(p, id=f"{p.parent.name}/{p.name}") for b in ("gloo", "nccl") for p in captures(b)]


def _check(triage, fault: str, n: int, k: int, log_dir: bool = False) -> None:  # type: ignore[no-untyped-def]
    assert triage is not None
    if log_dir and fault == "sigkill" and triage.sole_culprit is None:
        # no summary: a SIGKILLed rank leaves nothing, like a peer the launcher stopped quietly;
        # triage must then say it cannot tell, and what to keep next time
        assert triage.basis in ("silent", "none") and triage.collect, to_text(triage)
        assert triage.basis == "none" or k in triage.culprits, to_text(triage)
        return
    assert sorted(v.rank for v in triage.ranks) == list(range(n))
    want = BASIS[fault]
    assert triage.basis in (want if isinstance(want, set) else {want}), to_text(triage)
    if fault == "collective" and n == 2:
        assert triage.culprits == [0, 1] and triage.sole_culprit is None, to_text(triage)
    else:
        assert triage.culprits == [k], to_text(triage)
    for v in triage.ranks:
        if v.rank != k:
            allowed = {"victim", "suspect"} if fault == "collective" else {"victim", "unharmed"}
            assert v.role in allowed, to_text(triage)


@pytest.mark.parametrize("capture", ALL)
def test_combined_output_names_the_faulty_rank(capture: Path) -> None:
    fault, n, k = expected(capture.name)
    _check(triage_text((capture / "combined.log").read_text(encoding="utf-8"), match=False), fault, n, k)


@pytest.mark.parametrize("capture", ALL)
def test_log_dir_names_the_faulty_rank(capture: Path) -> None:
    fault, n, k = expected(capture.name)
    _check(triage_path(capture / "logs", match=False), fault, n, k, log_dir=True)


def test_rank0_exit_abort_is_its_own_signal() -> None:
    """gloo, rank 0 calls sys.exit(0) mid-training and aborts at exit: its stderr's faulthandler line names it.

    Only torchrun's summary gave its exit code (-6); from --log-dir alone, the rank the launcher stopped before
    it printed looked the same as rank 0 until the "Fatal Python error: Aborted" line was read.
    """
    capture = FIXTURES / "gloo" / "exit-n3-r0"
    for triage in (
        triage_path(capture / "logs", match=False),
        triage_text((capture / "combined.log").read_text(encoding="utf-8"), match=False),
    ):
        assert triage is not None and triage.sole_culprit == 0, to_text(triage)
        culprit = triage.verdict()
        assert culprit is not None and culprit.how == "signal" and culprit.error == "Fatal Python error: Aborted"


def test_nccl_watchdog_abort_stays_a_victim() -> None:
    """The same faulthandler line after the NCCL watchdog's timeout is a victim's abort, not an own failure."""
    triage = triage_path(FIXTURES / "nccl" / "hang-n2-r1" / "logs", match=False)
    assert triage is not None and triage.culprits == [1], to_text(triage)
    assert next(v for v in triage.ranks if v.rank == 0).role == "victim"


def test_one_mismatch_error_implies_the_majority() -> None:
    """Only rank 0's mismatch error kept (its peers stopped before printing): it names rank 2 as the first rank
    that differs, so rank 1 runs rank 0's collective and rank 2 is the odd one out."""
    log = (FIXTURES / "gloo" / "collective-n3-r2" / "combined.log").read_text(encoding="utf-8")
    only0 = "".join(line for line in log.splitlines(keepends=True) if line.startswith("[default0]:"))
    assert "but Rank 2 is running" in only0
    triage = triage_text(only0 + "[default1]:step 1 loss 0.4300\n[default2]:step 1 loss 0.1325\n", match=False)
    assert triage is not None and triage.basis == "mismatch" and triage.culprits == [2], to_text(triage)
    # the culprit's own error names rank 0 first and implies nothing about rank 1: no majority then
    only2 = "".join(line for line in log.splitlines(keepends=True) if line.startswith("[default2]:"))
    triage = triage_text(only2 + "[default0]:step 1 loss 0.2219\n[default1]:step 1 loss 0.4300\n", match=False)
    assert triage is not None and triage.sole_culprit is None and triage.culprits == [0, 2], to_text(triage)


def test_mismatch_read_from_the_summary_alone() -> None:
    """torchrun's summary carries each failed rank's error file, mismatch text included."""
    log = (FIXTURES / "gloo" / "collective-n3-r2" / "combined.log").read_text(encoding="utf-8")
    summary = log[log.index("Failures:") :]
    triage = triage_text(summary, match=False)
    assert triage is not None and triage.culprits == [2] and triage.basis == "mismatch", to_text(triage)


def test_summary_copied_without_its_header_names_the_culprit() -> None:
    """The summary's rank blocks pasted without the "Failures:" line: the mismatch errors name rank 2, which
    left no line of its own there (reading it once raised KeyError)."""
    log = (FIXTURES / "gloo" / "collective-n3-r2" / "combined.log").read_text(encoding="utf-8")
    blocks = log[log.index("Failures:\n") + len("Failures:\n") :]
    triage = triage_text(blocks, match=False)
    assert triage is not None and triage.culprits == [2] and triage.basis == "mismatch", to_text(triage)
    assert 2 not in {v.rank for v in triage.ranks}


def test_two_rank_mismatch_says_the_evidence_cannot_decide() -> None:
    for capture in ("collective-n2-r0", "collective-n2-r1"):
        triage = triage_text((FIXTURES / "nccl" / capture / "combined.log").read_text(encoding="utf-8"), match=False)
        assert triage is not None and triage.culprits == [0, 1] and triage.sole_culprit is None
        assert "no third to side with either" in triage.collect[0]
        assert {v.role for v in triage.ranks} == {"suspect"}
        # where each suspect's own code entered its collective: the deviating rank is the one on the odd line
        deviant = int(capture[-1])
        assert f"rank {deviant}: faultjob.py line 68, `dist.broadcast(p.grad, src=rank)`" in triage.collect[0]
        assert f"rank {1 - deviant}: faultjob.py line 70, `dist.all_reduce(p.grad)`" in triage.collect[0]


def test_debug_barrier_failure_names_nobody() -> None:
    """gloo on a loaded machine, 3 s timeout: the job failed in DETAIL's barrier before the injected mismatch.

    Ranks 1 and 2 reached the barrier and gave up waiting for rank 0; rank 0 then lost its peers. Every rank
    is a victim of the barrier: nobody is named, and the tip points at rank 0.
    """
    capture = FIXTURES / "gloo-load" / "collective-n3-r2"
    for triage in (
        triage_path(capture / "logs", match=False),
        triage_text((capture / "combined.log").read_text(encoding="utf-8"), match=False),
    ):
        assert triage is not None and triage.culprits == [] and triage.basis == "none", to_text(triage)
        assert {v.how for v in triage.ranks} == {"barrier"}
        assert "rank 0 arriving late" in triage.collect[0]


def test_culprit_error_and_entry_are_shown() -> None:
    capture = Path(__file__).parent / "fixtures" / "nccl" / "nan-n2-r1"
    triage = triage_path(capture)
    assert triage is not None and triage.sole_culprit == 1
    culprit = triage.verdict()
    assert culprit is not None and culprit.error is not None and "non-finite" in culprit.error
    assert triage.entry is not None and triage.entry["id"] == "P14"
    block = to_text(triage)
    assert "rank 1" in block.splitlines()[1] and "P14" in block


def test_nccl_hang_reads_the_watchdog_counters() -> None:
    triage = triage_text(
        (Path(__file__).parent / "fixtures" / "nccl" / "hang-n2-r0" / "combined.log").read_text(encoding="utf-8"),
        match=False,
    )
    assert triage is not None and triage.basis == "behind" and triage.culprits == [0]
    data = to_json(triage)
    victim = next(r for r in data["ranks"] if r["rank"] == 1)
    assert victim["how"] == "timeout" and victim["collective"]["op"] == "ALLREDUCE"
    assert victim["collective"]["last_enqueued"] > data["ranks"][0]["collective"]["last_enqueued"]


def test_victim_named_by_torchrun_is_called_out() -> None:
    """gloo, rank 1 exits quietly: torchrun's Root Cause names a rank that only lost its peer."""
    capture = FIXTURES / "gloo" / "exit-n4-r1"
    triage = triage_text((capture / "combined.log").read_text(encoding="utf-8"), match=False)
    assert triage is not None and triage.root_cause_is_victim
    assert "only suffered the failure" in to_text(triage)


def test_single_process_output_is_not_triaged() -> None:
    text = 'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\nValueError: bad\n'
    assert triage_text(text) is None
    assert triage_text("") is None


def test_hostile_input_does_not_raise() -> None:
    junk = "[rank99999999999999]: \x00\x1b[31mValueError: x\n[rank1]:" + "A" * 100_000 + "\n" + "\ud800" * 3
    triage = triage_text(junk + "\n[rank2]: RuntimeError: Connection reset by peer\n", match=False)
    assert triage is not None and 2 in {v.rank for v in triage.ranks}
    bad = Path(__file__).parent / "fixtures" / "nccl"
    assert triage_path(bad / "raise-n2-r1" / "combined.log", match=False) is not None


def test_kb_triage_cli(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    capture = Path(__file__).parent / "fixtures" / "nccl" / "raise-n2-r1"
    assert main(["triage", str(capture / "logs"), "--json", "--no-match"]) == 0
    data = json.loads(capsys.readouterr().out)["triage"]
    assert data["sole_culprit"] == 1 and "OutOfMemoryError" in data["ranks"][1]["error"]
    assert main(["triage", str(Path(__file__).parent / "fixtures" / "nccl" / "collective-n2-r0" / "combined.log")]) == 1
    assert "suspects" in capsys.readouterr().out
    assert main(["triage", str(tmp_path / "missing")]) == 2
    (tmp_path / "one.log").write_text("ValueError: only one process\n")
    assert main(["triage", str(tmp_path / "one.log")]) == 2
    assert "not the output of two or more ranks" in capsys.readouterr().err


def test_kb_triage_reads_stdin() -> None:
    log = Path(__file__).parent / "fixtures" / "nccl" / "sigkill-n2-r1" / "combined.log"
    proc = subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "triage", "-", "--no-match"],
        input=log.read_text(encoding="utf-8"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "rank 1 broke first" in proc.stdout and "SIGKILL" in proc.stdout


def test_kb_search_json_gains_a_triage_block(capsys: pytest.CaptureFixture[str]) -> None:
    log = Path(__file__).parent / "fixtures" / "nccl" / "hang-n2-r1" / "combined.log"
    main(["search", log.read_text(encoding="utf-8"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert {"query_kind", "abstained", "results"} <= set(data)  # nothing removed
    assert data["triage"]["culprits"] == [1] and data["triage"]["basis"] == "behind"
    main(["search", "ValueError: a single process", "--json"])
    assert "triage" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_chunk_size_does_not_change_the_verdict(size: int) -> None:
    """Streaming: lines split across chunks are joined, so any chunking gives the same triage."""
    for capture in (captures("gloo")[0], captures("nccl")[6]):
        text = (capture / "combined.log").read_text(encoding="utf-8")
        whole = to_json(triage_text(text, match=False))
        chunked = to_json(triage_text((text[i : i + size] for i in range(0, len(text), size)), match=False))
        assert chunked == whole, capture.name


def test_without_tee_a_quiet_rank_below_the_highest_is_inferred() -> None:
    """Plain torchrun (no --tee): only tracebacks carry [rankN]:, so a rank that exits quietly prints nothing.

    The summary lists every failed rank; a missing rank below the highest one seen is the quiet one.
    """
    capture = next(p for p in captures("gloo") if p.name == "exit-n4-r1")
    text = re.sub(r"(?m)^\[default\d+\]:", "", (capture / "combined.log").read_text(encoding="utf-8"))
    triage = triage_text(text, match=False)
    assert triage is not None and triage.culprits == [1] and triage.basis == "silent", to_text(triage)
    assert any("--tee 3" in tip for tip in triage.collect)


@pytest.mark.parametrize(
    ("run", "backend"), [("gloo/hang-n4-r1", "gloo"), ("gloo/exit-n4-r1", "gloo"), ("nccl/exit-n2-r1", "nccl")]
)
def test_next_time_steps_fit_the_backend(run: str, backend: str) -> None:
    """A gloo job gets no NCCL setting to turn on: a stack dump of the stuck ranks instead of the flight recorder."""
    text = (Path(__file__).parent / "fixtures" / run / "combined.log").read_text(encoding="utf-8")
    triage = triage_text(text, match=False)
    assert triage is not None
    steps = " ".join(triage.collect)
    assert ("TORCH_NCCL_DUMP_ON_TIMEOUT" in steps) == (backend == "nccl")
    assert ("py-spy dump" in steps) == (backend == "gloo")
    assert "TORCH_DISTRIBUTED_DEBUG=DETAIL" in steps
