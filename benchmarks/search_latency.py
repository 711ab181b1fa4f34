"""Search latency: p50/p99 per query on the real catalogue and on 10,000 synthetic records, the
time to build the synthetic index, and a whole `kb search` process (warm index cache; cold, for the
catalogue as it is and for a changed copy that must build its index).

The synthetic index is asked twice: as built in this process, and written to the disk cache and
read back, as `kb search` reads it (the figure its users see). The two answer at different speeds
because reading back lays each word's postings out together in memory.

Each figure is given as CPU time (user + system) and wall time: on a machine shared with other
jobs the wall time mostly measures the other jobs. To compare two versions, run this script for
each in turn on the same machine (PYTHONPATH=<their src>), with their bytecode compiled.

    python benchmarks/search_latency.py [--catalogue PATH] [--dev PATH] [--synthetic N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from search_quality import DEFAULT_DEV

from trainkb.catalogue import find_catalogue, load_catalogue, record_files
from trainkb.search import Index, search
from trainkb.search._index import _read_cache, _write_cache, build_data, load_index

HERE = Path(__file__).resolve().parent


def queries(dev: Path) -> list[str]:
    """The benchmark pastes: the extra cases when set, plus this project's own cases."""
    texts = []
    for path in (dev, HERE / "search_cases.jsonl"):
        if path.is_file():
            texts += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line]
    return texts


def _spread(times: list[float]) -> tuple[float, float, float]:
    """(p50, p99, max) of ``times``."""
    times = sorted(times)
    return statistics.median(times), times[int(0.99 * (len(times) - 1))], times[-1]


def percentiles(index: Index, texts: list[str], rounds: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(CPU, wall) milliseconds per query, each as (p50, p99, max)."""
    cpu, wall = [], []
    for _ in range(rounds):
        for text in texts:
            started, used = time.perf_counter(), time.process_time()
            search(text, catalogue=index)
            cpu.append((time.process_time() - used) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
    return _spread(cpu), _spread(wall)


def _line(label: str, cpu: tuple[float, ...], wall: tuple[float, ...]) -> str:
    return (
        f"{label}: CPU p50 {cpu[0]:.2f} ms, p99 {cpu[1]:.2f} ms, max {cpu[2]:.2f} ms; "
        f"wall p50 {wall[0]:.2f} ms, p99 {wall[1]:.2f} ms, max {wall[2]:.2f} ms"
    )


def synthetic_records(real: list, count: int) -> list[SimpleNamespace]:
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
    return entries


def read_back(data: dict[str, Any]) -> Index:
    """The index of ``data`` as `kb search` reads it: written to the disk cache, then loaded from there."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "index.marshal"
        _write_cache(path, data)
        loaded = _read_cache(path, data["hash"])
    if loaded is None:
        raise SystemExit(f"the index written to {path} did not read back")
    return Index(loaded)


def _timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU, wall) milliseconds of one process running ``command``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu * 1000, wall * 1000


def _changed_copy(root: Path, where: Path) -> Path:
    """A copy of the catalogue with one record's bytes changed (a comment added): no index built ahead
    (`make setup`, the wheel) matches it, so a cold cache must build."""
    copy = where / "catalogue"
    shutil.copytree(root, copy)
    first = record_files(copy)[0]
    first.write_text(first.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    return copy


def processes(root: Path, text: str, runs: int) -> dict[str, tuple[float, float]]:
    """Median (CPU, wall) milliseconds of `python -m trainkb.cli search TEXT` with a warm and with a
    cold (empty) index cache, cold for a changed copy of the catalogue, and of `python -c pass` (the
    interpreter's own start), interleaved."""
    command = [sys.executable, "-m", "trainkb.cli", "--catalogue", str(root), "search", text]
    found: dict[str, list[tuple[float, float]]] = {"warm": [], "cold": [], "changed": [], "python": []}
    with tempfile.TemporaryDirectory() as warm, tempfile.TemporaryDirectory() as scratch:
        changed = [*command[:4], str(_changed_copy(root, Path(scratch))), *command[5:]]
        _timed(command, {**os.environ, "XDG_CACHE_HOME": warm})  # fills the cache
        for _ in range(runs):
            found["warm"].append(_timed(command, {**os.environ, "XDG_CACHE_HOME": warm}))
            with tempfile.TemporaryDirectory() as cold:
                found["cold"].append(_timed(command, {**os.environ, "XDG_CACHE_HOME": cold}))
            with tempfile.TemporaryDirectory() as cold:
                found["changed"].append(_timed(changed, {**os.environ, "XDG_CACHE_HOME": cold}))
            found["python"].append(_timed([sys.executable, "-c", "pass"], dict(os.environ)))
    return {
        kind: (statistics.median(t[0] for t in times), statistics.median(t[1] for t in times))
        for kind, times in found.items()
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalogue", type=Path, default=None)
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV)
    parser.add_argument("--synthetic", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=9, help="`kb search` processes of each kind")
    args = parser.parse_args()
    root = find_catalogue(args.catalogue)
    texts = queries(args.dev)
    if not texts:
        print("no queries found")
        return 0
    real = load_catalogue(root).ordered()
    index = load_index(root)
    print(
        _line(
            f"real catalogue ({len(real)} entries), {len(texts)} queries x {args.rounds}",
            *percentiles(index, texts, args.rounds),
        )
    )
    records = synthetic_records(real, args.synthetic)
    started, used = time.perf_counter(), time.process_time()
    data = build_data(records, f"synthetic-{args.synthetic}")
    cpu, wall = time.process_time() - used, time.perf_counter() - started
    print(f"synthetic index ({args.synthetic} entries) built in CPU {cpu:.1f} s, wall {wall:.1f} s")
    built = f"synthetic catalogue as built in this process, {len(texts)} queries"
    print(_line(built, *percentiles(Index(data), texts, 1)))
    cached = f"synthetic catalogue read back from the disk cache as `kb search` reads it, {len(texts)} queries"
    print(_line(cached, *percentiles(read_back(data), texts, 1)))
    for kind, (cpu_ms, wall_ms) in processes(root, texts[0], args.runs).items():
        what = {
            "python": "`python -c pass`",
            "changed": "`kb search`, cold index cache, a changed catalogue (builds)",
        }.get(kind, f"`kb search`, {kind} index cache")
        print(f"{what}: CPU {cpu_ms:.0f} ms, wall {wall_ms:.0f} ms (median of {args.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
