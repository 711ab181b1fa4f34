"""Read multi-rank output as a stream and keep, per rank, only what triage needs.

Most of a long log is training progress; a line is looked at closely only when it holds one
of a few literal keywords (found with ``str.find`` over large chunks), so a 100 MB log costs
little more than reading it. Which ranks exist, and the last line of each, come from the
rank prefixes (`[rank3]:` from torch, `[default3]:` from `torchrun --tee`) searched per chunk.
Memory stays bounded: per rank, a short tail of its lines around failures and its events.
The patterns and limits are ``_rules.READ``, which the site's triage.js reads too.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

from .._ownoutput import OWN, in_own_block
from ._rules import READ

__all__ = ["Event", "EventKind", "EventSource", "RankState", "Reader"]

CHUNK = 4 * 1024 * 1024
MAX_LINE = 1024 * 1024  # characters kept of one line; the rest of a longer one is dropped
LOOKAHEAD_RANKS = 64  # up to this many known ranks, the rank scan skips their lines inside the regex
RANK_SCAN = 256 * 1024  # after the first chunk, new ranks are looked for at each chunk's two ends only


# what happened to a rank: its own exception, a signal or a bare exit, or what a victim of a peer reports
EventKind = Literal["exception", "timeout", "connection", "mismatch", "barrier", "signal", "exit"]
# where it was seen: the rank's log lines, torchrun's failure summary, its error file, an NCCL watchdog line
EventSource = Literal["log", "summary", "error_file", "nccl"]


@dataclass
class Event:
    """One thing that happened to one rank, with where it was seen."""

    kind: EventKind
    text: str  # the first line of the error, or a description of the signal/exit
    line: int | None = None  # 1-based line in the combined input (None: from a file of its own)
    time: float | None = None  # seconds since the epoch, UTC, when the output said
    source: EventSource = "log"
    origin: str | None = None  # the file it came from, when the input was several files


@dataclass
class RankState:
    """What the reader knows of one rank so far: its events, its last line, its collective counters."""

    rank: int
    tag: str = ""  # the prefix style its lines carry, tried first in the next chunk
    last_line: str = ""
    events: list[Event] = field(default_factory=list)
    exitcode: int | None = None
    pid: int | None = None
    error_file: str | None = None
    seq: dict[str, object] = field(default_factory=dict)  # SeqNum/OpType/NumelIn, last enqueued/completed
    fingerprints: dict[int, str] = field(default_factory=dict)  # rank -> collective seen in mismatch errors
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=READ.tail_lines))
    first_time: float | None = None
    last_time: float | None = None

    def add(self, event: Event) -> None:
        if len(self.events) < READ.max_events and not any(
            e.kind == event.kind and e.text == event.text and e.source == event.source for e in self.events
        ):
            self.events.append(event)


def classify(message: str) -> EventKind:
    """exception (the rank's own), or timeout/connection/mismatch/barrier (what a victim of a peer reports)."""
    if READ.mismatch.search(message):
        return "mismatch"
    if READ.barrier.search(message):
        return "barrier"
    if READ.connection.search(message):
        return "connection"
    if READ.timeout.search(message):
        return "timeout"
    return "exception"


def _stamp(text: str, year: int) -> float | None:
    m = READ.iso.search(text)
    if m:
        frac = (m[7] or "0").ljust(6, "0")
        try:
            return datetime(
                int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]), int(frac), tzinfo=UTC
            ).timestamp()
        except ValueError:
            return None
    m = READ.glog.search(text)
    if m:
        try:
            return datetime(
                year, int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6][:6].ljust(6, "0")), tzinfo=UTC
            ).timestamp()
        except ValueError:
            return None
    return None


class Reader:
    """Feed it interleaved text (``feed``), one rank's files (``rank=``) and error files; read ``ranks``."""

    def __init__(self) -> None:
        self.ranks: dict[int, RankState] = {}
        self.root_cause: int | None = None  # the rank torchrun's summary names as the first failure
        self.sent: dict[int, str] = {}  # pid -> signal the launcher sent it
        self.lines = 0
        self.origin: str | None = None
        self.summary_seen = False
        self.year = datetime.now(UTC).year
        self._pending = ""
        self._summary_rank: int | None = None
        self._summary_time: float | None = None
        self._in_summary = False
        self._in_root_cause = False
        self._summary_traceback = False
        self._summary_lines = 0
        self._chunks = 0
        self._seen_pattern: re.Pattern[str] | None = None
        self._inferred: set[tuple[int, int]] = set()  # (reporter, first differing rank) of mismatch errors read
        self._marked = False
        self.skipped: list[str] = []  # files read but left out, each with the reason (said as a warning)

    # --- public feeding -----------------------------------------------------------------------
    def feed_chunks(self, chunks: Iterable[str], rank: int | None = None, origin: str | None = None) -> None:
        """Stream text in pieces of any size; a line split across pieces is joined first."""
        self.lines, self.origin = 0, origin
        for chunk in chunks:
            self._feed_text(self._pending + chunk, rank, final=False)
        self._feed_text(self._pending, rank, final=True)
        self._pending = ""
        self._summary_rank = None
        self._in_summary = self._in_root_cause = False

    def feed(self, text: str, rank: int | None = None, origin: str | None = None) -> None:
        self.feed_chunks((text[i : i + CHUNK] for i in range(0, len(text), CHUNK)), rank, origin)

    def feed_error_file(self, raw: str, rank: int, origin: str | None = None) -> None:
        """An error.json written by ``@record``: its message, call stack and time stamp."""
        try:
            data = json.loads(raw)
        except ValueError:
            return
        except RecursionError:  # nested thousands deep: no error file of torchrun's is shaped so
            self.skipped.append(f"{origin or 'error.json'}: JSON nested too deeply; skipped")
            return
        message = data.get("message") if isinstance(data, dict) else None
        extra: dict[str, object] = {}
        if isinstance(message, dict):
            extra = message.get("extraInfo") or {}
            message = message.get("message")
        if not isinstance(message, str) or not message.strip():
            return
        first = message.strip().splitlines()[0]
        stamp = extra.get("timestamp") if isinstance(extra, dict) else None
        when = float(stamp) if isinstance(stamp, (str, int, float)) and str(stamp).isdigit() else None
        state = self._rank(rank)
        state.add(Event(classify(first), first, None, when, "error_file", origin))
        self._fingerprints(first, state)
        stack = extra.get("py_callstack") if isinstance(extra, dict) else None
        if isinstance(stack, str) and not state.tail:
            state.tail.extend(stack.splitlines()[-READ.tail_lines :])

    # --- internals ----------------------------------------------------------------------------
    def rank(self, rank: int) -> RankState:
        """The state of ``rank``, created empty when nothing was seen of it yet."""
        return self._rank(rank)

    def _rank(self, rank: int) -> RankState:
        state = self.ranks.get(rank)
        if state is None:
            state = self.ranks[rank] = RankState(rank)
            self._seen_pattern = None
        return state

    def _feed_text(self, text: str, default_rank: int | None, final: bool) -> None:
        if not final:
            cut = text.rfind("\n") + 1
            if cut == 0:  # no line end yet; a line past MAX_LINE is cut there, so memory stays bounded
                self._pending = text[:MAX_LINE]
                return
            text, self._pending = text[:cut], text[cut:]
        elif not text:
            return
        base = self.lines
        self._marked = OWN.mark in text  # kb's own blocks (a saved `kb run` diagnosis) are not the ranks' output
        self._scan_ranks(text, default_rank)
        counted, counted_at = 0, 0
        pos = 0
        while pos < len(text):
            if self._in_summary:  # torchrun's summary block: every line, until its closing rule
                start = pos
                self._summary_lines += 1
                if self._summary_lines > READ.max_summary_lines:  # a stray "Failures:" opened no summary
                    self._in_summary = self._in_root_cause = False
            else:
                m = READ.keywords.search(text, pos)
                if m is None:
                    break
                start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", start)
            end = len(text) if end < 0 else end
            counted += text.count("\n", counted_at, start)
            counted_at = start
            self._line(text[start:end], base + counted + 1, default_rank, text, start)
            pos = end + 1
        self.lines = base + text.count("\n") + (0 if text.endswith("\n") else 1)

    def _scan_ranks(self, text: str, default_rank: int | None) -> None:
        """Which ranks speak in this chunk, how much, and the last line of each: C-speed searches only."""
        if default_rank is not None:
            state = self._rank(default_rank)
            state.tag = state.tag or "file"  # a per-rank log file: every line is this rank's
            last = text.rstrip("\n").rsplit("\n", 1)[-1]
            if last.strip():
                state.last_line = READ.prefix.sub("", last, count=READ.max_prefixes)[: READ.last_line_chars]
            return
        self._chunks += 1
        whole = self._chunks == 1 or len(text) <= 2 * RANK_SCAN
        for lo, hi in [(0, len(text))] if whole else [(0, RANK_SCAN), (len(text) - RANK_SCAN, len(text))]:
            self._find_ranks(text, lo, hi)
        for rank, state in self.ranks.items():
            tags = (f"[default{rank}]:", f"[rank{rank}]:")
            for tag in sorted(tags, key=lambda t: t != state.tag):  # the style that worked last time first
                at = text.rfind("\n" + tag)
                at = at + 1 if at >= 0 else (0 if text.startswith(tag) else -1)
                if at >= 0:
                    end = text.find("\n", at)
                    line = text[at : end if end >= 0 else len(text)]
                    state.last_line = READ.prefix.sub("", line, count=READ.max_prefixes)[: READ.last_line_chars]
                    state.tag = tag
                    break

    def _find_ranks(self, text: str, pos: int, end: int) -> None:
        """Register every rank whose prefix starts a line in text[pos:end], skipping known ones in C."""
        while True:
            if self._seen_pattern is None:
                # the ranks already known are skipped in C while they are few; past that, rebuilding the
                # alternation at each new rank is quadratic (a 4096-rank log), so Python skips them
                few = len(self.ranks) <= LOOKAHEAD_RANKS
                known = "|".join(str(r) for r in sorted(self.ranks)) if few else ""
                self._seen_pattern = re.compile(
                    r"^\[(?:default|rank)" + (rf"(?!(?:{known})\])" if known else "") + r"(\d+)\]:", re.M
                )
            m = self._seen_pattern.search(text, pos, end)
            if m is None:
                return
            if int(m[1]) not in self.ranks:
                self._rank(int(m[1]))
            pos = m.end()

    def _strip(self, raw: str, default_rank: int | None) -> tuple[str, int | None, bool]:
        """The line without rank prefixes, the rank it belongs to, and whether a prefix said so."""
        rank, prefixed, text = default_rank, False, raw
        for _ in range(READ.max_prefixes):
            m = READ.prefix.match(text)
            if not m:
                break
            if m[1] == "rank" or rank is None or not prefixed:
                rank = int(m[2])
            prefixed = True
            text = text[m.end() :]
        return text.rstrip("\r"), rank, prefixed

    def _line(self, raw: str, number: int, default_rank: int | None, chunk: str, start: int) -> None:
        if self._marked and in_own_block(chunk, start):
            return
        text, rank, prefixed = self._strip(raw, default_rank)
        nccl = READ.nccl_rank.search(text)
        if rank is None and nccl:
            rank = int(nccl[1])
        when = _stamp(text, self.year)
        if not prefixed and default_rank is None and self._summary(text, number):
            return
        if m := READ.sent.search(text):
            self.sent[int(m[1])] = m[2]
            return
        if rank is None:
            return
        state = self._rank(rank)
        if when is not None:
            state.first_time = when if state.first_time is None else state.first_time
            state.last_time = when
        if m := READ.watchdog.search(text):
            state.seq.update(seq_num=int(m[1]), op=m[2], numel_in=int(m[3]) if m[3] else None)
            said = text[m.start() :].split(READ.watchdog_end)[0]
            state.add(Event("timeout", said, number, when, "nccl", self.origin))
        if m := READ.enqueued.search(text):
            state.seq.update(last_enqueued=int(m[1]), last_completed=int(m[2]))
        self._fingerprints(text, state)
        stripped = text.lstrip()
        exc = READ.exc.match(text) if stripped == text else None
        if exc and exc["type"].rsplit(".", 1)[-1] not in READ.wrappers:
            first = text[: READ.error_chars]
            state.add(Event(classify(text), first, number, when, "log", self.origin))
            lo = max(0, start - READ.context_chars)
            own = [self._strip(x, default_rank) for x in chunk[lo:start].splitlines()[1:]]
            state.tail.extend(t for t, r, _ in own if r == rank)
            state.tail.append(text)
        elif (m := READ.signal_trace.search(text)) or (m := READ.fatal.match(text)):
            state.add(Event("signal", m[0], number, when, "log", self.origin))

    def _fingerprints(self, text: str, state: RankState) -> None:
        """The collectives a DETAIL mismatch error names, and what its wording implies about other ranks.

        torch (ProcessGroupWrapper) compares the reporting rank's fingerprint with every rank's in
        rank order and names the first that differs; so every rank below that one, other than the
        reporter, runs the reporter's collective. That agreement is known even when the launcher
        stopped those ranks before they printed their own error.
        """
        found = [
            (int(m[1]), f"{m[3]} SequenceNumber={m[2] or '?'} TensorShape={m[4] or '?'}")
            for m in READ.fingerprint.finditer(text)
        ]
        for rank, key in found:
            state.fingerprints[rank] = key
        if len(found) >= 2 and READ.mismatch_report in text and (found[0][0], found[1][0]) not in self._inferred:
            (reporter, key), (first_differing, _) = found[0], found[1]
            self._inferred.add((reporter, first_differing))
            for rank in range(min(first_differing, READ.max_inferred_rank)):
                state.fingerprints.setdefault(rank, key)

    def _summary(self, text: str, number: int) -> bool:
        """torchrun's ChildFailedError summary: per failed rank its time, exit code, error file, error."""
        if READ.summary_root in text:
            self._in_summary = self._in_root_cause = True
            self.summary_seen = True
            return True
        if text.startswith(READ.summary_start):
            self._in_summary = self.summary_seen = True
            self._summary_lines = 0
            return True
        if self._in_summary and text.startswith(READ.summary_end):
            self._in_summary = self._in_root_cause = self._summary_traceback = False
            self._summary_rank = None
            return True
        m = READ.summary_field.match(text)
        if m is None:
            if self._summary_traceback and self._summary_rank is not None and text.startswith(READ.summary_indent):
                exc = READ.exc.match(text.strip())
                if exc and text[len(READ.summary_indent) : len(READ.summary_indent) + 1] != " ":
                    state = self._rank(self._summary_rank)
                    state.add(
                        Event(
                            classify(text.strip()),
                            text.strip()[: READ.error_chars],
                            number,
                            self._summary_time,
                            "summary",
                            self.origin,
                        )
                    )
                    self._fingerprints(text, state)  # the error file of a rank stopped before its lines reached the log
                    return True
            return False
        key, value = m[1], m[2].strip()
        self.summary_seen = True
        if key == "time":
            self._summary_time = _stamp(value, self.year)
            self._summary_rank = None
            self._summary_traceback = False
        elif key == "rank" and (r := READ.summary_rank.match(value)):
            self._summary_rank = int(r[1])
            state = self._rank(self._summary_rank)
            if self._in_root_cause and self.root_cause is None:
                self.root_cause = self._summary_rank
            if self._summary_time is not None and state.last_time is None:
                state.last_time = self._summary_time
        elif self._summary_rank is not None:
            state = self._rank(self._summary_rank)
            if key == "exitcode" and (e := READ.exitcode.match(value)):
                state.exitcode, state.pid = int(e[1]), int(e[2])
            elif key == "error_file" and value != READ.no_error_file:
                state.error_file = value
            elif key == "traceback":
                self._summary_traceback = value.startswith(READ.summary_traceback)
                if s := READ.signal_trace.search(value):
                    state.add(Event("signal", s[0], number, self._summary_time, "summary", self.origin))
        return True
