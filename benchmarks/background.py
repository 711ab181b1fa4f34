"""Write src/trainkb/search/background.json: which words real failure reports share.

Search needs to know which words say little because unrelated failure reports all use them
("training", "loss", "memory", "LoRA", "DeepSpeed", "resume") and which error messages many
different root causes print ("DataLoader worker ... killed by signal: Killed", "device-side
assert triggered"). Both come from the `dev` half of benchmarks/real_failures.jsonl (the `test`
half is never read here): for every word that two or more dev reports hold, the numbers of
those reports. The index turns that into a weight per word and, per signature, the number of
reports holding every word the signature requires (see docs/search.md). The file holds words
and report numbers only, no text.

    python benchmarks/background.py [--check]

--check exits 1 when the committed file differs from what the corpus gives now.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _generated import write_or_check

from trainkb.search._input import parse
from trainkb.search._normalize import terms

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "real_failures.jsonl"
OUT = HERE.parent / "src" / "trainkb" / "search" / "background.json"
MIN_REPORTS = 2  # a word one report holds says nothing about what reports share


def build(corpus: Path = CORPUS) -> dict:
    cases = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    dev = [case for case in cases if case["split"] == "dev"]
    holders: dict[str, list[int]] = {}
    for number, case in enumerate(dev):
        text = "\n".join(line.text for line in parse(case["text"]).lines)
        for term in sorted(set(terms(text))):
            holders.setdefault(term, []).append(number)
    shared = {term: docs for term, docs in sorted(holders.items()) if len(docs) >= MIN_REPORTS}
    return {
        "about": "words that two or more public failure reports share (benchmarks/background.py)",
        "source": "benchmarks/real_failures.jsonl, split dev",
        "reports": len(dev),
        "terms": shared,
    }


def render(data: dict) -> str:
    return json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":")) + "\n"


def main() -> int:
    return write_or_check("background.py", OUT, lambda: render(build()))


if __name__ == "__main__":
    sys.exit(main())
