"""Triage speed and memory on a 100 MB, 8-rank log.

    python benchmarks/triage_speed.py [--mb 100] [--ranks 8]

The log is built from real captured lines: the per-rank progress line faultjob.py printed under
`torchrun --tee 3` ("[default3]:step 7 loss 0.4300"), repeated with rising steps for every rank,
then the real end of an NCCL hang captured on two GPUs (tests/triage/fixtures/nccl/hang-n2-r1),
its victim's lines copied to every extra rank with the rank number changed. Triage streams the
file in chunks; the figure is the wall time of `triage_text(read_chunks(path))` and the growth
of the process's peak memory while it runs.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import sys
import tempfile
import time
from pathlib import Path

from trainkb.triage import to_text, triage_text
from trainkb.triage._input import read_chunks

HERE = Path(__file__).resolve().parent
FAILURE = HERE.parent / "tests" / "triage" / "fixtures" / "nccl" / "hang-n2-r1" / "combined.log"
CULPRIT, VICTIM = 1, 0
_TAG = re.compile(r"\[default0\]:|\[rank0\]:|\bRank 0\]|\(local_rank: 0\)|\brank      : 0\b")


def _as_rank(line: str, rank: int) -> str:
    return _TAG.sub(lambda m: m[0].replace("0", str(rank)), line)


def build(path: Path, megabytes: int, ranks: int) -> None:
    """Progress lines of every rank up to ``megabytes``, then the captured failure spread over ``ranks``."""
    failure = FAILURE.read_text(encoding="utf-8").splitlines(keepends=True)
    rng = random.Random(0)
    target = megabytes * 1024 * 1024
    with path.open("w", encoding="utf-8") as out:
        step, written = 0, 0
        while written < target:
            block = "".join(f"[default{r}]:step {step} loss {rng.random():.4f}\n" for r in range(ranks))
            out.write(block)
            written += len(block)
            step += 1
        for line in failure:
            out.write(line)
            if line.startswith(("[default0]:", "[rank0]:")):
                for rank in range(2, ranks):
                    out.write(_as_rank(line, rank))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--ranks", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.log"
        build(path, args.mb, args.ranks)
        size = path.stat().st_size
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        triage = triage_text(read_chunks(path), match=False)
        elapsed = time.perf_counter() - start
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert triage is not None and len(triage.ranks) == args.ranks, triage
    print(to_text(triage), end="")
    print(
        f"triage of {size / 1e6:.0f} MB, {args.ranks} ranks: {elapsed:.2f} s "
        f"({size / 1e6 / elapsed:.0f} MB/s), peak memory grew {grown / 1024:.0f} MiB; "
        f"culprit {triage.culprits} ({triage.basis})"
    )
    return 0 if triage.culprits == [CULPRIT] else 1


if __name__ == "__main__":
    sys.exit(main())
