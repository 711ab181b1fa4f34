"""Time `kb site build`: the real catalogue, and a synthetic catalogue of N records (default 10,000).

    .venv/bin/python benchmarks/site_build.py [--records 10000] [--repeat 3]

The synthetic records are copies of the real ones under new ids (links kept within each copy),
so pages, checks and signatures are of realistic size. Prints one line per figure; the goals
are <= 2 s for the real catalogue and <= 60 s for 10,000 records.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from trainkb.catalogue import Catalogue, Entry, find_catalogue, find_reports, load_catalogue, load_verification
from trainkb.site import build_site, search_data


def synthetic(cat: Catalogue, count: int) -> Catalogue:
    """``count`` records: the real ones copied under ids with a per-copy number offset."""
    real = cat.ordered()
    out = Catalogue(root=cat.root, areas=cat.areas)
    copy = 0
    while len(out.entries) < count:

        def new_id(old: str, k: int = copy) -> str:
            prefix = old.rstrip("0123456789")
            return f"{prefix}{int(old[len(prefix) :]) + 1000 * k}"

        for entry in real:
            if len(out.entries) >= count:
                break
            links = [link.model_copy(update={"id": new_id(link.id)}) for link in entry.links]
            clone: Entry = entry.model_copy(update={"id": new_id(entry.id), "links": links})
            out.entries[clone.id] = clone
        copy += 1
    return out


def _time(cat: Catalogue, reports: Path, repeat: int) -> tuple[float, int]:
    ver = load_verification(reports)
    runs, pages = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(repeat):
            out = Path(tmp) / "_site"
            shutil.rmtree(out, ignore_errors=True)
            started = time.perf_counter()
            pages = build_site(cat, ver, out).pages
            runs.append(time.perf_counter() - started)
    return statistics.median(runs), pages


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the real-catalogue build (median)")
    args = parser.parse_args()
    root = find_catalogue()
    started = time.perf_counter()
    cat = load_catalogue(root)
    load = time.perf_counter() - started
    reports = find_reports(cat.root)
    seconds, pages = _time(cat, reports, args.repeat)
    print(
        f"real catalogue: {len(cat.entries)} entries, {pages} pages: load {load:.2f} s + build {seconds:.2f} s "
        f"(median of {args.repeat}; goal <= 2 s)"
    )
    big = synthetic(cat, args.records)
    started = time.perf_counter()
    search_data(big)
    index = time.perf_counter() - started
    seconds, pages = _time(big, reports, 1)
    print(
        f"synthetic: {len(big.entries)} entries, {pages} pages: build {seconds:.1f} s, of which the search "
        f"index export {index:.1f} s (goal <= 60 s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
