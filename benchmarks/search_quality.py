"""Search quality: top-1/top-3 per query kind, abstention, confident-wrong answers, vs two baselines.

Cases come from the file TRAINKB_EXTRA_CASES names (real pastes; read there, never copied into
the repository) when set, the real tracebacks and warnings captured by the checks in the
committed reports (reports/*.json), benchmarks/search_cases.jsonl (written for this project),
and benchmarks/real_failures.jsonl (public failure reports sampled without regard to the
catalogue; its `dev` and `test` halves are reported apart, and search is tuned on `dev` only),
and benchmarks/real_failures_by_message.jsonl (public threads found by searching each line that
names a cause: there search is meant to be confident, so its precision is measured on many answers).
Each case: id, kind (traceback|log|prose), text, expect (acceptable entry ids, primary first;
empty: nothing covers it and search should abstain).

Columns: top-1 / top-3 = an acceptable entry ranked first / in the first three;
answered = top-1 right and search did not abstain; abstain = share of negatives where
search abstained; wrong-high = a high-confidence first answer that is wrong;
conf-wrong = a medium- or high-confidence first answer that is wrong, as a count and as a
share of all cases; prec@conf = the share of medium- and high-confidence answers that are right.

The confidence goals, printed with PASS/FAIL for the corpus's test half: prec@conf >= 95%
and conf-wrong <= 3% of all cases.

Baselines: BM25 over each record's whole text, and rapidfuzz token_set_ratio of the
whole paste against each record's text. Neither can abstain.

    python benchmarks/search_quality.py [--dev PATH] [--catalogue PATH] [--misses]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from rapidfuzz import fuzz, process

from trainkb.catalogue import CheckStatus, find_catalogue, load_catalogue
from trainkb.search import get_index, search

HERE = Path(__file__).resolve().parent
# real pastes kept outside the repository (not ours to copy in): a JSON-lines file of cases named by
# TRAINKB_EXTRA_CASES, read when set
DEFAULT_DEV = Path(os.environ.get("TRAINKB_EXTRA_CASES") or HERE / "no-extra-cases.jsonl")
OWN = HERE / "search_cases.jsonl"
CORPUS = HERE / "real_failures.jsonl"
BY_MESSAGE = HERE / "real_failures_by_message.jsonl"  # threads found by a cause-naming line (precision)
GOAL_PRECISION, GOAL_CONFIDENT_WRONG = 0.95, 0.03  # the confidence goals, on the corpus's test half
MAX_REPO_SHARE = 0.10  # of the corpus from one repository
KINDS = ("traceback", "log", "prose")
Ranker = Callable[[str], tuple[list[str], bool, bool]]  # ids, abstained, top-1 high confidence


def load_corpus(path: Path, name: str = "corpus") -> list[dict]:
    """Public failure reports, each in the set named by its split ("corpus dev", "by-message test", ...)."""
    cases = load_cases(path, name)
    for problem in corpus_problems(cases):
        print(f"({path.name}: {problem})")
    for case in cases:
        case["set"] = f"{name} {case['split']}"
    return cases


def corpus_problems(cases: list[dict]) -> list[str]:
    """Breaches of the corpus's rules (benchmarks/real_failures.md): split by hash, unique threads, repo share."""
    problems = []
    for case in cases:
        split = "dev" if hashlib.sha256(case["source"].encode("utf-8")).digest()[0] % 2 == 0 else "test"
        if case.get("split") != split:
            problems.append(f"{case['id']} has split {case.get('split')!r}, its source says {split!r}")
    sources = Counter(case["source"] for case in cases)
    problems += [f"{source} appears {n} times" for source, n in sources.items() if n > 1]
    repos = Counter(case["repo"] for case in cases)
    problems += [
        f"{repo} holds {n} of {len(cases)} cases (over 10%)"
        for repo, n in repos.items()
        if n > MAX_REPO_SHARE * len(cases)
    ]
    return problems


def load_cases(path: Path, source: str) -> list[dict]:
    if not path.is_file():
        print(f"({source}: {path} not found, skipped)")
        return []
    cases = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for case in cases:
        case["set"] = source
    return cases


def load_check_cases(root: Path) -> list[dict]:
    """The real tracebacks and warnings torch printed for raises/warns checks (committed reports)."""
    from trainkb.catalogue import find_reports

    also = {(e.id, c.name): c.also_matches for e in load_catalogue(root).entries.values() for c in e.checks}
    cases, seen = [], set()
    for path in sorted(find_reports(root).glob("*.json")):
        for row in json.loads(path.read_text(encoding="utf-8")).get("results", []):
            text = row.get("evidence")
            if row.get("status") != CheckStatus.PASSED or row.get("expect") not in {"raises", "warns"} or not text:
                continue
            if (row["entry"], row["check"]) in seen:
                continue
            seen.add((row["entry"], row["check"]))
            kind = "traceback" if text.startswith("Traceback") else "log"
            expect = [row["entry"], *also.get((row["entry"], row["check"]), [])]
            cases.append(
                {"id": f"{row['entry']}:{row['check']}", "kind": kind, "text": text, "expect": expect, "set": "checks"}
            )
    return cases


def _record_texts(root: Path) -> tuple[list[str], list[str]]:
    entries = load_catalogue(root).ordered()
    texts = []
    for e in entries:
        sigs = " ".join(f"{s.literal or s.regex} {s.example}" for s in e.signatures)
        texts.append(" ".join([e.title, *e.aliases, *e.tags, e.symptom, e.root_cause, e.fix, sigs]))
    return [e.id for e in entries], texts


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9_]+", text.lower())


def bm25_baseline(ids: list[str], texts: list[str]) -> Ranker:
    docs = [Counter(_words(t)) for t in texts]
    lengths = [sum(d.values()) for d in docs]
    avg = sum(lengths) / len(lengths)
    df = Counter(w for d in docs for w in d)
    n = len(docs)

    def rank(query: str) -> tuple[list[str], bool, bool]:
        q = set(_words(query))
        scores = []
        for i, d in enumerate(docs):
            s = 0.0
            for w in q & d.keys():
                idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                s += idf * d[w] * 2.2 / (d[w] + 1.2 * (0.25 + 0.75 * lengths[i] / avg))
            scores.append(s)
        order = sorted(range(n), key=lambda i: -scores[i])
        return [ids[i] for i in order[:10]], False, False

    return rank


def fuzz_baseline(ids: list[str], texts: list[str]) -> Ranker:
    def rank(query: str) -> tuple[list[str], bool, bool]:
        found = process.extract(query, texts, scorer=fuzz.token_set_ratio, limit=10)
        return [ids[i] for _t, _s, i in found], False, False

    return rank


def engine(catalogue: Path) -> Ranker:
    index = get_index(catalogue)

    def rank(query: str) -> tuple[list[str], bool, bool]:
        response = search(query, top=10, catalogue=index)
        high = bool(response.results) and response.results[0].confidence == "high"
        return [r.id for r in response.results], response.abstained, high

    return rank


def evaluate(rank: Ranker, cases: list[dict], misses: list[str] | None = None) -> dict[str, dict[str, float]]:
    rows: dict[str, Counter] = {k: Counter() for k in (*KINDS, "all")}
    for case in cases:
        ids, abstained, high = rank(case["text"])
        expect = case["expect"]
        for key in (case["kind"], "all"):
            row = rows[key]
            right = bool(ids) and ids[0] in expect
            row["cases"] += 1
            row["confident"] += bool(ids) and not abstained
            row["confident_wrong"] += bool(ids) and not abstained and not right
            if expect:
                row["positives"] += 1
                row["top1"] += right
                row["answered"] += right and not abstained
                row["top3"] += any(i in expect for i in ids[:3])
                row["wrong_confident"] += high and not right
                row["abstained_on_positive"] += abstained
            else:
                row["negatives"] += 1
                row["abstained"] += abstained
                row["wrong_confident"] += high
        if misses is not None and (
            (expect and (not ids or ids[0] not in expect or abstained)) or (not expect and not abstained)
        ):
            flags = (" (abstained)" if abstained else "") + (" (HIGH)" if high else "")
            misses.append(
                f"{case['id']:<10} {case['kind']:<9} expect={','.join(expect) or '-':<14} "
                f"got={','.join(ids[:3]) or '-'}{flags}"
            )
    return {k: dict(v) for k, v in rows.items()}


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:5.1f}%" if b else "   n/a"


def report(name: str, rows: dict[str, dict[str, float]], can_abstain: bool) -> None:
    print(f"\n{name}")
    print(
        f"  {'kind':<10}{'pos':>5}{'top-1':>9}{'answered':>10}{'top-3':>9}{'neg':>5}{'abstain':>9}"
        f"{'wrong-high':>12}{'conf-wrong':>17}{'prec@conf':>16}"
    )
    for kind in (*KINDS, "all"):
        r = rows[kind]
        pos, neg = r.get("positives", 0), r.get("negatives", 0)
        abstain = _pct(r.get("abstained", 0), neg) if can_abstain else "  never"
        answered = _pct(r.get("answered", 0), pos) if can_abstain else _pct(r.get("top1", 0), pos)
        wrong, confident = int(r.get("confident_wrong", 0)), int(r.get("confident", 0))
        conf_wrong = f"{wrong:>4} {_pct(wrong, r.get('cases', 0))}" if can_abstain else "n/a"
        precision = (
            f"{confident - wrong:>3}/{confident:<3} {_pct(confident - wrong, confident)}" if can_abstain else "n/a"
        )
        print(
            f"  {kind:<10}{pos:>5}{_pct(r.get('top1', 0), pos):>9}{answered:>10}{_pct(r.get('top3', 0), pos):>9}"
            f"{neg:>5}{abstain:>9}{int(r.get('wrong_confident', 0)):>12}{conf_wrong:>17}{precision:>16}"
        )


def wilson_low(right: float, n: float, z: float = 1.96) -> float:
    """The lower end of the 95% Wilson interval of right / n: how little a precision on few answers proves."""
    if not n:
        return 0.0
    p = right / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


def by_batch(rank: Ranker, cases: list[dict]) -> None:
    """The corpus per sampling batch and half: batch 2 was collected after search was last tuned."""
    print("\n=== corpus by batch (trainkb search, all kinds)")
    print(
        f"  {'set':<22}{'cases':>6}{'pos':>5}{'top-1':>9}{'answered':>10}{'abstain':>9}"
        f"{'conf-wrong':>14}{'prec@conf':>14}"
    )
    for batch in sorted({c.get("batch", 1) for c in cases}):
        for half in ("dev", "test"):
            chosen = [c for c in cases if c.get("batch", 1) == batch and c["split"] == half]
            if not chosen:
                continue
            r = evaluate(rank, chosen)["all"]
            pos, neg, n = r.get("positives", 0), r.get("negatives", 0), r.get("cases", 0)
            wrong, confident = int(r.get("confident_wrong", 0)), int(r.get("confident", 0))
            print(
                f"  {f'batch {batch}, {half}':<22}{n:>6}{pos:>5}{_pct(r.get('top1', 0), pos):>9}"
                f"{_pct(r.get('answered', 0), pos):>10}{_pct(r.get('abstained', 0), neg):>9}"
                f"{wrong:>5} {_pct(wrong, n):>7}{confident - wrong:>6}/{confident:<3}"
                f"{_pct(confident - wrong, confident)}"
            )


def goals(rows: dict[str, dict[str, float]]) -> bool:
    """Print the confidence goal lines for the corpus's test half; True when both hold."""
    r = rows["all"]
    cases, confident, wrong = r.get("cases", 0), r.get("confident", 0), r.get("confident_wrong", 0)
    precision = (confident - wrong) / confident if confident else 1.0
    share = wrong / cases if cases else 0.0
    ok_precision, ok_wrong = precision >= GOAL_PRECISION, share <= GOAL_CONFIDENT_WRONG
    print(
        f"\ngoal (corpus test): medium/high answers right >= {GOAL_PRECISION:.0%}: "
        f"{confident - wrong}/{confident} = {precision:.1%}  {'PASS' if ok_precision else 'FAIL'}"
        f"  (few answers: 95% Wilson lower bound {wilson_low(confident - wrong, confident):.0%})"
    )
    print(
        f"goal (corpus test): confident-wrong <= {GOAL_CONFIDENT_WRONG:.0%} of all cases: "
        f"{wrong}/{cases} = {share:.1%}  {'PASS' if ok_wrong else 'FAIL'}"
    )
    return ok_precision and ok_wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=DEFAULT_DEV, help="dev cases (JSON lines)")
    parser.add_argument("--catalogue", type=Path, default=None)
    parser.add_argument("--misses", action="store_true", help="list the ids of cases search gets wrong")
    args = parser.parse_args()
    root = find_catalogue(args.catalogue)
    ids, texts = _record_texts(root)
    cases = load_cases(args.dev, "dev") + load_cases(OWN, "own") + load_check_cases(root) + load_corpus(CORPUS)
    cases += load_corpus(BY_MESSAGE, "by-message")  # threads found by each cause-naming line
    pending = [c for c in cases if c["expect"] and not set(c["expect"]) & set(ids)]
    if pending:
        print(f"({len(pending)} cases skipped: none of their expected entries is in the catalogue yet)")
    cases = [c for c in cases if c not in pending]
    if not cases:
        print("no cases")
        return 0
    per_kind = ", ".join(f"{k} {sum(c['kind'] == k for c in cases)}" for k in KINDS)
    print(f"catalogue: {len(ids)} entries; cases: {len(cases)} ({per_kind})")
    misses: list[str] = []
    test_rows = None
    for subset in ("dev", "own", "checks", "corpus dev", "corpus test", "by-message dev", "by-message test"):
        chosen = [c for c in cases if c["set"] == subset]
        if not chosen:
            continue
        print(f"\n=== {subset} cases ({len(chosen)})")
        rows = evaluate(engine(root), chosen, misses if args.misses else None)
        report("trainkb search", rows, True)
        report("baseline: BM25 over record text", evaluate(bm25_baseline(ids, texts), chosen), False)
        if not subset.startswith(("corpus", "by-message")):
            report("baseline: rapidfuzz token_set_ratio", evaluate(fuzz_baseline(ids, texts), chosen), False)
        if subset == "corpus test":
            test_rows = rows
        if subset.startswith("by-message"):
            r = rows["all"]
            right, confident = r.get("confident", 0) - r.get("confident_wrong", 0), r.get("confident", 0)
            print(
                f"  {subset}: medium/high answers right {right}/{confident} = {_pct(right, confident).strip()}"
                f" (95% Wilson lower bound {wilson_low(right, confident):.0%})"
            )
    corpus = [c for c in cases if c["set"].startswith("corpus")]
    if corpus:
        by_batch(engine(root), corpus)
    if test_rows is not None:
        goals(test_rows)
    if args.misses:
        print("\nmisses (case id, kind, expected, top-3 returned):")
        print("\n".join(f"  {m}" for m in misses) or "  none")
    return 0


if __name__ == "__main__":
    sys.exit(main())
