"""Dump every search answer and the index itself, so two versions of the engine can be compared.

A speed change must leave each answer as it was. This writes, for the real catalogue and for a
synthetic one (``search_latency.synthetic_records``), a digest of the plain-data index and the full
JSON response to every benchmark paste (benchmarks/*.jsonl, tests/fixtures, the extra cases), then
``--against`` says which differ. Run it once per version (PYTHONPATH=<that version's src>):

    python benchmarks/compare_responses.py --out before.json
    python benchmarks/compare_responses.py --out after.json --against before.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from search_latency import synthetic_records
from search_quality import DEFAULT_DEV

from trainkb.catalogue import find_catalogue, load_catalogue
from trainkb.search import Index, build_data, search
from trainkb.search._index import load_index

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "fixtures"


def pastes(extra: Path) -> list[str]:
    """Every benchmark paste, in a fixed order, each once."""
    texts: list[str] = []
    for path in [*sorted(HERE.glob("*.jsonl")), extra]:
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    row = json.loads(line)
                    if isinstance(row, dict) and isinstance(row.get("text"), str):
                        texts.append(row["text"])
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix in {".txt", ".log"}:
            texts.append(path.read_text(encoding="utf-8", errors="replace"))
    return list(dict.fromkeys(texts))


def _digest(data: object) -> str:
    """A hash of the index's every value and order (marshal's bytes also follow object sharing)."""
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()


def answers(index: Index, texts: list[str]) -> list[str]:
    return [json.dumps(search(text, catalogue=index).to_json(), sort_keys=True) for text in texts]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--against", type=Path, default=None)
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV)
    parser.add_argument("--synthetic", type=int, default=10_000)
    parser.add_argument("--synthetic-pastes", type=int, default=300, help="pastes asked of the synthetic index")
    args = parser.parse_args()
    root = find_catalogue(None)
    texts = pastes(args.dev)
    real = load_catalogue(root).ordered()
    real_data = build_data(real, "real")
    synthetic_data = build_data(synthetic_records(real, args.synthetic), "synthetic")
    found = {
        "index real": _digest(real_data),
        "index synthetic": _digest(synthetic_data),
        "real": answers(load_index(root, use_cache=False), texts),
        "synthetic": answers(Index(synthetic_data), texts[: args.synthetic_pastes]),
    }
    args.out.write_text(json.dumps(found), encoding="utf-8")
    print(f"{len(texts)} pastes; {args.synthetic_pastes} of them on {args.synthetic} synthetic records")
    if args.against is None:
        return 0
    before = json.loads(args.against.read_text(encoding="utf-8"))
    differ = 0
    for key, value in found.items():
        if isinstance(value, str):
            same = value == before.get(key)
            differ += not same
            print(f"{key}: {'same' if same else 'DIFFERENT'}")
            continue
        old = before.get(key, [])
        wrong = [n for n in range(max(len(value), len(old))) if value[n : n + 1] != old[n : n + 1]]
        differ += len(wrong)
        print(f"{key}: {len(value) - len(wrong)} of {len(value)} answers the same; differ: {wrong[:20]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
