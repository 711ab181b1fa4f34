"""How much a check costs beyond its own work: warm forkserver pool vs a fresh interpreter.

(a) trivial checks (`pass`) run one at a time: median and p90 wall time per check with the
    warm pool, and with a fresh process per check (which must `import torch` again); and each
    check's own time inside one run of them all at --jobs 1 (where the next check's processes
    are started while the current one runs);
(b) the real catalogue: wall time of the whole run with the pool vs fresh processes at the
    same --jobs.

usage: python benchmarks/check_overhead.py [--trivial 50] [--fresh-trivial 10] [--jobs N] [--skip-catalogue]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import textwrap
import time
from pathlib import Path

from trainkb.catalogue import MODELINE, CheckStatus, find_catalogue, load_catalogue, render_schema
from trainkb.check import RunOptions, WarmPool, environment_block, run_tasks, select_tasks

_AREAS = """\
areas:
  - {id: bench, title: Bench, order: 1, scope: Benchmark records., sections: [{id: s, title: S}]}
"""


def _trivial_catalogue(count: int) -> Path:
    root = Path(tempfile.mkdtemp(prefix="kb-bench-")) / "catalogue"
    (root / "bench").mkdir(parents=True)
    (root / "areas.yaml").write_text(_AREAS)
    (root / "schema.json").write_text(render_schema())
    checks = "".join(
        f"  - {{name: t{i}, claim: nothing, demonstrates: fix, code: pass, expect: ok}}\n" for i in range(count)
    )
    (root / "bench" / "D1-trivial.yaml").write_text(
        MODELINE
        + "\n"
        + textwrap.dedent("""\
        id: D1
        title: Trivial checks for timing
        area: bench
        section: s
        tags: [bench]
        symptom: none
        root_cause: none
        fix: none
        fix_summary: Nothing to fix here.
        checks:
        """)
        + checks
    )
    return root


def _per_check_seconds(pool: WarmPool, root: Path, env: dict, limit: int) -> list[float]:
    tasks = select_tasks(load_catalogue(root))[:limit]
    seconds = []
    for task in tasks:  # one at a time: the figure is latency, not throughput
        started = time.perf_counter()
        [result] = run_tasks([task], RunOptions(jobs=1), pool, env)
        seconds.append(time.perf_counter() - started)
        assert result.status == CheckStatus.PASSED, result.message
    return seconds


def _in_one_run_seconds(pool: WarmPool, root: Path, env: dict, limit: int) -> list[float]:
    """Each check's own time inside one `--jobs 1` run, as `kb check` reports it (spares at work)."""
    results = run_tasks(select_tasks(load_catalogue(root))[:limit], RunOptions(jobs=1), pool, env)
    assert all(r.status == CheckStatus.PASSED for r in results), [r.message for r in results]
    return [r.seconds for r in results]


def _describe(label: str, values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    median = statistics.median(values) * 1000
    return f"{label:<26} n={len(values):<3} median {median:8.1f} ms   p90 {p90 * 1000:8.1f} ms"


def _catalogue_wall(pool: WarmPool, jobs: int) -> tuple[float, dict[str, int]]:
    cat = load_catalogue(find_catalogue())
    tasks = select_tasks(cat)
    env = environment_block(pool.probe(sorted({p for t in tasks for p in t.check.requires.packages})), cat.root)
    started = time.perf_counter()
    results = run_tasks(tasks, RunOptions(jobs=jobs), pool, env)
    wall = time.perf_counter() - started
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    return wall, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trivial", type=int, default=50)
    parser.add_argument("--fresh-trivial", type=int, default=10, help="fresh-process samples (each ~1.5 s)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--skip-catalogue", action="store_true")
    args = parser.parse_args()

    root = _trivial_catalogue(args.trivial)
    warm, cold = WarmPool(), WarmPool(cold=True)
    started = time.perf_counter()
    env = environment_block(warm.probe([]), root)
    print(f"warm pool start-up (torch imported once): {time.perf_counter() - started:.2f} s")
    warm_times = _per_check_seconds(warm, root, env, args.trivial)
    in_run_times = _in_one_run_seconds(warm, root, env, args.trivial)
    cold_times = _per_check_seconds(cold, root, env, args.fresh_trivial)
    print("(a) per-check wall time of a trivial check (process start, containment, verdict, clean-up)")
    print("   ", _describe("warm forkserver pool", warm_times))
    print("   ", _describe("  inside one run", in_run_times))
    print("   ", _describe("fresh interpreter", cold_times))
    print(f"    speed-up: {statistics.median(cold_times) / statistics.median(warm_times):.0f}x")
    if args.skip_catalogue:
        return
    print(f"(b) the real catalogue at --jobs {args.jobs}")
    for label, pool in (("warm forkserver pool", warm), ("fresh interpreter", cold)):
        wall, counts = _catalogue_wall(pool, args.jobs)
        print(f"    {label:<22} {wall:7.1f} s  {counts}")


if __name__ == "__main__":
    main()
