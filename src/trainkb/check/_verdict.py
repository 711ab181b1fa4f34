"""Turn what each rank did into a status and a message a reader can act on."""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass, field
from typing import Any

from ..catalogue import Check, CheckStatus, ExpectHangs, ExpectRaises, ExpectWarns
from ._child import KB_ERROR_KEY, MEMORY_LIMIT_KEY, UNDELIVERED
from ._pattern import pattern_error, pattern_search

__all__ = ["RankRun", "Verdict", "early_verdict", "killed_from_outside", "verdict_of"]


@dataclass
class RankRun:
    """One rank: its reported outcome (None if it sent none) and exit code (None while running)."""

    rank: int
    outcome: dict[str, Any] | None = None
    exitcode: int | None = None
    output: str = ""
    supervisor_lost: bool = False  # its supervisor died before reporting (the snippet killed its parent?)
    reported: bool = False  # its outcome or its supervisor's final status arrived
    interrupted: bool = False  # its supervisor was stopped from outside (kb's forkserver died, kb stopped)
    pipe_error: str | None = None  # why kb stopped reading its result pipe (a message it refused)
    signalled: int | None = None  # a signal kb never sends that stopped its supervisor while the snippet ran

    @property
    def running(self) -> bool:
        return self.exitcode is None


@dataclass
class Verdict:
    status: CheckStatus
    message: str
    evidence: list[str] = field(default_factory=list)


def _type_matches(mro: list[str], wanted: str) -> bool:
    """A class in the MRO whose resolved name is ``wanted`` or ends with ``.wanted``; a class the
    snippet defines (``__main__``) satisfies only its own full name, so it cannot stand in for
    the library's class of the same name."""
    return any(name == wanted or (name.endswith("." + wanted) and not name.startswith("__main__.")) for name in mro)


def _short(name: str) -> str:
    return name.removeprefix("builtins.")


def _first_line(text: str, limit: int = 300) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[:limit] + "…"


def _signal_name(exitcode: int | None) -> str:
    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return f"signal {-exitcode}"


# Signals a process raises on itself by its own fault (a crash of the mutated code counts as the
# mutant's doing); any other signal was sent by someone: the snippet, the OOM killer, a limit, a user.
_CRASHES = frozenset({"SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGTRAP", "SIGSYS"})
_SIGNALLED = re.compile(r"rank \d+ died with (SIG\w+)|rank \d+: its supervisor process died \((SIG\w+)\)")


def killed_from_outside(message: str) -> str | None:
    """The signal named when a rank, or its supervisor, died of one that is not a crash of its own
    code; None otherwise. The OOM killer or a memory limit sends such a signal as readily as the
    snippet does, so that death tells nothing about the code that ran."""
    match = _SIGNALLED.match(message)
    name = match and (match[1] or match[2])
    return name if name and name not in _CRASHES else None


def _kb_fault(state: RankRun) -> str | None:
    """Why kb could not run the rank as asked or could not hear its outcome (never a verdict).

    Worded "kb ...": only a message that starts "rank " tells what the rank itself did, and a
    mutant is killed by that alone (see ``_mutants``)."""
    if state.outcome is not None and state.outcome.get(KB_ERROR_KEY):
        return f"kb could not run rank {state.rank} of the check as asked: {state.outcome[KB_ERROR_KEY]}"
    if state.interrupted:
        return (
            f"kb stopped rank {state.rank} before it finished: kb check's forkserver died (killed from "
            "outside, e.g. by the OOM killer) or kb check was stopped — not a verdict on the check"
        )
    if state.outcome is None and state.exitcode == UNDELIVERED:
        return (
            f"kb did not hear the outcome of rank {state.rank} (did the snippet close or replace kb's "
            "descriptors?) — not a verdict on the check"
        )
    return None


def _died(state: RankRun) -> str | None:
    """A description when the rank was killed by a signal it did not ask for, or kb failed it."""
    if (fault := _kb_fault(state)) is not None:
        return fault
    if state.pipe_error is not None:
        return f"rank {state.rank}: {state.pipe_error}"
    if state.signalled is not None:
        return (
            f"the supervisor of rank {state.rank} was interrupted by {_signal_name(-state.signalled)} while the "
            "snippet ran, a signal kb never sends it (did the snippet signal its parent, os.getppid()?); "
            "the snippet was stopped — not a verdict on the check"
        )
    if state.supervisor_lost:
        return (
            f"rank {state.rank}: its supervisor process died ({_signal_name(state.exitcode)}) before the "
            "snippet finished — a snippet must not kill its parent process (os.getppid())"
        )
    if state.outcome is None and state.exitcode == 0:
        # The snippet's end, and its os._exit(), send an outcome: a clean exit without one is an
        # exec of another program or an exit below Python, after which the snippet never ran on.
        return (
            f"rank {state.rank} exited with status 0 without reporting an outcome (did it exec another "
            "program?): the snippet did not run to its end"
        )
    if state.exitcode is None or state.exitcode >= 0 or state.outcome is not None:
        return None
    name = _signal_name(state.exitcode)
    extra = {"SIGXCPU": " (CPU-time limit exceeded)", "SIGKILL": " (killed; memory limit or OOM killer?)"}
    return f"rank {state.rank} died with {name}{extra.get(name, '')}"


def _raised(state: RankRun) -> dict[str, Any] | None:
    """What the rank's snippet raised (type, mro, message, traceback); None when it raised nothing."""
    raised: dict[str, Any] | None = state.outcome.get("raised") if state.outcome else None
    return raised


def _describe(state: RankRun) -> str:
    if (died := _died(state)) is not None:
        return died
    raised = _raised(state)
    if raised:
        message = _first_line(raised["message"])
        said = f"rank {state.rank} raised {_short(raised['type'])}" + (f": {message}" if message else "")
        return said + _memory_limit(raised)
    if state.exitcode not in (0, None):
        return f"rank {state.rank} exited with status {state.exitcode}"
    return f"rank {state.rank} finished normally"


def _memory_limit(raised: dict[str, Any]) -> str:
    """Where the rank ran out of memory under kb check's address-space limit: that limit and its option.
    Past the limit the kernel refuses every allocation whatever the machine has free; how large the
    refused one was, a MemoryError does not say, so the limit is named as what refuses, not proven."""
    limit = raised.get(MEMORY_LIMIT_KEY)
    if not isinstance(limit, int) or limit <= 0:
        return ""
    size = f"{limit // 1024**3}G" if limit % 1024**3 == 0 else f"{limit // 1024**2}M"
    return (
        f" — it ran under kb check's memory limit (--memory-limit {size}, an address-space limit), which refuses "
        "any allocation past it; give a larger --memory-limit, or 'off', if the check needs more"
    )


def _raise_matches(raised: dict[str, Any] | None, spec: Any) -> bool:
    return bool(raised and _type_matches(raised["mro"], spec.type) and pattern_search(spec.match, raised["message"]))


def _unusable_pattern(check: Check) -> Verdict | None:
    """An error when the expected pattern cannot run under RE2 (`kb lint` reports it too)."""
    spec = getattr(check.expect, "raises", None) or getattr(check.expect, "warns", None)
    if spec is None or (why := pattern_error(spec.match)) is None:
        return None
    return Verdict(CheckStatus.ERROR, f"the expected pattern /{spec.match}/ cannot run under RE2 ({why})")


def early_verdict(check: Check, ranks: list[RankRun]) -> Verdict | None:
    """A decision that need not wait for the other ranks (they may be blocked on this one)."""
    expect = check.expect
    if (unusable := _unusable_pattern(check)) is not None:
        return unusable
    if isinstance(expect, ExpectRaises):
        for state in ranks:
            raised = _raised(state)
            if raised is not None and _raise_matches(raised, expect.raises):
                return Verdict(
                    CheckStatus.PASSED,
                    f"rank {state.rank} raised {_short(raised['type'])} as expected",
                    [raised["traceback"]],
                )
        return None
    if isinstance(expect, ExpectHangs):
        return None
    for state in ranks:
        if _died(state) is not None:
            return Verdict(CheckStatus.ERROR, _died(state) or "")
        # a raise decides even while the exit still runs (what the main code raised comes first)
        if _raised(state) or (not state.running and state.exitcode != 0):
            return Verdict(CheckStatus.FAILED, _describe(state) + _expected(check))
    return None


def _expected(check: Check) -> str:
    expect = check.expect
    if isinstance(expect, ExpectWarns):
        return f" (expected a {expect.warns.category} warning matching /{expect.warns.match}/)"
    return " (expected a clean exit)"


def verdict_of(check: Check, ranks: list[RankRun], elapsed: float, deadline_hit: bool, limit: float) -> Verdict:
    """The final verdict once every rank has exited or the deadline passed."""
    expect = check.expect
    for state in ranks:
        if (fault := _kb_fault(state)) is not None:
            return Verdict(CheckStatus.ERROR, fault)
    if isinstance(expect, ExpectHangs):
        if any(state.running for state in ranks):
            alive = ", ".join(str(s.rank) for s in ranks if s.running)
            return Verdict(CheckStatus.PASSED, f"still running after {expect.hangs.seconds:g} s (rank {alive}); killed")
        what = "; ".join(_describe(s) for s in ranks)
        return Verdict(
            CheckStatus.FAILED, f"finished after {elapsed:.1f} s, expected a hang of {expect.hangs.seconds:g} s: {what}"
        )
    if (early := early_verdict(check, ranks)) is not None:
        return early
    for state in ranks:
        if (died := _died(state)) is not None:
            return Verdict(CheckStatus.ERROR, died)
    if deadline_hit:
        alive = ", ".join(str(s.rank) for s in ranks if s.running)
        return Verdict(CheckStatus.FAILED, f"timed out after {limit:g} s (rank {alive} still running)")
    if isinstance(expect, ExpectRaises):
        spec = expect.raises
        raisers = [(s, raised) for s in ranks if (raised := _raised(s))]
        if raisers:
            first, raised = raisers[0]
            return Verdict(
                CheckStatus.FAILED,
                f"{_describe(first)}; expected {spec.type} matching /{spec.match}/",
                [raised["traceback"]],
            )
        exited = [s for s in ranks if s.exitcode not in (0, None)]
        how = f"{_describe(exited[0])} without raising" if exited else "completed without raising"
        return Verdict(CheckStatus.FAILED, f"{how}; expected {spec.type} matching /{spec.match}/")
    if isinstance(expect, ExpectWarns):
        spec_w = expect.warns
        seen = [w for s in ranks for w in (s.outcome or {}).get("warnings", [])]
        for warning in seen:
            if _type_matches(warning["mro"], spec_w.category) and pattern_search(spec_w.match, warning["message"]):
                return Verdict(
                    CheckStatus.PASSED, f"warned {_short(warning['category'])} as expected", [warning["text"]]
                )
        shown = "; ".join(f"{_short(w['category'])}: {_first_line(w['message'], 120)}" for w in seen[:3])
        return Verdict(
            CheckStatus.FAILED,
            f"no {spec_w.category} matching /{spec_w.match}/ was emitted"
            + (f" (saw {len(seen)}: {shown})" if seen else " (no warnings at all)"),
        )
    return Verdict(CheckStatus.PASSED, "completed; its assertions held" if len(ranks) == 1 else "every rank completed")
