"""Decide which rank broke first and which ranks only suffered it, from what the reader kept.

In order of strength: a rank with its own exception or signal (earliest first); the odd one
out of `TORCH_DISTRIBUTED_DEBUG=DETAIL`'s collective fingerprints; the rank whose NCCL
watchdog counters are behind the others (D19's desync); a rank that stayed silent while its
peers timed out or lost their connection. Anything weaker is reported as not enough evidence,
with what to collect next time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ._read import Event, RankState, Reader
from ._rules import DECIDE

__all__ = ["Basis", "RankVerdict", "Role", "Triage", "decide", "decide_text", "is_multirank"]

# what a rank was in the failure: the one that broke it, one of several that may have, one that only
# suffered it, one untouched
Role = Literal["culprit", "suspect", "victim", "unharmed"]
# what singled the culprits out, strongest first; "none" when nothing did
Basis = Literal["own-error", "mismatch", "behind", "silent", "none"]


@dataclass
class RankVerdict:
    """What triage decided about one rank: its role, how it ended, and the line that says so."""

    rank: int
    role: Role
    how: str  # a key of DECIDE.how
    error: str | None = None  # the first line of the error that ended it
    line: int | None = None
    origin: str | None = None
    time: float | None = None
    exitcode: int | None = None
    seq: dict[str, object] = field(default_factory=dict)
    last_line: str = ""

    @property
    def description(self) -> str:
        return DECIDE.how[self.how]


@dataclass
class Triage:
    """Triage's verdict on a job: every rank's, the ranks that broke first, and what that rests on."""

    ranks: list[RankVerdict]
    culprits: list[int]
    basis: Basis
    root_cause: int | None  # the rank torchrun's summary named as its first observed failure
    gap_seconds: float | None  # from the culprit's failure to the first victim's failure
    collect: list[str]
    entry: dict[str, object] | None = None  # the catalogue entry for the culprit's own error

    @property
    def sole_culprit(self) -> int | None:
        return self.culprits[0] if len(self.culprits) == 1 else None

    @property
    def root_cause_is_victim(self) -> bool:
        return (
            self.root_cause is not None
            and self.root_cause not in self.culprits
            and any(v.rank == self.root_cause and v.role == "victim" for v in self.ranks)
        )

    @property
    def explained_rank(self) -> int | None:
        """The rank whose own error the catalogue is asked about: the culprit, or the first of several."""
        if self.sole_culprit is not None:
            return self.sole_culprit
        return self.culprits[0] if self.culprits and self.basis == "own-error" else None

    def verdict(self) -> RankVerdict | None:
        return next((v for v in self.ranks if v.rank == self.explained_rank), None)


def _signal_kind(state: RankState, event: Event, reader: Reader) -> str:
    """A signal the rank brought on itself ("signal") or one it received as a consequence."""
    launcher = reader.sent.get(state.pid) if state.pid is not None else None
    if DECIDE.launcher_signal in event.text or launcher == DECIDE.launcher_signal:
        return "sigterm"
    if launcher:  # torchrun escalates to SIGKILL when SIGTERM is ignored
        return "sigterm"
    if DECIDE.aborted.search(event.text) and any(e.kind in DECIDE.victim_kinds for e in state.events):
        return "abort"
    return "signal"


def _classify(state: RankState, reader: Reader) -> tuple[str, Event | None]:
    """How this rank ended, and the event that shows it, its own failure taking precedence."""
    own = [e for e in state.events if e.kind == "exception"]
    if own:  # the line where the log shows it first; its time may come from another source
        return "exception", min(own, key=lambda e: (e.line is None, e.origin or "", e.line or 0))
    signals = [(e, _signal_kind(state, e, reader)) for e in state.events if e.kind == "signal"]
    for event, kind in signals:
        if kind == "signal":
            return "signal", event
    for kind in DECIDE.victim_kinds:
        hits = [e for e in state.events if e.kind == kind]
        if hits:
            return kind, hits[0]
    for event, kind in signals:
        return kind, event
    if state.exitcode is not None and state.exitcode > 0:
        return "exited", None
    if state.exitcode == DECIDE.launcher_exitcode or (state.pid is not None and state.pid in reader.sent):
        return "sigterm", None
    return "none", None


def _time(state: RankState, event: Event | None) -> float | None:
    """When the shown event happened: its own stamp, else the earliest stamp of an event of its kind."""
    if event is not None and event.time is not None:
        return event.time
    times = [e.time for e in state.events if e.time is not None and (event is None or e.kind == event.kind)]
    return min(times) if times else None


def _first(ranks: list[int], when: dict[int, float | None]) -> list[int]:
    """The earliest of ``ranks``; all of them when their times tie or are unknown.

    torchrun's "Root Cause" is no tie-breaker: it is the first exit the agent noticed, not the
    first failure, and ranks failing on their own within a second are all worth reading.
    """
    known = {r: t for r in ranks if (t := when[r]) is not None}
    if len(known) < len(ranks):
        return ranks
    earliest = min(known.values())
    return [r for r, t in known.items() if t - earliest < DECIDE.tie_seconds]


def _odd_ones_out(ops: Mapping[int, object]) -> list[int]:
    """The ranks whose value differs from every other rank's shared value; all of them on a tie."""
    counts = Counter(ops.values()).most_common()
    if len(counts) < 2:
        return []
    if counts[0][1] == counts[1][1]:
        return sorted(ops)
    return sorted(r for r, op in ops.items() if op != counts[0][0])


def decide(reader: Reader) -> Triage:
    """The verdict on a multi-rank reader (``is_multirank``): it holds two ranks or more once quiet ones are added."""
    if reader.summary_seen and reader.ranks:
        # ranks number from 0, and torchrun's summary lists every rank that failed: a rank below the
        # highest one seen that left no trace exited without an error (or is still running)
        for rank in range(max(reader.ranks)):
            reader.rank(rank)
    states = dict(sorted(reader.ranks.items()))
    how: dict[int, str] = {}
    shown: dict[int, Event | None] = {}
    for rank, state in states.items():
        how[rank], shown[rank] = _classify(state, reader)
    when = {r: _time(states[r], shown[r]) for r in states}
    own = [r for r in states if how[r] in ("exception", "signal")]
    victims = [r for r in states if how[r] in (*DECIDE.waited, "mismatch")]
    fingerprints: dict[int, object] = {}
    for state in states.values():
        fingerprints.update(state.fingerprints)
    enqueued = {r: n for r, s in states.items() if isinstance(n := s.seq.get("last_enqueued"), int)}
    watchdog = {r: (s.seq.get("seq_num"), s.seq.get("op")) for r, s in states.items() if "seq_num" in s.seq}
    silent = [r for r in states if how[r] in ("none", "sigterm")]
    ended_alone = [r for r in silent if how[r] == "none"]
    if ended_alone:
        # a rank that ended on its own while its peers waited comes before one the launcher killed
        # while tearing the job down (that one lost a race to print its own timeout)
        silent = ended_alone

    basis: Basis = "none"
    culprits: list[int] = []
    if own:
        basis, culprits = "own-error", _first(own, when)
    elif odd := _odd_ones_out(fingerprints):
        basis, culprits = "mismatch", odd
    elif len(set(enqueued.values())) > 1:  # two ranks or more, at different counts
        low = min(enqueued.values())
        basis, culprits = "behind", sorted(r for r, v in enqueued.items() if v == low)
    elif odd := _odd_ones_out(watchdog):
        basis, culprits = "behind", odd
    elif (
        victims
        and silent
        and any(how[r] in DECIDE.waited for r in victims)
        and (how[silent[0]] == "none" or any(how[r] in DECIDE.timed_out for r in victims))
    ):
        # a rank the launcher stopped was alive until a peer failed: it can be the cause only by hanging,
        # and a hang makes its peers time out; lost connections alone come from a rank that ended first
        basis, culprits = "silent", silent
    elif not victims and any(how[r] == "exited" for r in states):
        basis, culprits = "own-error", _first([r for r in states if how[r] == "exited"], when)

    verdicts = []
    for rank, state in states.items():
        event = shown[rank]
        if rank in culprits:
            role: Role = "culprit" if len(culprits) == 1 or basis == "own-error" else "suspect"
        elif how[rank] == "none":
            role = "unharmed"
        else:
            role = "victim"
        verdicts.append(
            RankVerdict(
                rank,
                role,
                "silent" if rank in culprits and how[rank] in ("none", "sigterm") else how[rank],
                event.text if event else None,
                event.line if event else None,
                event.origin if event else None,
                when[rank],
                state.exitcode,
                dict(state.seq),
                state.last_line,
            )
        )
    gap = None
    # a culprit named only by its peers' mismatch errors may have left no line of its own: no time then
    culprit_times = [
        t for r in culprits if (t := when.get(r)) is not None and how[r] in ("exception", "signal", "exited")
    ]
    victim_times = [t for r in victims if (t := when[r]) is not None and r not in culprits]
    if culprit_times and victim_times:
        gap = round(min(victim_times) - min(culprit_times), 3)
    tips = _collect(reader, basis, victims, how)
    if basis == "mismatch" and len(culprits) > 1 and len(culprits) == len(states) == DECIDE.no_majority_ranks:
        sites = [
            DECIDE.suspect_site.replace("{rank}", str(r)).replace("{site}", site)
            for r in culprits
            if r in states and (site := _call_site(states[r]))  # a rank only others' errors name printed no frame
        ]
        joined = DECIDE.suspect_sites.replace("{sites}", DECIDE.sites_joiner.join(sites))
        tips.insert(0, DECIDE.tips["no_majority"] + (joined if sites else ""))
    elif basis == "mismatch" and len(culprits) > 1:
        tips.insert(0, DECIDE.tips["tie"])
    return Triage(verdicts, culprits, basis, reader.root_cause, gap, tips)


def _call_site(state: RankState) -> str | None:
    """The last frame of the rank's traceback outside torch and site-packages: where its code called the collective."""
    lines = list(state.tail)
    for i in range(len(lines) - 1, -1, -1):
        m = DECIDE.frame.match(lines[i])
        if m and not any(part in m["path"] for part in DECIDE.library_paths):
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            site = DECIDE.call_site.replace("{file}", m["path"].rsplit("/", 1)[-1]).replace("{line}", m["line"])
            return site + (DECIDE.call_code.replace("{code}", code) if code else "")
    return None


def _gloo(reader: Reader) -> bool:
    """The ranks' errors come from gloo and none from NCCL: NCCL's flight recorder has nothing to dump."""
    texts = [e.text for state in reader.ranks.values() for e in state.events]
    return any(DECIDE.gloo.search(t) for t in texts) and not any(DECIDE.nccl.search(t) for t in texts)


def _collect(reader: Reader, basis: Basis, victims: list[int], how: dict[int, str]) -> list[str]:
    """What to turn on next time, when this output could not settle the question."""
    tip = DECIDE.tips
    tips = []
    barrier = any(h == "barrier" for h in how.values())
    if basis == "none" and barrier:
        tips.append(tip["barrier"])
    elif basis == "none" and any(how[r] == "sigterm" for r in how) and any(how[r] == "connection" for r in victims):
        tips.append(tip["ended_first"])
    elif basis == "none" and victims and len(victims) == len(how):
        tips.append(tip["all_victims"])
    if (basis == "none" and not barrier) or (basis == "silent" and any(how[r] == "timeout" for r in victims)):
        tips += [tip["stack" if _gloo(reader) else "flight_recorder"], tip["detail"]]
    if basis == "silent" and len([r for r in how if how[r] in ("none", "sigterm")]) > 1 and not reader.summary_seen:
        tips.append(tip["summary"])
    # only tracebacks carry torch's [rankN]: prefix; --tee tags every line, so a quiet rank is seen too
    if not any(s.tag.startswith(DECIDE.tee_tags) for s in reader.ranks.values()):
        tips.append(tip["tee"])
    if any(how[r] == "exited" for r in how):  # a rank failed with an exit code and no traceback anywhere
        tips.append(tip["record"])
    return tips


def is_multirank(reader: Reader) -> bool:
    """Output of two or more ranks (torchrun's summary naming rank 1 or above counts): what triage is for."""
    return len(reader.ranks) >= 2 or (reader.summary_seen and bool(reader.ranks) and max(reader.ranks) >= 1)


def decide_text(text: str | Iterable[str]) -> tuple[Triage, Reader] | None:
    """Read interleaved output (a string, or chunks of one) and decide; None when it is not multi-rank."""
    reader = Reader()
    if isinstance(text, str):
        reader.feed(text)
    else:
        reader.feed_chunks(text)
    return (decide(reader), reader) if is_multirank(reader) else None
