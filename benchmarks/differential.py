"""Three answers on real pastes: answered right or wrong, a differential with or without the right entry, unknown.

Sets (each reported per split; search is tuned on `dev` halves only, `test` halves are held back):

- covered: real tracebacks and logs from public threads whose thread established a cause an entry
  explains (`expect` non-empty; kinds traceback and log), from benchmarks/by_symptom_*.jsonl (threads
  found by the lines several causes print), real_failures_by_message.jsonl and real_failures.jsonl;
- uncovered: the same files' reports with no established or no covered cause (`expect` empty):
  any answer there is wrong, and a differential is a false alarm of a milder kind;
- the extra real pastes of TRAINKB_EXTRA_CASES when set, and the real GPU OOM captures
  in tests/fixtures/oom/ when present.

Goals printed with PASS/FAIL (on the covered test halves together): answered-right >= 60%,
answered-right plus differentials holding the right entry >= 90%, answered-wrong <= 2%,
differentials without the right entry <= 5%; on the corpus test half: answered-wrong <= 3% of cases
and differentials on <= 10% of its uncovered reports.

Works against an older trainkb too (no ``status``: an answer is a response that did not abstain),
so a "before" run uses the same cases:

    python benchmarks/differential.py [--catalogue PATH] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from search_quality import BY_MESSAGE, CORPUS, DEFAULT_DEV, load_cases

from trainkb.catalogue import find_catalogue
from trainkb.search import get_index, search

HERE = Path(__file__).resolve().parent
BY_SYMPTOM = sorted(HERE.glob("by_symptom_*.jsonl"))
OOM = HERE.parent / "tests" / "fixtures" / "oom"
PASTE_KINDS = {"traceback", "log"}
GOALS = {
    "answered_right": (">=", 0.60),
    "right_or_differential": (">=", 0.90),
    "answered_wrong": ("<=", 0.02),
    "differential_without": ("<=", 0.05),
}
CORPUS_GOALS = {"answered_wrong_all": ("<=", 0.03), "differential_uncovered": ("<=", 0.10)}


def _status(response: object) -> str:
    status = getattr(response, "status", None)
    if status is not None:
        return str(status)
    return "unknown" if getattr(response, "abstained", True) else "answered"


def classify(text: str, expect: list[str], index: object) -> str:
    """One case's outcome: answered-right/wrong, differential-with/without, unknown (right first or not)."""
    response = search(text, top=10, catalogue=index)  # type: ignore[arg-type]
    status = _status(response)
    ids = [r.id for r in response.results]
    if status == "answered":
        return "answered_right" if ids and ids[0] in expect else "answered_wrong"
    if status == "differential":
        held = ids[: getattr(response, "candidates", 0)]
        return "differential_with" if any(i in expect for i in held) else "differential_without"
    return "unknown_first_right" if ids and ids[0] in expect else "unknown"


def _cases() -> list[dict]:
    cases: list[dict] = []
    for path in BY_SYMPTOM:
        for case in load_cases(path, f"by-symptom {path.stem.removeprefix('by_symptom_')}"):
            case["set"] = f"by-symptom {case['split']}"
            cases.append(case)
    for path, name in ((BY_MESSAGE, "by-message"), (CORPUS, "corpus")):
        for case in load_cases(path, name):
            case["set"] = f"{name} {case['split']}"
            cases.append(case)
    for case in load_cases(DEFAULT_DEV, "shared"):
        case["set"] = "shared dev"
        cases.append(case)
    if OOM.is_dir():  # real CUDA OOMs captured on an H100, one per cause, named after their entry (m4_fragmented.txt)
        for path in sorted(OOM.glob("m[0-9]_*.txt")):
            text = path.read_text(encoding="utf-8")
            expect = [path.stem.split("_")[0].upper()]
            cases.append({"id": path.stem, "kind": "traceback", "text": text, "expect": expect, "set": "gpu oom"})
    return cases


def measure(catalogue: Path, split: str | None = None, show: bool = False) -> dict[str, dict[str, int]]:
    """Counts per set; ``split`` keeps only that half of each set (``dev`` while tuning: test stays unseen)."""
    index = get_index(catalogue)
    rows: dict[str, Counter[str]] = {}
    for case in _cases():
        if split is not None and not case["set"].endswith(split):
            continue
        covered = bool(case["expect"])
        paste = case["kind"] in PASTE_KINDS
        outcome = classify(case["text"], case["expect"], index)
        if show and outcome != "answered_right" and (covered or outcome.startswith(("answered", "differential"))):
            print(f"{case['set']:<18} {case['id']:<14} {outcome:<22} expect {','.join(case['expect']) or '-'}")
        kind = ("covered" if paste else "covered prose") if covered else "uncovered"
        keys = [f"{case['set']} {kind}"]
        if covered and paste and case["set"].endswith("test") and not case["set"].startswith("shared"):
            keys.append("held-back covered (all test halves)")
        if covered and paste and case["set"].endswith("dev"):
            keys.append("dev covered (all dev halves)")
        for key in keys:
            row = rows.setdefault(key, Counter())
            row["cases"] += 1
            row[outcome] += 1
    return {key: dict(row) for key, row in sorted(rows.items())}


def _share(row: dict[str, int], *keys: str) -> float:
    return sum(row.get(k, 0) for k in keys) / max(row.get("cases", 0), 1)


def _verdict(value: float, goal: tuple[str, float]) -> str:
    op, bound = goal
    return "PASS" if (value >= bound if op == ">=" else value <= bound) else "FAIL"


HEADER = (
    "| set | cases | answered right | answered wrong | differential with right | differential without "
    "| unknown (right first) |"
)


def _cell(row: dict[str, int], *keys: str) -> str:
    count = sum(row.get(k, 0) for k in keys)
    return f"{count} ({100 * count / max(row['cases'], 1):.0f}%)"


def report(rows: dict[str, dict[str, int]]) -> None:
    print(HEADER)
    print("|---|---|---|---|---|---|---|")
    for key, row in rows.items():
        print(
            f"| {key} | {row['cases']} | {_cell(row, 'answered_right')} | {_cell(row, 'answered_wrong')} | "
            f"{_cell(row, 'differential_with')} | {_cell(row, 'differential_without')} | "
            f"{_cell(row, 'unknown', 'unknown_first_right')} ({row.get('unknown_first_right', 0)}) |"
        )
    held = rows.get("held-back covered (all test halves)")
    if held:
        figures = {
            "answered_right": _share(held, "answered_right"),
            "right_or_differential": _share(held, "answered_right", "differential_with"),
            "answered_wrong": _share(held, "answered_wrong"),
            "differential_without": _share(held, "differential_without"),
        }
        print("\nGoals on the held-back covered pastes:")
        for name, value in figures.items():
            op, bound = GOALS[name]
            print(f"  {name} = {100 * value:.1f}% (goal {op} {100 * bound:.0f}%): {_verdict(value, GOALS[name])}")
    parts = [rows.get(f"corpus test {kind}", {}) for kind in ("covered", "covered prose", "uncovered")]
    uncovered = parts[2]
    if uncovered:
        total = sum(part.get("cases", 0) for part in parts)
        wrong = sum(part.get("answered_wrong", 0) for part in parts) / max(total, 1)
        diff = _share(uncovered, "differential_with", "differential_without")
        print("Goals on the corpus test half (every kind):")
        verdict = _verdict(wrong, CORPUS_GOALS["answered_wrong_all"])
        print(f"  answered wrong = {100 * wrong:.1f}% of {total} (goal <= 3%): {verdict}")
        print(
            f"  differential on uncovered = {100 * diff:.1f}% of {uncovered['cases']} (goal <= 10%): "
            f"{_verdict(diff, CORPUS_GOALS['differential_uncovered'])}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalogue", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write the counts as JSON")
    parser.add_argument("--split", choices=["dev", "test"], default=None, help="only this half of each set")
    parser.add_argument("--cases", action="store_true", help="also list each case that was not answered right")
    args = parser.parse_args(argv)
    rows = measure(args.catalogue or find_catalogue(), args.split, args.cases)
    report(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
