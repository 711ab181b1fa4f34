"""Multi-rank pastes at the edges of triage's rules, for the Node parity test (test_node_parity.py).

Captured runs and their seeded variations pass through the middle of most rules but seldom stand on
an edge: a rank's 64th event, a traceback line exactly CONTEXT_CHARS back, the 60th line of a tail,
torchrun's summary closing on its 5000th line. Each paste here is a captured run's own lines
(tests/triage/fixtures, tests/own_output) moved onto one such edge of ``READ`` or ``DECIDE``, and most
come in pairs, one on each side of it, so that a one-character change to that rule in kb triage or in
the site's triage.js makes the two answer differently.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

from trainkb.ranklog import DECIDE, READ

Case = tuple[str, str]  # (where it comes from, text)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "triage" / "fixtures"
VICTIM_PATTERNS = {
    "mismatch": READ.mismatch,
    "barrier": READ.barrier,
    "connection": READ.connection,
    "timeout": READ.timeout,
}
_TAG = re.compile(r"^\[default(\d+)\]:\[rank\1\]: ")
_STEP = re.compile(r"step \d+")


def triage_edges() -> list[Case]:
    """Every edge case below, each labelled with the rule it stands on."""
    return [
        *_two_tells(),
        *_event_limit(),
        *_tail_limit(),
        *_context_limit(),
        *_summary_limit(),
        *_summary_indent(),
        *_exit_zero(),
        *_inferred_limit(),
        *_no_majority(),
        *_clock_edges(),
        *_prefix_limit(),
        *_wrapper(),
        *_event_times(),
    ]


def _log(name: str) -> list[str]:
    return (FIXTURES / name / "combined.log").read_text(encoding="utf-8").splitlines()


def _text(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def _first(lines: list[str], test: Callable[[str], object]) -> str:
    return next(line for line in lines if test(line))


def _renamed(line: str, rank: int) -> str:
    """A rank's line as another rank printed it: its prefixes (torchrun's and torch's) renumbered."""
    return _TAG.sub(f"[default{rank}]:[rank{rank}]: ", line)


def _kind_messages() -> dict[str, str]:
    """For each victim kind, the first captured message that its pattern alone reads."""
    found: dict[str, str] = {}
    for path in sorted(FIXTURES.glob("*/*/combined.log")):
        for line in path.read_text(encoding="utf-8").splitlines():
            text = READ.prefix.sub("", line, count=READ.max_prefixes).strip()
            exc = READ.exc.match(text)
            message = exc["msg"] if exc and exc["msg"] else text
            kinds = [kind for kind, pattern in VICTIM_PATTERNS.items() if pattern.search(message)]
            if len(kinds) == 1:
                found.setdefault(kinds[0], message)
    assert set(found) == set(VICTIM_PATTERNS), f"no captured message for {set(VICTIM_PATTERNS) - set(found)}"
    return found


def _two_tells() -> list[Case]:
    """One error line that two victim patterns read, for every pair: the order classify tries them in decides.

    torch prints a wrapped error and its cause on one line ("NCCL communicator was aborted ... Watchdog caught
    collective operation timeout", https://github.com/zai-org/GLM-130B/issues/132) or on two (the gloo
    fixtures' barrier failure, then its transport timeout).
    """
    said = _kind_messages()
    return [
        (
            f"edge: one line read as {a} and {b}",
            f"[rank0]: RuntimeError: {said[a]} {said[b]}\n[rank1]: RuntimeError: {said[b]} {said[a]}\n",
        )
        for a, b in combinations(VICTIM_PATTERNS, 2)
    ]


def _event_limit() -> list[Case]:
    """A rank's own exception as its MAX_EVENTS-th event, kept, and as the one after, dropped: the
    watchdog timeouts before it are rank 0's captured one at successive sequence numbers."""
    hang = _log("nccl/hang-n2-r1")
    watchdog = _first(hang, lambda line: line.startswith("[default0]:") and READ.watchdog.search(line))
    peer = _first(hang, lambda line: line.startswith("[default1]:"))
    raised = _oom_line()
    out = []
    for before in (READ.max_events - 1, READ.max_events):
        timeouts = [re.sub(r"SeqNum=\d+", f"SeqNum={n}", watchdog) for n in range(1, before + 1)]
        out.append((f"edge: an exception after {before} events", _text([peer, *timeouts, raised])))
    return out


class _Mismatch:
    """nccl/collective-n2-r0: both ranks report the mismatch, so both are suspects and the tip names where each
    one's own code called its collective, read from the rank's tail (the traceback kept before its error)."""

    def __init__(self) -> None:
        lines = _log("nccl/collective-n2-r0")
        own = [line for line in lines if line.startswith("[default0]:[rank0]: ")]
        end = next(i for i, line in enumerate(own) if READ.mismatch.search(line))
        self.rank0 = own[: end + 1]  # its traceback, up to and with its error
        self.rank1 = [line for line in lines if line.startswith("[default1]:[rank1]: ")]
        # the last frame in the rank's own code (callSite reads it), then the library frames below it
        self.user = max(i for i, line in enumerate(self.rank0) if self._own_frame(line))
        self.below = self.rank0[self.user + 2 :]
        self.progress = _first(lines, lambda line: line.startswith("[default1]:step "))

    @staticmethod
    def _own_frame(line: str) -> bool:
        m = DECIDE.frame.match(READ.prefix.sub("", line, count=READ.max_prefixes))
        return m is not None and not any(part in m["path"] for part in DECIDE.library_paths)

    def paste(self, between: list[str], joined: str = "") -> str:
        """Rank 0's traceback with ``between`` after its own frame's code line, then rank 1's; with ``joined``, its
        own frame on the line before it, after that character."""
        head = self.rank0[: self.user + 2]
        if joined:
            head = [*head[: self.user - 1], head[self.user - 1] + joined + head[self.user], head[self.user + 1]]
        return _text([*head, *between, *self.below, *self.rank1])

    def library_frames(self, n: int) -> list[str]:
        """``n`` lines of library frames: the first one below the rank's own frame, repeated (a wrapper's
        frame is its path line, its code line and, from Python 3.11, a line of carets)."""
        frame = self.below[:3]
        twos = -n % 3  # frames without their caret line, so that any count from 2 on can be made
        return frame[:2] * twos + frame * ((n - 2 * twos) // 3)

    def pad(self, chars: int) -> list[str]:
        """Rank 1's progress lines (not rank 0's, so never in its tail) holding exactly ``chars`` characters."""
        short = len(_STEP.sub("step 1", self.progress)) + 1
        lines, extra = divmod(chars, short)
        assert extra <= lines, chars
        return [_STEP.sub(f"step {10 + n if n < extra else 1 + n % 9}", self.progress) for n in range(lines)]


def _tail_limit() -> list[Case]:
    """The rank's own frame as the first of the TAIL_LINES lines its tail keeps, and as the line before."""
    run = _Mismatch()
    out = []
    for after in (READ.tail_lines - 1, READ.tail_lines):  # lines of the tail after the own frame, its error last
        text = run.paste(run.library_frames(after - 1 - len(run.below)))
        frame, error = text.index(run.rank0[run.user]), text.index(run.rank0[-1])
        assert error - frame < READ.context_chars
        out.append((f"edge: own frame {after} lines before the end of the tail", text))
    return out


def _context_limit() -> list[Case]:
    """The rank's own frame starting CONTEXT_CHARS before its error line, and one character nearer or further:
    the context searched for its traceback begins there, and a line that starts exactly there is not in it.
    Last, the frame after a vertical tab on the line before it, the context beginning on that line, or that line
    the paste's first: the context's first line is cut where str.splitlines cuts it, so the frame is in it."""
    run, vt = _Mismatch(), "\x0b"
    frame, error = run.rank0[run.user], run.rank0[-1]
    out = []
    for reach in (READ.context_chars - 1, READ.context_chars, READ.context_chars + 1):
        bare = run.paste([])
        text = run.paste(run.pad(reach - (bare.index(error) - bare.index(frame))))
        assert text.index(error) - text.index(frame) == reach
        out.append((f"edge: own frame {reach} characters before the error", text))
    bare = run.paste([], joined=vt)
    reach = READ.context_chars - 3  # the context begins 3 characters before the vertical tab
    text = run.paste(run.pad(reach - (bare.index(error) - bare.index(vt))), joined=vt)
    assert text.index(error) - text.index(vt) == reach
    out.append(("edge: own frame after a vertical tab in the context's first line", text))
    first = vt.join([run.rank0[run.user - 1], frame, run.rank0[run.user + 1]])  # the context from the paste's start
    out.append(("edge: own frame after a vertical tab on the line before its error", _text([first, error, *run.rank1])))
    return out


def _launcher(lines: list[str]) -> list[str]:
    """torchrun's own lines of a run (its log lines and failure summary), without the ranks'."""
    return [line for line in lines if not line.startswith("[")]


def _summary_limit() -> list[Case]:
    """torchrun's summary whose closing rule is its MAX_SUMMARY_LINES-th line, and its next: within the limit the
    rule ends the last rank's block, so the traceback printed after it is no rank's; past it the summary had
    already been given up and that block is still open. In between, the lines of ranks still running."""
    killed = _log("nccl/sigkill-n2-r0")
    start = killed.index(READ.summary_start)
    end = next(i for i, line in enumerate(killed) if line.startswith(READ.summary_end) and i > start)
    raised = _launcher(_log("nccl/raise-n2-r0"))
    traceback = _first(raised, lambda line: line.strip().startswith("traceback") and READ.summary_traceback in line)
    error = _first(raised, lambda line: line.startswith(READ.summary_indent + "torch.OutOfMemoryError"))
    progress = _first(killed, lambda line: line.startswith("[default1]:step "))
    out = []
    for at in (READ.max_summary_lines, READ.max_summary_lines + 1):
        running = [progress] * (at - (end - start))
        lines = [*killed[:end], *running, killed[end], traceback, error]
        out.append((f"edge: summary closing on its line {at}", _text(lines)))
    return out


def _summary_indent() -> list[Case]:
    """The error in a summary's traceback indented as torchrun indents it, and by one space more (a line of the
    traceback's own, then): torchrun's lines alone, so that the summary is all there is of the failing rank."""
    lines = _launcher(_log("nccl/raise-n2-r0"))
    at = next(i for i, line in enumerate(lines) if line.startswith(READ.summary_indent + "torch.OutOfMemoryError"))
    deeper = [*lines[:at], " " + lines[at], *lines[at + 1 :]]
    return [
        ("edge: a summary's error indented once", _text(lines)),
        ("edge: a summary's error indented deeper", _text(deeper)),
    ]


def _exit_zero() -> list[Case]:
    """A summary giving a rank exit code 1 and the same with 0: only an exit code above 0 is an error."""
    lines = (ROOT / "tests" / "own_output" / "kb-run-ddp-unused-2rank.log").read_text(encoding="utf-8").splitlines()
    start = lines.index(READ.summary_start)
    end = next(i for i, line in enumerate(lines) if line.startswith(READ.summary_end) and i > start)
    summary = lines[start : end + 1]
    code = next(i for i, line in enumerate(summary) if READ.summary_field.match(line) and "exitcode" in line)
    zero = [*summary[:code], re.sub(r": 1 \(pid", ": 0 (pid", summary[code]), *summary[code + 1 :]]
    assert zero != summary
    return [("edge: a summary's exit code 1", _text(summary)), ("edge: a summary's exit code 0", _text(zero))]


def _mismatch_line() -> str:
    """Rank 1's own mismatch error in nccl/collective-n2-r0: it runs ALLREDUCE, rank 0 BROADCAST."""
    line = _first(
        _log("nccl/collective-n2-r0"),
        lambda line: line.startswith("[default1]:[rank1]: ") and READ.mismatch.search(line),
    )
    assert "Rank 1 is running" in line and "but Rank 0 is running" in line
    return line


def _inferred_limit() -> list[Case]:
    """Mismatch errors naming a first differing rank at MAX_INFERRED_RANK and beyond it: the ranks below that one
    run the reporter's collective, up to MAX_INFERRED_RANK only, so the rank at the limit keeps what rank 1's
    error says of it (BROADCAST) and is a suspect beside the one beyond."""
    line, limit = _mismatch_line(), READ.max_inferred_rank
    at = line.replace("but Rank 0 is running", f"but Rank {limit} is running")
    beyond = _renamed(line, 2).replace("Rank 1 is running", "Rank 2 is running")
    beyond = beyond.replace("but Rank 0 is running", f"but Rank {limit + 1} is running")
    return [("edge: mismatches naming the ranks at and past the inferred limit", _text([at, beyond]))]


def _no_majority() -> list[Case]:
    """The no-majority tip's edges: both ranks of a two-rank mismatch with a third rank still training, and two
    ranks whose errors name three collectives (rank 2 running ALLGATHER), so three suspects among two ranks."""
    lines = _log("nccl/collective-n2-r0")
    third = _first(lines, lambda line: line.startswith("[default0]:step ")).replace("[default0]:", "[default2]:")
    line = _mismatch_line()
    other = (
        _renamed(line, 2)
        .replace("Rank 1 is running", "Rank 2 is running")
        .replace("OpType=ALLREDUCE", "OpType=ALLGATHER", 1)
    )
    return [
        ("edge: two suspects among three ranks", _text([*lines, third])),
        ("edge: three suspects among two ranks", _text([line, other])),
    ]


def _oom_line() -> str:
    """Rank 0's own error in nccl/raise-n2-r0 (CUDA out of memory)."""
    return _first(_log("nccl/raise-n2-r0"), lambda line: line.startswith("[default0]:[rank0]: torch.OutOfMemoryError"))


# a time stamp at each limit of a date and a clock, and just past it (datetime refuses those: no time then);
# a fraction of one digit and of logging's three (",123"), read as that many of six
CLOCKS = (
    "2026-11-26 06:00:59", "2026-11-26 06:00:60", "2026-11-26 06:59:00", "2026-11-26 06:60:00",
    "2026-11-26 23:00:00", "2026-11-26 24:00:00", "2026-12-31 06:00:00", "2026-13-01 06:00:00",
    "2026-00-01 06:00:00", "2026-11-30 06:00:00", "2026-11-31 06:00:00", "2026-11-00 06:00:00",
    "2028-02-29 06:00:00", "2026-02-29 06:00:00", "0001-01-01 06:00:00", "0000-01-01 06:00:00",
    "9999-12-31 23:59:59", "2026-11-26 06:00:00.5", "2026-11-26 06:00:00,123",
)  # fmt: skip


def _clock_edges() -> list[Case]:
    """Ranks raising the same error, each stamped at one of CLOCKS: every rank's time is in the answer."""
    line = _oom_line()
    return [("edge: clocks at their limits", _text([f"{_renamed(line, r)} ({c})" for r, c in enumerate(CLOCKS)]))]


def _prefix_limit() -> list[Case]:
    """A rank's error, its last line, under MAX_PREFIXES rank prefixes (torchrun's and torch's) and under one more:
    only that many are read off, so the one more leaves a line that is no error."""
    assert READ.max_prefixes == 2
    line = _oom_line()
    own = _renamed(line, 1)
    more = own.replace("[rank1]: ", "[rank1]: [rank1]: ", 1)
    return [
        ("edge: an error under MAX_PREFIXES prefixes", _text([line, own])),
        ("edge: an error under one more", _text([line, more])),
    ]


def _wrapper() -> list[Case]:
    """torchrun's ChildFailedError line, by its full dotted name, on a rank's line (a rank that launched a job of
    its own): a wrapper is known by the last part of its name, and wraps another rank's failure."""
    failed = _first(_log("nccl/raise-n2-r0"), lambda line: (m := READ.exc.match(line)) is not None and "." in m["type"])
    assert failed.rsplit(":", 1)[0].rsplit(".", 1)[-1] in READ.wrappers
    return [("edge: a wrapper's dotted name on a rank's line", _text([_oom_line(), "[default1]:[rank1]: " + failed]))]


def _event_times() -> list[Case]:
    """A rank's error (gloo/raise-n3-r1's, short enough to keep a stamp after it) first without a time stamp,
    then twice more stamped, the later stamp first: the rank's time is the earliest stamp of its errors."""
    line = _first(_log("gloo/raise-n3-r1"), lambda line: line.startswith("[default1]:[rank1]: RuntimeError: mat1"))
    assert len(line) < READ.error_chars
    stamped = [f"{line} (2026-11-26 06:00:0{s})" for s in (3, 1)]
    return [("edge: an error's time from its later copies", _text([line, *stamped, _renamed(line, 2)]))]
