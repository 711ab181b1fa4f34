"""The tail of a stream read to its end in bounded memory.

`python train.py 2>&1 | kb search` (or `| kb tui`) may pipe gigabytes: the failure is at the
end, and the writer must never block on a reader that stopped reading, nor die of a broken
pipe. So the stream is read to its end and only the last few megabytes are kept.
"""

from __future__ import annotations

import os
import stat
import sys
from collections import namedtuple

TYPE_CHECKING = False  # typing's flag, without importing typing (a warm `kb search` never needs it)
if TYPE_CHECKING:
    from typing import BinaryIO, NamedTuple

__all__ = [
    "PIPE_TAIL_BYTES",
    "RUN_TAIL_BYTES",
    "SEEK_ABOVE",
    "TailRead",
    "decode_log",
    "log_encoding",
    "read_tail",
    "skip_to_tail",
]

# Kept of a pipe or file, more than the paste limit (search.MAX_CHARS, what search reads): a launcher's
# log names the rank that broke first well above the last traceback, and triage reads every line kept.
PIPE_TAIL_BYTES = 4 * 1024 * 1024
# `kb run`'s ring buffer of a job's output, held for the job's whole life (days), so smaller than a pipe's
# tail; still more than search reads, for a one-rank job's log (`--tail-bytes` changes it).
RUN_TAIL_BYTES = 256 * 1024
# A regular file longer than this is not read whole: kb seeks to its tail (a 20 GB log would take
# minutes), at the cost of not knowing how many lines came before. Below it, reading all of it
# costs well under a second and keeps line numbers exact.
SEEK_ABOVE = 256 * 1024 * 1024
CHUNK_BYTES = 1024 * 1024
NEWLINE_SEARCH = 2_000  # bytes past a cut searched for a line start, so the tail begins on a whole line


if TYPE_CHECKING:

    class TailRead(NamedTuple):
        data: bytes  # the tail kept
        dropped: int  # lines before it
        size: int  # bytes read in all: more than ``data`` when the start was cut

else:  # the same tuple, made without importing typing
    TailRead = namedtuple("TailRead", ["data", "dropped", "size"])


def read_tail(stream: BinaryIO, keep: int = PIPE_TAIL_BYTES) -> TailRead:
    """The last ``keep`` bytes of ``stream`` read to its end, how many lines came before them, and how many
    bytes were read.

    Trimmed only when twice over the limit, so each byte is copied a bounded number of times.
    The kept part starts after a newline when one lies just past the cut (never the last byte:
    a single long line ending in a newline keeps its tail rather than nothing).
    """
    buffer, dropped, cut_any, size = bytearray(), 0, False, 0
    while chunk := stream.read(CHUNK_BYTES):
        buffer += chunk
        size += len(chunk)
        if len(buffer) > 2 * keep:
            dropped += buffer.count(b"\n", 0, len(buffer) - keep)
            del buffer[: len(buffer) - keep]
            cut_any = True
    if len(buffer) > keep:
        dropped += buffer.count(b"\n", 0, len(buffer) - keep)
        del buffer[: len(buffer) - keep]
        cut_any = True
    if cut_any:
        newline = buffer.find(b"\n", 0, NEWLINE_SEARCH)
        if 0 <= newline < len(buffer) - 1:
            dropped += 1
            del buffer[: newline + 1]
    return TailRead(bytes(buffer), dropped, size)


def skip_to_tail(handle: BinaryIO, keep: int) -> int:
    """For a regular file with more than SEEK_ABOVE bytes left, seek to its last ``keep`` bytes (to the
    line start just past that point, when there is one); how many bytes were skipped, 0 when none.
    A pipe or a device is left as it is: only reading it to its end reaches its tail."""
    try:
        info = os.fstat(handle.fileno())
        position = handle.tell()
    except (OSError, ValueError):  # no descriptor (a test's BytesIO), or not seekable
        return 0
    if not stat.S_ISREG(info.st_mode) or info.st_size - position <= max(SEEK_ABOVE, keep):
        return 0
    start = info.st_size - keep
    handle.seek(start)
    head = handle.read(NEWLINE_SEARCH)
    newline = head.find(b"\n")
    if 0 <= newline < len(head) - 1:
        start += newline + 1
    handle.seek(start)
    return start - position


_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # codecs.BOM_UTF16_LE, _BE: what Windows PowerShell 5's `>` writes first


def log_encoding(head: bytes) -> str:
    """The encoding of a log that starts with ``head``: UTF-16 after its byte-order mark (read as UTF-8,
    every other character was a NUL and no line matched), else UTF-8."""
    return "utf-16" if head.startswith(_UTF16_BOMS) else "utf-8"


def decode_log(data: bytes) -> str:
    """A log's bytes as text (``log_encoding``), each bad byte read as U+FFFD."""
    return data.decode(log_encoding(data[:2]), "replace")


def piped_stdin() -> bool:
    """Whether stdin is a pipe or a file (`train.py 2>&1 | kb`, `kb < log`), the text of a run to read; not a
    terminal, /dev/null or nothing."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISREG(mode)
