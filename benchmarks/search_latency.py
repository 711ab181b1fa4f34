"""Search latency: p50/p99 per query on the real catalogue and on 10,000 synthetic records,
and the wall time of a whole `kb search` process (cold and warm index cache).

    python benchmarks/search_latency.py [--catalogue PATH] [--dev PATH] [--synthetic N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from search_quality import DEFAULT_DEV

from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.search import Index, search
from trainkb.search._index import build_data, load_index

HERE = Path(__file__).resolve().parent


def queries(dev: Path) -> list[str]:
    """The benchmark pastes: the extra cases when set, plus this project's own cases."""
    texts = []
    for path in (dev, HERE / "search_cases.jsonl"):
        if path.is_file():
            texts += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    return texts


def percentiles(index: Index, texts: list[str], rounds: int) -> tuple[float, float, float]:
    times = []
    for _ in range(rounds):
        for text in texts:
            started = time.perf_counter()
            search(text, catalogue=index)
            times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))], times[-1]


def synthetic_index(real: list, count: int) -> Index:
    """``count`` records made by recombining words, signatures and aliases of the real ones."""
    rng = random.Random(7)
    vocabulary = sorted({w for e in real for w in f"{e.title} {e.symptom} {e.root_cause}".split()})
    signatures = [s for e in real for s in e.signatures]
    entries = []
    for number in range(count):
        words = lambda n: " ".join(rng.choices(vocabulary, k=n))  # noqa: E731
        sigs = [
            SimpleNamespace(
                literal=f"{s.literal} {number}" if s.literal else None,
                regex=s.regex,
                example=f"{s.example} {number}" if s.literal else s.example,
                type=s.type,
                kind=s.kind,
                names_cause=s.names_cause,
            )
            for s in rng.sample(signatures, k=min(2, len(signatures)))
        ]
        entries.append(
            SimpleNamespace(
                id=f"S{number}",
                title=words(10),
                area="synthetic",
                aliases=[words(4) for _ in range(3)],
                tags=["synthetic"],
                symptom=words(60),
                root_cause=words(80),
                fix=words(80),
                fix_summary="Synthetic one-line fix.",
                signatures=sigs,
            )
        )
    return Index(build_data(entries, f"synthetic-{count}"))


def process_wall(root: Path, text: str, runs: int) -> tuple[float, float]:
    """(cold, warm median) seconds of `python -m trainkb.cli search TEXT`; cold = empty cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "XDG_CACHE_HOME": cache}
        command = [sys.executable, "-m", "trainkb.cli", "--catalogue", str(root), "search", text]
        walls = []
        for _ in range(runs + 1):
            started = time.perf_counter()
            subprocess.run(command, env=env, capture_output=True, check=False)
            walls.append(time.perf_counter() - started)
    return walls[0], statistics.median(walls[1:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalogue", type=Path, default=None)
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV)
    parser.add_argument("--synthetic", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    root = find_catalogue(args.catalogue)
    texts = queries(args.dev)
    if not texts:
        print("no queries found")
        return 0
    real = load_catalogue(root).ordered()
    index = load_index(root)
    p50, p99, worst = percentiles(index, texts, args.rounds)
    print(
        f"real catalogue ({len(real)} entries), {len(texts)} queries x {args.rounds}: "
        f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms"
    )
    started = time.perf_counter()
    synthetic = synthetic_index(real, args.synthetic)
    built = time.perf_counter() - started
    p50, p99, worst = percentiles(synthetic, texts, 1)
    print(
        f"synthetic catalogue ({args.synthetic} entries, built in {built:.1f} s): "
        f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {worst:.2f} ms"
    )
    cold, warm = process_wall(root, texts[0], runs=5)
    print(f"`kb search` whole process: cold cache {cold * 1000:.0f} ms, warm cache {warm * 1000:.0f} ms (median of 5)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
