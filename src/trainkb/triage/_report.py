"""The triage as one short text block and as JSON (the `triage` object of docs/search.md)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .._terminal import printable
from ..ranklog import DECIDE, Triage

__all__ = ["reason", "to_json", "to_text"]


def reason(triage: Triage) -> str:
    """Why the culprit is named; a signal death is worded as one (site/static/triage.js words it the same)."""
    verdict = triage.verdict()
    if (
        triage.basis == "own-error"
        and triage.sole_culprit is not None
        and verdict is not None
        and verdict.how == "signal"
    ):
        found = DECIDE.signal.search(verdict.error or "")
        return DECIDE.killed.replace("{signal}", found[0] if found else DECIDE.some_signal)
    return DECIDE.basis[triage.basis]


def _when(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _clip(text: str, limit: int = 150) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(line: int | None, first_line: int) -> int | None:
    return None if line is None else line + first_line - 1


def to_json(triage: Triage, first_line: int = 1) -> dict[str, Any]:
    """Data for `--json`: every field of the text block, nothing removed when fields are added.

    ``first_line`` is the number of the input's first line when it is the tail of a longer output.
    """
    return {
        "culprits": triage.culprits,
        "sole_culprit": triage.sole_culprit,
        "basis": triage.basis,
        "reason": reason(triage),
        "root_cause_rank": triage.root_cause,
        "root_cause_is_victim": triage.root_cause_is_victim,
        "gap_seconds": triage.gap_seconds,
        "entry": triage.entry,
        "explained_rank": triage.explained_rank,
        "collect": triage.collect,
        "ranks": [
            {
                "rank": v.rank,
                "role": v.role,
                "how": v.how,
                "description": v.description,
                "error": v.error,
                "line": _line(v.line, first_line),
                "file": v.origin,
                "time": _when(v.time),
                "exitcode": v.exitcode,
                "collective": v.seq or None,
            }
            for v in triage.ranks
        ],
    }


def _where(line: int | None, origin: str | None, seconds: float | None) -> str:
    bits = [f"line {line}" if line and not origin else origin.rsplit("/", 3)[-1] if origin else ""]
    if seconds is not None:
        bits.append(datetime.fromtimestamp(seconds, UTC).strftime("%H:%M:%S"))
    text = ", ".join(b for b in bits if b)
    return f"  [{text}]" if text else ""


def _seq(seq: dict[str, object]) -> str:
    parts = []
    if seq.get("op"):
        parts.append(f"{seq['op']} SeqNum={seq.get('seq_num')}")
    if "last_enqueued" in seq:
        parts.append(f"last enqueued {seq['last_enqueued']}, completed {seq.get('last_completed')}")
    return f" ({'; '.join(parts)})" if parts else ""


def to_text(triage: Triage, heading: str = "kb triage", first_line: int = 1) -> str:
    """The block printed above the matches: culprit, what happened there, the victims, the gap.

    Terminal-safe: the errors and lines quoted from the ranks' output have their control characters
    spelled out (a pasted log may carry escape sequences)."""
    n = len(triage.ranks)
    if triage.sole_culprit is not None:
        head = f"rank {triage.sole_culprit} broke first — {reason(triage)}"
    elif triage.culprits:
        listed = ", ".join(str(r) for r in triage.culprits)
        head = (
            f"ranks {listed} failed on their own at about the same time"
            if triage.basis == "own-error"
            else f"cannot single out one rank: ranks {listed} are suspects"
        )
    else:
        head = "no culprit named — the output does not show which rank broke first"
    lines = [f"── {heading}: {n} rank{'s' if n != 1 else ''}; {head} ──"]
    order = sorted(triage.ranks, key=lambda v: (v.role not in ("culprit", "suspect"), v.rank))
    for v in order:
        what = _clip(v.error) if v.error and v.how not in ("silent",) else v.description
        if v.how == "silent" and v.exitcode is not None:
            sent = ", sent by the launcher" if v.exitcode == DECIDE.launcher_exitcode else ""
            what += f" (exit code {v.exitcode}{sent})"
        if v.how in ("timeout", "connection", "abort", "barrier", "sigterm") and v.error:
            what = f"{v.description}: {_clip(v.error, 110)}"
        where = _where(_line(v.line, first_line), v.origin, v.time)
        lines.append(f"  rank {v.rank:<3} {v.role:<8} {what}{_seq(v.seq)}{where}")
        if triage.entry and v.rank == triage.explained_rank:
            e = triage.entry
            said = "explained by" if e["confidence"] != "low" else "closest entry (several causes print this)"
            lines.append(f"           {said} {e['id']} {e['title']} [{e['confidence']}]  (kb show {e['id']})")
        if v.how == "silent" and v.last_line:
            lines.append(f"           its last line: {_clip(v.last_line, 110)}")
    if triage.root_cause_is_victim:
        lines.append(f'  torchrun\'s "Root Cause" names rank {triage.root_cause}, which only suffered the failure.')
    if triage.gap_seconds is not None:
        gap = "within a second of" if abs(triage.gap_seconds) < 1 else f"{triage.gap_seconds:.1f} s after"
        lines.append(f"  the first victim failed {gap} the culprit.")
    for tip in triage.collect:
        lines.append(f"  next: {tip}")
    return "\n".join(printable(line, newlines=False) for line in lines) + "\n"
