"""The rules triage reads a multi-rank run by: its patterns, limits, word lists and wording, declared once.

`kb triage` (_read.py, _decide.py) runs these objects; the site's triage.js runs the same values, which
``trainkb.search.contract`` serialises field by field into the search index (a regex as the JavaScript
regex of the same meaning). A changed pattern, limit or sentence reaches the browser at the next build,
and the JavaScript holds no copy to drift.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["DECIDE", "READ", "DecideRules", "ReadRules"]

# lines worth a closer look all contain one of these; everything else is progress. Each starts with
# an upper-case letter: `re` then skips ahead to the next character that can start one, and typical
# progress lines ("[default3]:step 7 loss 0.43") hold few. torchrun's summary fields are lower
# case, so the summary block ("Failures:" ... "=====") is read line by line instead.
_KEYWORDS = (
    "Error",
    "Exception",
    "Traceback",
    "Timed out",
    "Timeout",
    "Watchdog",
    "SeqNum",
    "Signal ",
    "Sending process",
    "Root Cause",
    "Failures:",
    "NCCL",
    "Rank ",
    "Interrupt",
    "Killed",
    "Segmentation fault",
    "Connection ",
    "Fatal Python error",
    "Detected mismatch",
)


@dataclass(frozen=True)
class ReadRules:
    """How the reader finds ranks, their errors, torchrun's summary and time stamps in the output."""

    context_chars: int  # characters before an exception line searched for that rank's traceback
    max_events: int  # per rank: a rank that repeats an error thousands of times keeps the first ones
    tail_lines: int  # per rank: the lines kept to search the catalogue with
    max_summary_lines: int  # torchrun's summary is far shorter; past this, "Failures:" was not its start
    max_inferred_rank: int  # agreements implied by one mismatch error, at most (hostile input stays cheap)
    last_line_chars: int  # characters kept of each rank's last line
    error_chars: int  # characters kept of an error line
    max_prefixes: int  # rank prefixes read off the front of one line (torchrun's tag, then torch's own)
    keywords: re.Pattern[str]  # a line holding none of these is progress, not looked at
    prefix: re.Pattern[str]  # torch's `[rank3]:` and `torchrun --tee`'s `[default3]:`
    nccl_rank: re.Pattern[str]  # NCCL's own "[Rank 3]" inside a line
    exc: re.Pattern[str]  # an exception line: its type, then its message
    summary_field: re.Pattern[str]  # one field of torchrun's failure summary
    summary_rank: re.Pattern[str]
    exitcode: re.Pattern[str]
    sent: re.Pattern[str]  # the launcher signalling a worker while tearing the job down
    watchdog: re.Pattern[str]  # NCCL's watchdog naming the collective that timed out
    enqueued: re.Pattern[str]  # NCCL's counters of the collectives a rank enqueued and completed
    fingerprint: re.Pattern[str]  # TORCH_DISTRIBUTED_DEBUG=DETAIL's collective fingerprints
    signal_trace: re.Pattern[str]  # torchrun's summary naming the signal that ended a rank
    fatal: re.Pattern[str]  # faulthandler's line in the dying rank's own stderr
    iso: re.Pattern[str]  # logging's "[2024-05-01 12:00:00,123]", ISO, torchrun's "2024-05-01_12:00:00"
    glog: re.Pattern[str]  # glog's "E0501 12:00:00.1" (no year)
    timeout: re.Pattern[str]  # how a rank's error reads when it only timed out waiting on a peer
    connection: re.Pattern[str]  # ... when it lost the connection to a peer
    mismatch: re.Pattern[str]  # ... when it reports the collective mismatch
    barrier: re.Pattern[str]  # ... when the debug barrier before a collective failed because of a peer
    wrappers: frozenset[str]  # exception types that only wrap or end a rank's failure, never cause it
    summary_start: str  # the line that opens torchrun's failure summary
    summary_root: str  # ... and the one that opens its root-cause part
    summary_end: str  # what the line that closes it starts with
    mismatch_report: str  # a line holding this reports a mismatch: its fingerprints imply other ranks' collectives
    watchdog_end: str  # the watchdog's line is kept up to this (what follows is the time it ran and the timeout)
    no_error_file: str  # the summary's error_file field when the rank wrote none
    summary_traceback: str  # the summary's traceback field starts with this when it holds the rank's traceback
    summary_indent: str  # that traceback's lines are indented by this; its exception line by exactly this


@dataclass(frozen=True)
class DecideRules:
    """How the ranks' endings become culprits and victims, and the words the verdict uses."""

    tie_seconds: float  # torchrun's summary and error files stamp whole seconds
    victim_kinds: tuple[str, ...]  # event kinds that show a rank suffered a peer's failure, the most telling first
    waited: tuple[str, ...]  # a victim's endings that show it waited on a peer
    timed_out: tuple[str, ...]  # ... and those a hung peer causes (it closes no connection)
    frame: re.Pattern[str]  # a traceback frame: where a suspect's own code called its collective
    aborted: re.Pattern[str]  # a line saying the rank was aborted: torchrun's summary, or faulthandler's own line
    gloo: re.Pattern[str]  # an error of the gloo backend (its transport's source path, ProcessGroupGloo)
    nccl: re.Pattern[str]  # an error or watchdog line of the NCCL backend
    signal: re.Pattern[str]  # the signal's name in the error of a rank killed by a signal
    killed: str  # the reason given for a culprit killed by a signal, in place of its basis's
    some_signal: str  # {signal} of ``killed`` when the error names none
    no_majority_ranks: int  # ranks of a job that, all suspects of a mismatch, leave no third to side with either
    launcher_signal: str  # the signal torchrun sends a worker when it tears the job down
    launcher_exitcode: int  # the exit code of a worker that signal ended
    library_paths: tuple[str, ...]  # a frame whose file path holds one of these is not the rank's own code
    call_site: str  # where a suspect's code called its collective: {file}, {line}, then ``call_code`` when known
    call_code: str  # the source line of that call, {code}
    suspect_site: str  # one suspect's call site in the no-majority tip, {rank} and {site}
    suspect_sites: str  # the suspects' call sites after that tip, {sites} joined by ``sites_joiner``
    sites_joiner: str
    tee_tags: tuple[str, ...]  # a rank whose last line starts with one of these had every line tagged (--tee, a file)
    how: Mapping[str, str]  # how a rank ended, as a person reads it
    basis: Mapping[str, str]  # why the culprits were named, by the basis of the verdict
    tips: Mapping[str, str]  # what to collect next time, by the situation that calls for it


READ = ReadRules(
    context_chars=6_000,
    max_events=64,
    tail_lines=60,
    max_summary_lines=5_000,
    max_inferred_rank=1024,
    last_line_chars=300,
    error_chars=400,
    max_prefixes=2,
    keywords=re.compile("|".join(re.escape(k) for k in _KEYWORDS)),
    prefix=re.compile(r"\[(default|rank)(\d+)\]:\s?"),
    nccl_rank=re.compile(r"\bRank (\d+)\]"),
    exc=re.compile(
        r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit|Failure))"
        r"(?::\s?(?P<msg>.*))?$"
    ),
    summary_field=re.compile(r"^\s{1,4}(time|rank|exitcode|error_file|traceback)\s*:\s?(.*)$"),
    summary_rank=re.compile(r"^(\d+)(?: \(local_rank: (\d+)\))?"),
    exitcode=re.compile(r"^(-?\d+) \(pid: (\d+)\)"),
    sent=re.compile(r"Sending process (\d+) closing signal (SIG[A-Z]+)"),
    watchdog=re.compile(
        r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(\d+), OpType=(\w+)"
        r"(?:, NumelIn=(\d+))?"
    ),
    enqueued=re.compile(r"[Ll]ast enqueued (?:NCCL )?work: (-?\d+), last completed (?:NCCL )?work: (-?\d+)"),
    # older releases print no SequenceNumber; the key compared is sequence number, op type and first shape
    fingerprint=re.compile(
        r"Rank (\d+) is running collective: CollectiveFingerPrint\((?:SequenceNumber=(\d+), )?"
        r"OpType=(\w+)(?:, TensorShape=(\[[^\]]*\]))?"
    ),
    signal_trace=re.compile(r"Signal (\d+) \((SIG[A-Z]+)\) received by PID (\d+)"),
    fatal=re.compile(r"^Fatal Python error: (Aborted|Segmentation fault|Bus error|Floating point exception)\b"),
    iso=re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T_](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,6}))?"),
    glog=re.compile(r"\b[EWIF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})\b"),
    timeout=re.compile(
        r"Timed out waiting \d+ms|Watchdog caught collective operation timeout|timed out|"
        r"[Tt]imeout at NCCL work|wait timeout after \d+ms",
        re.I,
    ),
    connection=re.compile(
        r"Connection (?:closed|reset) by peer|Broken pipe|remote process exited|"
        r"NCCL communicator was aborted|ncclRemoteError|[Ss]ocket [Tt]imeout|"
        r"failed to recv, got 0 bytes|Connection refused",
        re.I,
    ),
    mismatch=re.compile(r"Detected mismatch between collectives"),
    barrier=re.compile(
        r"successfully reached monitoredBarrier, but received errors|"
        r"Monitored Barrier encountered error"
    ),
    wrappers=frozenset({"ChildFailedError", "SystemExit", "KeyboardInterrupt"}),
    summary_start="Failures:",
    summary_root="Root Cause (first observed failure)",
    summary_end="=====",
    mismatch_report="Detected mismatch",
    watchdog_end=" ran for",
    no_error_file="<N/A>",
    summary_traceback="Traceback",
    summary_indent="  ",
)

DECIDE = DecideRules(
    tie_seconds=1.0,
    victim_kinds=("mismatch", "barrier", "timeout", "connection"),
    waited=("timeout", "connection", "abort", "barrier"),
    timed_out=("timeout", "abort", "barrier"),
    frame=re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in \S+'),
    aborted=re.compile(r"SIGABRT|Aborted$"),
    gloo=re.compile(r"\bgloo\b|ProcessGroupGloo"),
    nccl=re.compile(r"NCCL"),
    signal=re.compile(r"\bSIG[A-Z0-9]+\b"),
    killed="it was killed by {signal}",
    some_signal="a signal",
    no_majority_ranks=2,
    launcher_signal="SIGTERM",
    launcher_exitcode=-15,
    library_paths=("site-packages", "/torch/"),
    call_site="{file} line {line}",
    call_code=", `{code}`",
    suspect_site="rank {rank}: {site}",
    suspect_sites=" ({sites})",
    sites_joiner="; ",
    tee_tags=("[default", "file"),
    how=MappingProxyType(
        {
            "timeout": "timed out waiting in a collective",
            "connection": "lost the connection to a peer",
            "mismatch": "reported the collective mismatch",
            "barrier": "failed in the debug barrier before a collective because of a peer",
            "sigterm": "stopped by the launcher (SIGTERM)",
            "abort": "aborted by the NCCL watchdog after its timeout (SIGABRT)",
            "exception": "raised",
            "signal": "killed by a signal",
            "exited": "exited with an error and no traceback",
            "silent": "no error of its own",
            "none": "no error seen",
        }
    ),
    basis=MappingProxyType(
        {
            "own-error": "its own error came first",
            "mismatch": "its collective differs from the other ranks' (TORCH_DISTRIBUTED_DEBUG fingerprints)",
            "behind": "it is behind the other ranks in the collective sequence (NCCL watchdog counters)",
            "silent": "it reported no error while its peers timed out or lost their connection to it",
            "none": "no rank shows an error of its own",
        }
    ),
    tips=MappingProxyType(
        {
            "no_majority": (
                "two ranks entered different collectives and there is no third to side with either: the output "
                "cannot tell which one left the common path; compare the line each suspect's traceback calls its "
                "collective from"
            ),
            "tie": (
                "the ranks named in the mismatch errors split evenly: read every rank's own mismatch error (one per "
                "rank, naming its collective) to see which side the others are on"
            ),
            "barrier": (
                "the ranks failed in the barrier TORCH_DISTRIBUTED_DEBUG=DETAIL runs before each collective, which "
                "rank 0 coordinates: ranks that reached it and gave up waiting for rank 0 point at rank 0 arriving "
                "late (stuck, slow, or starved of CPU); read rank 0's log, and a longer process-group timeout tells "
                "a slow rank 0 from a stuck one"
            ),
            "ended_first": (
                "the peers lost their connection to a rank that ended first, and no rank here did: a rank that "
                "exited without an error (exit code 0) leaves no line of its own unless every line is tagged"
            ),
            "all_victims": (
                "every rank in this output is a victim: the one that broke is not in it (another node, or a "
                "rank whose lines were cut off); read that rank's own log"
            ),
            "flight_recorder": (
                "TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1: Flight Recorder dumps each rank's "
                "last collectives on a timeout (`torchfrtrace` lines them up)"
            ),
            "detail": "TORCH_DISTRIBUTED_DEBUG=DETAIL: a mismatched collective raises naming both ranks",
            # gloo has no NCCL watchdog to dump: py-spy (https://pypi.org/project/py-spy/) prints a live
            # process's Python stacks; DETAIL wraps gloo groups too (https://github.com/pytorch/pytorch/pull/124447)
            "stack": (
                "py-spy dump --pid PID on each rank while it hangs: every thread's Python stack shows which "
                "collective, called from which line, each rank waits in (TORCH_NCCL_* settings do not apply to gloo)"
            ),
            "summary": (
                "keep torchrun's own output too (kb run, or 2>&1 | tee): its failure summary gives each rank's "
                "exit code and signal, which per-rank logs lack"
            ),
            "tee": "torchrun --tee 3 (or --log-dir DIR): every line tagged with its rank, one log per rank",
            "record": (
                "decorate the entry point with torch.distributed.elastic.multiprocessing.errors.record: "
                "torchrun's summary then carries each rank's traceback"
            ),
        }
    ),
)
