"""Multi-rank pastes: what a rank that only suffered a broken peer printed is not the failure.

When one rank stops without an error of its own (hung, or behind in the collective sequence) and
its peers time out waiting in a collective, the peers' teardown (the watchdog's abort, SIGABRT,
`Fatal Python error: Aborted`, torchrun's summary naming the first rank to die) says loudly that a
worker crashed in native code. It did, but only because it waited: triage names the rank that broke.
Search then reads the paste without those teardown lines, so the timeout itself (the symptom of a
hang) decides the answer, and the advice names the silent rank. The rank log reader is standard
library only, so `kb search` stays light.

When triage is definite the other way round (one rank failed with its own exception or signal and
the others only went down with it), the other ranks' lines and their blocks of torchrun's summary
are read as blank too: their lost connections and SIGTERMs are not the failure, so search leads
with the entry for the culprit's own error, as the triage does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._input import Line, Query

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from ..ranklog import Triage

__all__ = [
    "RANKS",
    "RankRules",
    "Teardown",
    "own_failure",
    "teardown",
]


@dataclass(frozen=True, eq=False, repr=False, match_args=False)
class RankRules:
    """How a multi-rank paste is read after triage: which lines are the peers' teardown, and what is said of it."""

    silent_bases: tuple[str, ...]  # triage found no rank with an error of its own
    waited: str  # a victim that timed out waiting in a collective (its watchdog line is kept)
    run: int  # ranks in a row written as a range ("ranks 0–4320, 4322"): a job of thousands named them one by one
    one: str  # how a single rank is named, {rank} its number
    many: str  # how several are named, {ranks} the numbers and ranges joined by ``joiner``
    span: str  # ranks in a row, {first} to {last}
    joiner: str
    note: str  # said with the answer: which rank broke and why the aborts below the timeout are not the cause
    behind_note: str  # said instead when the culprit timed out too but stands behind its peers in the sequence
    own_note: str  # said when one rank failed on its own first: its peers' errors are left out of the match
    signal_note: str  # said instead when that first failure is a signal (SIGKILL, SIGSEGV): a death, no error
    # {teardown}: the aborts when a victim's teardown shows one (NCCL's watchdog), else only what the lines show
    teardown: tuple[str, str]
    summary_root: str  # torchrun's summary names each failed rank in blocks
    own_basis: str  # the basis of a culprit that failed with its own exception or signal
    own_how: tuple[str, ...]  # how a culprit's own failure shows (a bare exit code names no error to match)
    # torchrun's summary: a block per failed rank opens with "[N]:" and names the rank in its "rank :" field
    block: re.Pattern[str]
    block_rank: re.Pattern[str]
    rule: re.Pattern[str]


RANKS = RankRules(
    silent_bases=("behind", "silent"),
    waited="timeout",
    run=3,
    one="rank {rank}",
    many="ranks {ranks}",
    span="{first}–{last}",
    joiner=", ",
    note=(
        "Triage: {culprit} printed no error of its own while {victims} timed out waiting in a collective, so "
        "{culprit} is where the job broke; {teardown} and torchrun's summary after the timeout are "
        "consequences, not the cause. Read {culprit}'s own output for where it stopped."
    ),
    behind_note=(
        "Triage: {culprit} timed out too, but it is behind {victims} in the collective sequence (the watchdog's "
        "counters), so {culprit} is where the job broke and {victims} only waited for it; {teardown} and torchrun's "
        "summary after the timeout are consequences, not the cause. Read {culprit}'s own output for what it did "
        "before that collective."
    ),
    own_note=(
        "Triage: {culprit} failed first with an error of its own and {victims} only went down with it, so the "
        "match reads {culprit}'s failure; the other ranks' errors and their part of torchrun's summary are "
        "consequences."
    ),
    signal_note=(
        "Triage: {culprit} was killed by a signal first and {victims} only went down with it, so the match reads "
        "{culprit}'s failure; the other ranks' errors and their part of torchrun's summary are consequences."
    ),
    teardown=("the aborts (SIGABRT)", "the other ranks' exits"),
    summary_root="Root Cause (first observed failure)",
    own_basis="own-error",
    own_how=("exception", "signal"),
    block=re.compile(r"^\s*\[\d+\]:\s*$"),
    block_rank=re.compile(r"^\s*rank\s*:\s*(\d+)"),
    rule=re.compile(r"^(?:-{5,}|={5,})"),
)


@dataclass(frozen=True)
class Teardown:
    """The lines (numbered as ``Line.number``) of victims' teardown, and the sentence naming the broken rank."""

    skip: frozenset[int]
    note: str


def _ranks(ranks: list[int]) -> str:
    """``ranks`` (sorted) as words; ``RANKS.run`` or more in a row as a range."""
    if len(ranks) == 1:
        return RANKS.one.replace("{rank}", str(ranks[0]))
    parts, start = [], 0
    for end in range(len(ranks)):
        if end + 1 < len(ranks) and ranks[end + 1] == ranks[end] + 1:
            continue
        run = ranks[start : end + 1]
        span = RANKS.span.replace("{first}", str(run[0])).replace("{last}", str(run[-1]))
        parts.extend([span] if len(run) >= RANKS.run else [str(r) for r in run])
        start = end + 1
    return RANKS.many.replace("{ranks}", RANKS.joiner.join(parts))


def teardown(text: str, query: Query, first_line: int = 1) -> Teardown | None:
    """The victims' teardown in a paste where a silent rank made its peers time out; None otherwise.

    A victim's lines after its timeout, and the lines no rank tags after the first timeout (the
    launcher's summary), are teardown. Only pastes with rank-tagged lines are triaged for that; a
    paste holding torchrun's summary is also read for a rank that failed first with its own error.
    """
    tagged = any(line.rank is not None for line in query.lines)
    if not tagged and RANKS.summary_root not in text:
        return None
    from ..ranklog import DECIDE, decide_text  # standard library only; imported when ranks speak

    decided = decide_text(text)
    triage = decided[0] if decided else None
    if triage is not None and triage.basis == RANKS.own_basis:
        return _own(triage, query)
    if not tagged or triage is None or triage.basis not in RANKS.silent_bases or not triage.culprits:
        return None
    timed_out = {v.rank: first_line - 1 + v.line for v in triage.ranks if v.how == RANKS.waited and v.line is not None}
    if not timed_out:
        return None
    first = min(timed_out.values())
    skip = frozenset(
        line.number
        for line in query.lines
        if (line.rank in timed_out and line.number > timed_out[line.rank])
        or (line.rank is None and line.number > first)
    )
    aborted = any(DECIDE.aborted.search(line.text) for line in query.lines if line.number in skip)
    # a culprit that timed out itself is not silent: it is behind, and its peers alone are the victims
    behind = [rank for rank in triage.culprits if rank in timed_out]
    victims = sorted(set(timed_out) - set(triage.culprits)) or sorted(timed_out)
    note = (
        (RANKS.behind_note if behind else RANKS.note)
        .replace("{culprit}", _ranks(sorted(triage.culprits)))
        .replace("{victims}", _ranks(victims))
        .replace("{teardown}", RANKS.teardown[0 if aborted else 1])
    )
    return Teardown(skip, note)


def _summary_blocks(lines: list[Line]) -> dict[int, int]:
    """Line number -> rank, for the untagged lines of each rank's block in torchrun's failure summary."""
    owned: dict[int, int] = {}
    block: list[int] = []
    rank: int | None = None

    def close() -> None:
        if rank is not None:
            owned.update(dict.fromkeys(block, rank))

    for line in lines:
        if line.rank is not None:
            continue
        if RANKS.block.match(line.text) or RANKS.rule.match(line.text):
            close()
            block, rank = ([line.number], None) if RANKS.block.match(line.text) else ([], None)
        elif block:
            block.append(line.number)
            if rank is None and (m := RANKS.block_rank.match(line.text)):
                rank = int(m[1])
    close()
    return owned


def own_failure(triage: Triage) -> bool:
    """Triage is definite: one rank failed first with its own exception or signal (search reads that failure)."""
    verdict = triage.verdict()
    return (
        triage.basis == RANKS.own_basis
        and triage.sole_culprit is not None
        and verdict is not None
        and verdict.how in RANKS.own_how
    )


def _own(triage: Triage, query: Query) -> Teardown | None:
    """The other ranks' lines when one rank failed first with its own error; None when that is not definite."""
    culprit = triage.sole_culprit
    if culprit is None or not own_failure(triage):
        return None
    others = {v.rank for v in triage.ranks if v.rank != culprit and v.role == "victim"}
    if not others:
        return None
    blocks = _summary_blocks(query.lines)
    skip = frozenset(
        line.number
        for line in query.lines
        if (line.rank in others) or (line.rank is None and blocks.get(line.number) in others)
    )
    if not skip:
        return None
    verdict = triage.verdict()
    said = RANKS.signal_note if verdict is not None and verdict.how == "signal" else RANKS.own_note
    note = said.replace("{culprit}", _ranks([culprit])).replace("{victims}", _ranks(sorted(others)))
    return Teardown(skip, note)
