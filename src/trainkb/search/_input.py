"""Understand a paste: clean it, find the exception messages in it, and say what it is.

A paste is a Python traceback (possibly chained, possibly relayed by a launcher), a log
(NCCL, torchrun, the shell), or a prose description with an error quoted somewhere in
it. Search needs the lines with their original numbers (for evidence), the messages
weighted by how likely each is the real failure (the final exception of the last
traceback, or the root-cause rank of a torchrun failure), and the prose for the term
model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .._ownoutput import MARK, own_lines

__all__ = [
    "MAX_CHARS",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_CHARS",
    "Line",
    "LineRole",
    "Message",
    "Query",
    "QueryKind",
    "clean_lines",
    "parse",
    "paste_tail",
]

# THE paste limit: what search reads of a paste, its tail (tracebacks end at the bottom). The TUI's paste
# box keeps as much; readers of pipes and files keep more bytes (_tail.PIPE_TAIL_BYTES), for triage.
MAX_CHARS = 200_000
MAX_LINES = 5_000
MAX_OUTPUT_CHARS = 4 * 1024 * 1024  # what tells read of a whole output (its tail): a pipe's or a run's kept tail
MAX_LINE_CHARS = 2_000  # bound on what any regex or fuzzy comparison sees of one line
MAX_CONTINUATION = 30  # lines a multi-line exception message may run on
NEWLINE_SEARCH = 2_000  # characters past a cut searched for a line start, so the tail begins on a whole line
MAX_PREFIXES = 3  # "[rank0]: │ > text" stacks prefixes
ROOT_CAUSE_LINES = 14  # lines after "Root Cause" searched for its rank and traceback fields
SENTENCE_WORDS = 6  # words that make a plain line a sentence of prose
FAILURE_WEIGHT = 1.0  # an exception of the last traceback chain (of the root-cause rank): the failure
OTHER_WEIGHT = 0.9  # any other exception or warning
WRAPPER_WEIGHT = 0.5  # a wrapper that only relays another exception (ChildFailedError, "Caught X in ...")

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_PREFIX = re.compile(r"^\s*\[(?:rank|default)\s*(\d+)\]\s*:\s?|^\s*(?:>\s?)+|^\s*[│┃|]\s?")
_BOX = re.compile(r"^[\s│┃╭╮╰╯─━┌┐└┘]+|[\s│┃╭╮╰╯─━┌┐└┘]+$")

# a Python traceback, or the C++ backtrace c10 prints under a torch error ("Exception raised from ...")
_TB_HEADER = re.compile(r"Traceback \(most recent call last\)|\(most recent call first\):")
_FRAME = re.compile(  # a Python frame, an IPython frame or numbered source line, a caret marker line, a rich frame
    r'^\s*File "[^"]*", line \d+|^\s*(?:-+>\s*|❱\s*)?\d+\s|^\S+\.py in \S+\(|^<ipython-input-|^\s*\.\.\.$|'
    r"^\s*[~^]{3,}\s*$|^\S*\.py:\d+ in \S+$|^frame #\d+: "
)
_FRAME_START = re.compile(r'^\s*File "[^"]*", line \d+, in |^\S+\.py in \S+\(|^\S*\.py:\d+ in \S+$|^frame #\d+: ')
_CHAIN = re.compile(r"During handling of the above exception|The above exception was the direct cause")
_TYPE = (
    r"(?:[A-Za-z_]\w*\.)*(?:[A-Z]\w*(?:Error|Exception|Warning|Interrupt|Exit|Fault|Failure)|KeyboardInterrupt|"
    r"StopIteration|nccl[A-Z]\w*Error)"
)
# torch's NCCL check prints "NCCL error in: <file>:<line>, <message>" with no exception class of its own
_NCCL_LINE = re.compile(r"\bNCCL error in: [^,]*, (?P<msg>\S.*)$")
_EXC_LINE = re.compile(rf"^(?P<type>{_TYPE})(?::\s*(?P<msg>.*))?$")
_WARN_LINE = re.compile(rf"^\S+:\d+:\s*(?P<type>{_TYPE}):\s*(?P<msg>.*)$")
# a C++ exception that ended the process: "terminate called after throwing an instance of 'c10::Error'"
# is followed by "  what():  <message>"
_WHAT = re.compile(r"^what\(\):\s+(?P<msg>\S.*)$")
_EXC_INLINE = re.compile(rf"(?<![\w.])(?P<type>{_TYPE}):\s+(?P<msg>\S.*)$")
_WRAPPER = re.compile(r"^Caught \w+ in (?:DataLoader worker process|replica) \d+|^\s*$")
_WRAPPER_TYPES = frozenset({"ChildFailedError"})
_ROOT_CAUSE = re.compile(r"Root Cause \(first observed failure\)")
_LAUNCHER_FAILED = re.compile(r"elastic\.multiprocessing\.api:failed \(exitcode: -?\d+\)")
_FIELD = re.compile(r"^\s*(rank|exitcode|traceback)\s*:\s*(.*)$")
_LOGGY = re.compile(
    r"^\[?[EWIF]\d{4}|^\[?\d{4}-\d\d-\d\d|^(?:INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL)\b|NCCL|ProcessGroup|"
    r"\bKilled\b|Bus error|Segmentation fault|core dumped|\bexitcode\b|^\*{5,}|^[=\-]{10,}|^\s*\w[\w.]*:\d+:",
)
_SENTENCE = re.compile(r"[A-Za-z]{2,}")
# Context, not symptoms: what the user pasted around the failure to describe their set-up. These lines
# name options and packages that many entries mention, so they are kept out of the prose model and the
# fuzzy alignment (exact signatures still see them).
_PROGRESS = re.compile(r"\d+%\|.*\||\|\s*\d+/\d+\s*\[|\d\s*(?:it/s|s/it)\b")  # tqdm and similar progress bars
_COMMAND = re.compile(  # a shell command line, possibly behind a prompt and environment assignments
    r"^\s*(?:[$#>]\s*|\(\S+\)\s*(?:\S+[$#]\s*)?|\S+@\S+[$#]\s*)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
    r"(?:python[\d.]*|torchrun|accelerate|deepspeed|srun|sbatch|mpirun|bash|sh|llamafactory-cli|tune|"
    r"lightning|composer|CUDA_VISIBLE_DEVICES=\S*)\s+\S|\s\\$"
)
_OPTION = re.compile(r"(?:^|\s)--[A-Za-z][\w.\-]*")  # a command-line option; two or more make a command line
# an item of a configuration or key list dumped into a line: `num_processes: 4`, 'loss.beta=0.1', 'encoder.bn.weight'
# (keys and values are bounded: an unbounded key would rescan a long dotted line from every letter)
_DUMP_ITEM = re.compile(
    r"(?<![\w.\-])[A-Za-z_][\w.\-]{0,79}\s{0,3}[:=]\s{0,3}[^\s,;)\]'\"]{1,200}|"
    r"['\"][\w\-]{1,80}(?:\.[\w\-]{1,80}){1,40}['\"]"
)
MIN_DUMP_ITEMS = 3  # items in one line that make it a dump, not a remark about one setting
_DUMP_START = re.compile(r"^\s*(?:Namespace|\w*(?:Config|Arguments|Args))\(")  # a printed arguments object
_SETTING = re.compile(  # one configuration setting: `key: value` (YAML), `"key": value,` (JSON), `- key: value`
    r"^\s*(?:[-*]\s+)?[\"'`]?[A-Za-z_][\w.\-]*[\"'`]?\s*:(?!\s*[\"']?[-+]?(?:nan|inf)\b)\s*(?:[^\s(]+)?\s*$",
    re.IGNORECASE,
)
_ENVIRONMENT = re.compile(  # `pip list` rows, `transformers-cli env` / `collect_env` / accelerate env fields
    r"^\s*(?:[-*]\s+)?`?[\w.\-]+`?\s*(?:==|\s{2,}|\s+version:\s*)v?\d+(?:\.\d+)+\S*\s*$|"
    r"^\s*(?:[-*]\s+)?`?(?:Platform|Python|PyTorch|Torch|CUDA|cuDNN|CUDNN|Nvidia driver|GPU models?|OS|"
    r"Is CUDA available|Is debug build|GCC|Clang|CMake|Libc|Numpy|NumPy|DeepSpeed|Accelerate|Transformers|"
    r"Huggingface_hub|Safetensors|PEFT|TRL|Jax|JaxLib|Tensorflow|Flax|Using GPU in script|"
    r"Using distributed or parallel set-up in script|`[\w\-]+`)\b[^:]{0,40}:"
)


# what a line is in a traceback or log: an exception or log message, a stack frame, a "Traceback" header,
# a line that only sets the scene (context), or anything else
LineRole = Literal["text", "frame", "header", "message", "context"]
# what the paste as a whole looks like
QueryKind = Literal["traceback", "log", "prose"]


@dataclass(frozen=True)
class Line:
    """One line of the paste, cleaned; ``number`` is 1-based in the original input."""

    number: int
    text: str
    rank: int | None = None
    role: LineRole = "text"


@dataclass(frozen=True)
class Message:
    """An exception or warning message, possibly spread over several lines."""

    type: str | None
    text: str
    line: int  # index into Query.lines of the line that carries the type
    weight: float


@dataclass
class Query:
    kind: QueryKind
    lines: list[Line]
    messages: list[Message] = field(default_factory=list)
    prose: str = ""
    # the paste holds a launcher's failure summary (torchrun's ChildFailedError) and no exception of
    # the failing worker: the real error is above the summary, not in the paste
    launcher_only: bool = False
    # the paste stops inside a traceback, before its exception: the failure itself is not in it
    cut: bool = False


def paste_tail(text: str) -> tuple[str, int]:
    """The last ``MAX_CHARS`` characters of a paste, starting on a whole line when one starts just past
    the cut, and how many lines came before them."""
    if len(text) <= MAX_CHARS:
        return text, 0
    cut = len(text) - MAX_CHARS
    newline = text.find("\n", cut)
    cut = newline + 1 if 0 <= newline < cut + NEWLINE_SEARCH else cut
    return text[cut:], text.count("\n", 0, cut)


def _cap(text: str) -> tuple[str, int]:
    """The tail of ``text`` within the limits, and how many lines were dropped before it."""
    text, dropped = paste_tail(text)
    if text.count("\n") >= MAX_LINES:
        parts = text.split("\n")
        dropped += len(parts) - MAX_LINES
        text = "\n".join(parts[-MAX_LINES:])
    return text, dropped


def _clean(raw: str) -> tuple[str, int | None]:
    """Drop colour codes, progress-bar redraws, rank/quote prefixes and box drawing."""
    if "\r" in raw:
        segments = [s for s in raw.split("\r") if s.strip()]
        raw = segments[-1] if segments else ""
    raw = _CONTROL.sub("", _ANSI.sub("", raw[: MAX_LINE_CHARS * 2]))
    rank = None
    for _ in range(MAX_PREFIXES):
        match = _PREFIX.match(raw)
        if not match or not match.group(0):
            break
        if match.group(1) is not None:
            rank = int(match.group(1))
        raw = raw[match.end() :]
    return _BOX.sub("", raw)[:MAX_LINE_CHARS].rstrip(), rank


def clean_lines(text: str) -> list[str]:
    """Every line of a whole output (its last ``MAX_OUTPUT_CHARS``), cleaned as a paste's lines are."""
    raws = text[-MAX_OUTPUT_CHARS:].split("\n")
    own = own_lines(raws) if MARK in text else set()  # kb's own advice in a saved log: not the output
    return ["" if index in own else _clean(raw)[0] for index, raw in enumerate(raws)]


def _split(text: str | bytes, first_line: int, skip: frozenset[int] = frozenset()) -> list[Line]:
    """The paste's lines, numbered; kb's own blocks and the lines numbered in ``skip`` are left blank."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    text, dropped = _cap(text)
    raws = text.split("\n")
    own = own_lines(raws) if MARK in text else set()  # kb's own advice in a saved log: not the failure
    lines = []
    for offset, raw in enumerate(raws):
        number = first_line + dropped + offset
        cleaned, rank = _clean(raw) if offset not in own and number not in skip else ("", None)
        lines.append(Line(number, cleaned, rank))
    return lines


def _exception_at(text: str, in_traceback: bool) -> tuple[str, str] | None:
    """(type, message) when ``text`` is an exception or warning line."""
    stripped = text.strip().strip("`")
    for pattern in (_WARN_LINE, _EXC_LINE):
        match = pattern.match(stripped)
        if match and (match.group("msg") or in_traceback or pattern is _WARN_LINE or "." in match.group("type")):
            return match.group("type"), (match.group("msg") or "").strip()
    match = _WHAT.match(stripped)
    if match:
        return "c10::Error", match.group("msg").strip()
    match = _EXC_INLINE.search(stripped)
    if match:
        return match.group("type"), match.group("msg").strip().rstrip("`'\"")
    match = _NCCL_LINE.search(stripped)
    if match:
        return "NCCLError", match.group("msg").strip().rstrip("`'\"")
    return None


def _is_structural(text: str) -> bool:
    return bool(not text.strip() or _TB_HEADER.search(text) or _CHAIN.search(text) or _FRAME.match(text))


def _collect(lines: list[Line]) -> tuple[list[Line], list[tuple[str, str, int, int]]]:
    """Mark roles and find (type, message, line index, traceback block) of every exception."""
    out: list[Line] = []
    found: list[tuple[str, str, int, int]] = []
    block, in_tb, i = 0, False, 0
    while i < len(lines):
        line = lines[i]
        text = line.text
        if _TB_HEADER.search(text):
            in_tb = True
            out.append(Line(line.number, text, line.rank, "header"))
            i += 1
            continue
        if _CHAIN.search(text):
            out.append(Line(line.number, text, line.rank, "header"))
            i += 1
            continue
        if _FRAME_START.match(text):  # a paste may begin mid-traceback, without its header
            in_tb = True
        if in_tb and _FRAME.match(text):
            out.append(Line(line.number, text, line.rank, "frame"))
            i += 1
            # the source line under a frame is code, not a message (pastes often lose its indent)
            if (
                i < len(lines)
                and lines[i].text.strip()
                and not _is_structural(lines[i].text)
                and _exception_at(lines[i].text, True) is None
            ):
                out.append(Line(lines[i].number, lines[i].text, lines[i].rank, "frame"))
                i += 1
            continue
        hit = _exception_at(text, in_tb)
        if hit is None:
            out.append(line)
            i += 1
            continue
        kind, message = hit
        out.append(Line(line.number, text, line.rank, "message"))
        at = len(out) - 1
        i += 1
        extra = 0
        runs_on = in_tb or not message or message.endswith(":")
        while (
            i < len(lines)
            and extra < MAX_CONTINUATION
            and not _is_structural(lines[i].text)
            and (runs_on or lines[i].text[:1].isspace())
            and (not message or _exception_at(lines[i].text, False) is None)
        ):
            message = f"{message} {lines[i].text.strip()}".strip()
            out.append(Line(lines[i].number, lines[i].text, lines[i].rank, "message"))
            i += 1
            extra += 1
        found.append((kind, message, at, block))
        if in_tb:
            nxt = lines[i].text if i < len(lines) else ""
            if not _CHAIN.search(nxt) and not (
                not nxt.strip() and i + 1 < len(lines) and _CHAIN.search(lines[i + 1].text)
            ):
                block += 1
            in_tb = False
        else:  # a warning or error printed outside a traceback is not part of the next traceback's chain
            block += 1
    return out, found


def _root_cause(lines: list[Line]) -> tuple[int | None, list[tuple[str, int]]]:
    """The failing rank and its `traceback :` field from a torchrun ChildFailedError summary."""
    for index, line in enumerate(lines):
        if not _ROOT_CAUSE.search(line.text):
            continue
        rank, extra = None, []
        for j in range(index + 1, min(index + ROOT_CAUSE_LINES, len(lines))):
            match = _FIELD.match(lines[j].text)
            if not match:
                continue
            if match.group(1) == "rank":
                digits = re.match(r"\d+", match.group(2))
                rank = int(digits.group(0)) if digits else None
            elif match.group(1) == "traceback" and "enable traceback" not in match.group(2):
                extra.append((match.group(2).strip(), j))
        return rank, extra
    return None, []


def _is_context(text: str) -> bool:
    """A configuration dump, command line, environment listing or progress bar line."""
    if (
        _PROGRESS.search(text)
        or _COMMAND.search(text)
        or _SETTING.match(text)
        or _ENVIRONMENT.match(text)
        or _DUMP_START.match(text)
    ):
        return True
    options = _OPTION.findall(text)  # a command line's options, unless they are named inside a sentence
    return len(options) >= 2 and len(_SENTENCE.findall(_OPTION.sub(" ", text))) < SENTENCE_WORDS


def _prose_line(text: str) -> str:
    """A line for the prose model, without the items of a configuration or key list dumped into it."""
    return _DUMP_ITEM.sub(" ", text) if len(_DUMP_ITEM.findall(text)) >= MIN_DUMP_ITEMS else text


def _prose_of(lines: list[Line]) -> str:
    """The text the prose model reads: text and message lines, without dumped configurations."""
    return "\n".join(_prose_line(line.text) for line in lines if line.role in ("text", "message"))


def _real(found: list[tuple[str, str, int, int]]) -> list[tuple[str, str, int, int]]:
    """The exceptions that are not a wrapper relaying another one."""
    return [f for f in found if f[0].rsplit(".", 1)[-1] not in _WRAPPER_TYPES and not _WRAPPER.match(f[1])]


def _launcher_only(lines: list[Line], found: list[tuple[str, str, int, int]]) -> bool:
    """True when a launcher's failure summary is all the paste says about the failure."""
    summary = any(f[0].rsplit(".", 1)[-1] in _WRAPPER_TYPES for f in found) or any(
        _ROOT_CAUSE.search(line.text) or _LAUNCHER_FAILED.search(line.text) for line in lines
    )
    return summary and not _real(found) and not _root_cause(lines)[1]


def _weigh(lines: list[Line], found: list[tuple[str, str, int, int]]) -> list[Message]:
    """Weight 1.0 for the failure itself: the last traceback block (root-cause rank first)."""
    root_rank, extra = _root_cause(lines)
    real = _real(found)
    if root_rank is not None and any(lines[f[2]].rank == root_rank for f in real):
        real = [f for f in real if lines[f[2]].rank == root_rank]
    last_block = real[-1][3] if real else -1
    genuine = {f[2] for f in real}
    messages = []
    for kind, text, at, block in found:
        if at not in genuine:
            weight = WRAPPER_WEIGHT
        elif block == last_block:
            weight = FAILURE_WEIGHT
        else:
            weight = OTHER_WEIGHT
        messages.append(Message(kind, text, at, weight))
    messages += [Message(None, text, at, FAILURE_WEIGHT) for text, at in extra]
    return messages


def _kind(lines: list[Line], messages: list[Message]) -> QueryKind:
    if any(line.role in ("header", "frame") for line in lines) or any(
        (m.type or "").endswith("ChildFailedError") for m in messages
    ):
        return "traceback"
    loggy = sum(1 for line in lines if line.role == "message" or _LOGGY.search(line.text))
    wordy = sum(
        1
        for line in lines
        if line.role == "text" and len(_SENTENCE.findall(line.text)) >= SENTENCE_WORDS and not _LOGGY.search(line.text)
    )
    return "log" if loggy and loggy >= wordy else "prose"


def parse(text: str | bytes, first_line: int = 1, skip: frozenset[int] = frozenset()) -> Query:
    """Split, clean and classify ``text``; never raises on any input.

    ``first_line`` numbers the text's first line, for a caller that passes only the tail of
    a longer output and wants evidence to point into the whole of it. The lines numbered in
    ``skip`` are read as blank (another rank's teardown, see _ranks.py).
    """
    lines, found = _collect(_split(text, first_line, skip))
    lines = [
        Line(line.number, line.text, line.rank, "context") if line.role == "text" and _is_context(line.text) else line
        for line in lines
    ]
    messages = _weigh(lines, found)
    last = next((line.role for line in reversed(lines) if line.text.strip()), None)
    cut = last in ("header", "frame")
    return Query(_kind(lines, messages), lines, messages, _prose_of(lines), _launcher_only(lines, found), cut)
