"""A log of a thousand ranks or more (a large job whose every rank timed out) is read in linear time:
the rank scan must not rebuild a pattern over every known rank each time it meets a new one."""

from __future__ import annotations

import re

import pytest

import trainkb.ranklog._read as read
from trainkb.triage import triage_text

RANKS = 1024
# the watchdog line each rank prints on a collective timeout (as in the catalogue's NCCL timeout pastes)
LINE = (
    "[rank{r}]: [E ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 "
    "milliseconds before timing out."
)


def test_a_thousand_ranks_compile_a_bounded_number_of_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: set[str] = set()
    real = re.compile

    def counting(pattern, flags=0):  # type: ignore[no-untyped-def]
        compiled.add(pattern if isinstance(pattern, str) else repr(pattern))
        return real(pattern, flags)

    monkeypatch.setattr(read.re, "compile", counting)
    text = "\n".join(LINE.format(r=r) for r in range(RANKS)) + "\n"
    triage = triage_text(text, match=False)
    assert triage is not None
    assert len(triage.ranks) == RANKS
    assert len(compiled) <= 72  # a few dozen while the known ranks are skipped inside the regex, not one per rank
