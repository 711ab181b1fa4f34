"""What would help when search abstains, said for what the paste holds.

"Not in the catalogue" is only half an answer at 3 a.m.: the paste may lack the very lines
that name the failure (a launcher summary without the worker's traceback, a log without its
exception, a description without the error). The texts are data, so the browser port reads
the same ones from the exported index.
"""

from __future__ import annotations

from ._input import FAILURE_WEIGHT, Query

__all__ = ["ADVICE", "advice"]

ADVICE_MESSAGE_CHARS = 100  # characters of the unknown exception quoted back
ADVICE = {
    "launcher": "Only the launcher's failure summary is here; the failing worker's own traceback is above it "
                "in the log. Paste the lines above the summary (the first failing rank's traceback), rerun with "
                "`torchrun --tee 3` or `--log-dir DIR` to keep each rank's output, or run the job under `kb run`.",
    "exception": "No entry knows `{message}`. Paste the whole exception chain (every traceback above \"During "
                 "handling of the above exception\" or \"The above exception was the direct cause\") and the "
                 "output just before it: the first exception is often the cause.",
    "cut": "The traceback stops before its last line. Paste it to the end, where the exception type and "
           "message are.",
    "log": "There is no exception in this output. Paste the traceback (from \"Traceback (most recent call "
           "last):\" to the error line), or run the job under `kb run -- <command>` to catch it.",
    "prose": "A description alone rarely names one cause. Paste the error output itself: the traceback, or "
             "the log lines around the failure.",
}


def advice(query: Query) -> str:
    """The advice for a paste search could not explain."""
    if query.launcher_only:
        return ADVICE["launcher"]
    failures = [m for m in query.messages if m.weight >= FAILURE_WEIGHT and m.type]
    if failures:
        last = failures[-1]
        message = f"{last.type}: {last.text}" if last.text else last.type or ""
        if len(message) > ADVICE_MESSAGE_CHARS:
            message = message[:ADVICE_MESSAGE_CHARS].rstrip() + "…"
        return ADVICE["exception"].replace("{message}", message)
    if query.kind == "traceback":
        return ADVICE["cut"]
    return ADVICE["log"] if query.kind == "log" else ADVICE["prose"]
