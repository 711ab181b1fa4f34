"""Capture fault-injection runs as fixtures: `python tests/triage/capture_faults.py OUT [--backend nccl]`.

Each run lands in OUT/<fault>-n<N>-r<k>/: combined.log (what the terminal showed) and logs/
(torchrun's --log-dir). The NCCL fixtures under fixtures/nccl/ came from this script on a
2-GPU machine; the CPU fixtures under fixtures/gloo/ from the same script with gloo.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from faultgrid import FAULTS, run_fault


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--backend", default="gloo")
    parser.add_argument("--sizes", default="2")
    parser.add_argument("--faults", default=",".join(FAULTS))
    parser.add_argument("--timeout", type=float, default=3.0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--tar", type=Path, help="also pack OUT into this .tar.gz")
    args = parser.parse_args()
    grid = [(n, k, f) for n in map(int, args.sizes.split(",")) for k in range(n) for f in args.faults.split(",")]
    work = Path(tempfile.mkdtemp(prefix="faults-"))

    def one(case: tuple[int, int, str]) -> str:
        n, k, fault = case
        got = run_fault(n, k, fault, work, backend=args.backend, timeout=args.timeout, limit=300)
        dest = args.out / f"{fault}-n{n}-r{k}"
        dest.mkdir(parents=True, exist_ok=True)
        (dest / "combined.log").write_text(got.output, encoding="utf-8")
        if got.log_dir.is_dir():
            shutil.copytree(got.log_dir, dest / "logs", dirs_exist_ok=True)
        return f"{fault:10} n={n} k={k} rc={got.returncode} {got.seconds:.1f}s"

    with ThreadPoolExecutor(args.jobs) as pool:
        for line in pool.map(one, grid):
            print(line, flush=True)
    if args.tar:
        with tarfile.open(args.tar, "w:gz") as tar:
            tar.add(args.out, arcname=args.out.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
