"""Files built from the corpus and committed: write them, or (``--check``) say whether they are stale.

A committed file derived from data goes stale silently when the data or the code behind it
changes; tests/test_generated.py runs every builder with ``--check`` so that cannot land.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_or_check"]


def write_or_check(script: str, out: Path, build: Callable[[], str]) -> int:
    """Parse ``--check``; compare ``build()`` with ``out`` (1 when stale) or write it (0)."""
    parser = argparse.ArgumentParser(description=f"Write {out.name} (--check: only compare with the committed file).")
    parser.add_argument("--check", action="store_true", help="only compare with the committed file")
    args = parser.parse_args()
    text = build()
    if args.check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out.name} is up to date" if same else f"{out.name} is stale: run python benchmarks/{script}")
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0
