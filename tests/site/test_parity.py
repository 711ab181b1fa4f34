"""The browser's paste search agrees with `kb search` on every benchmark case.

Cases come from the extra real pastes TRAINKB_EXTRA_CASES names, when set (read there, never copied
into the repository), and from the case files under benchmarks/, the public failure reports of real_failures*.jsonl and
by_symptom*.jsonl included. Agreement means the same top entry (or both abstaining), the same abstention, the
same status (answered, differential, unknown), why and number of candidates, the same ranked
entries with the same scores, confidences and tells, and the same advice. Tells are compared on
a family of records whose tells use every kind of condition, run on the GPU checks' real OOMs,
and condition by condition on generated logs.
"""

from __future__ import annotations

import json
import os
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from oom_family import OOM_LINE, captures, family_records, family_tells, oom_line
from rapidfuzz import fuzz

from trainkb.catalogue import Catalogue, load_catalogue
from trainkb.search import Index, _normalize, search
from trainkb.search._index import build_data
from trainkb.search._jsregex import js_regex, signature_regex
from trainkb.search._sigregex import compile_signature
from trainkb.search._tells import TellText, fired, tell_data, tell_patterns
from trainkb.search.contract import _condition, engine_patterns

# real pastes kept outside the repository, when TRAINKB_EXTRA_CASES names their JSON-lines file
EXTRA_CASES = [Path(p)] if (p := os.environ.get("TRAINKB_EXTRA_CASES")) else []
BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
REPO_CASES = sorted(
    [*BENCHMARKS.glob("*cases*.jsonl"), *BENCHMARKS.glob("real_failures*.jsonl"), *BENCHMARKS.glob("by_symptom*.jsonl")]
)


def _cases() -> list[dict[str, str]]:
    out = []
    for path in [p for p in EXTRA_CASES if p.is_file()] + REPO_CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                out.append({"id": f"{path.name}:{case.get('id', len(out))}", "text": case["text"]})
    return out


def _top(response_abstained: bool, ids: list[str]) -> str | None:
    return None if response_abstained or not ids else ids[0]


def _ranked(response: dict) -> list[list[object]]:  # type: ignore[type-arg]
    return [[r["id"], r["score"], r["confidence"], r["tell"]] for r in response["results"]]


def _answer(response: dict) -> list[object]:  # type: ignore[type-arg]
    """What kind of answer a response is: status, abstention, why, how many results are candidates, the symptom."""
    return [response["status"], response["abstained"], response["why"], response["candidates"], response["symptom"]]


def _expected(text: str, index: Index, output: str | None = None) -> dict[str, Any]:
    """`kb search --json`'s answer as the site gives it: with the response's symptom line (the browser's
    triage reads it), without a result's layer (the site serves one catalogue)."""
    response = search(text, top=10, catalogue=index, output=output)
    data = response.to_json()
    for result in data["results"]:
        assert result.pop("layer") is None
    return {**data, "symptom": response.symptom}


def test_browser_agrees_with_kb_search(real_catalogue: Catalogue, real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    cases = _cases()
    if not cases:
        pytest.skip("no benchmark cases: neither TRAINKB_EXTRA_CASES nor benchmarks/*cases*.jsonl")
    index = Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash()))
    expected = [_expected(case["text"], index) for case in cases]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate("texts => texts.map(t => window.TrainkbSearch.paste(t))", [c["text"] for c in cases])
    page.close()
    pairs = list(zip(expected, got, strict=True))

    def first(response: dict) -> str | None:  # type: ignore[type-arg]
        return _top(response["abstained"], [r["id"] for r in response["results"]])

    top = [first(e) == first(g) for e, g in pairs]
    abstained = [e["abstained"] == g["abstained"] for e, g in pairs]
    answers = [_answer(e) == _answer(g) for e, g in pairs]
    scores = [_ranked(e) == _ranked(g) and e["advice"] == g["advice"] for e, g in pairs]
    statuses = {
        status: sum(e["status"] == status for e in expected) for status in ("answered", "differential", "unknown")
    }
    print(
        f"\nparity: {sum(top)}/{len(cases)} = {sum(top) / len(cases):.1%} top-1 agreement, "
        f"{sum(abstained)}/{len(cases)} same abstention, {sum(answers)}/{len(cases)} same status, why, symptom and "
        f"candidates ({statuses}), {sum(scores)}/{len(cases)} identical scores, tells and advice"
    )
    misses = [
        (c["id"], _answer(e), _answer(g), _ranked(e)[:3], _ranked(g)[:3])
        for c, (e, g), a, ok in zip(cases, pairs, answers, scores, strict=True)
        if not (a and ok)
    ]
    assert all(top) and all(abstained) and all(answers) and all(scores), misses[:3]


def test_browser_agrees_on_noise(real_catalogue: Catalogue, real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Random words and letter soup (the noise cap) and a known error inside them rank alike in both engines."""
    rng = random.Random(5)
    texts = []
    for size in (30, 300, 2000):
        words = " ".join(
            "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 4))) for _ in range(size)
        )
        texts += [
            words,
            words + "\nRuntimeError: Expected to have finished reduction in the prior iteration "
            "before starting a new one.\n",
        ]
        texts.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyzABCXYZ0123 .:_\n") for _ in range(size * 4)))
    for seed in (1, 3):  # word soups whose best entry the noise cap holds at 52 (54.7 without it)
        soup = random.Random(seed)
        texts.append(
            " ".join(
                "".join(soup.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(soup.randint(2, 4)))
                for _ in range(3000)
            )
        )
    index = Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash()))
    expected = [search(text, top=10, catalogue=index).to_json() for text in texts]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate("texts => texts.map(t => window.TrainkbSearch.paste(t))", texts)
    page.close()
    assert [r["score"] for r in expected[-1]["results"][:1]] == [52.0]
    for want, have in zip(expected, got, strict=True):
        assert (want["abstained"], _ranked(want)) == (have["abstained"], _ranked(have))


def test_browser_agrees_on_a_symptom_family(build_small: Callable[..., Path], browser) -> None:  # type: ignore[no-untyped-def]
    """Whole responses, tells included, on real OOMs: answered by a tell, a differential where none or two fire.

    Each capture is searched whole, as its OOM line alone and as its last line, and (as `kb run` and
    the hook search) as its last lines with the whole capture for the tells to read.
    """
    site = build_small(family_records())
    cat = load_catalogue(site.parent / "catalogue")
    index = Index(build_data(cat.ordered(), cat.content_hash()))
    outputs = list(captures().values())
    cases: list[tuple[str, str | None]] = [(text, None) for output in outputs for text in (output, oom_line(output))]
    cases += [(output.splitlines()[-1], output) for output in outputs]
    cases += [(oom_line(output), output) for output in outputs]
    cases += [("KeyError: 'input_ids'", None), (OOM_LINE, None), ("", None)]
    expected = [_expected(t, index, o) for t, o in cases]
    page = browser.new_page()
    page.goto((site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")
    got = page.evaluate(
        """cases => {
        const engine = new window.TrainkbEngine.Engine(window.TRAINKB_INDEX.search);
        return cases.map(([text, output]) => engine.search(text, 10, 1, output));
    }""",
        [list(case) for case in cases],
    )
    page.close()
    statuses = sorted({(e["status"], e["candidates"], bool(e["why"])) for e in expected})
    # every path: answered by a tell; a differential where none fires (5 candidates, one without a tell)
    # or where two fire; nothing recognised
    assert statuses == [
        ("answered", 0, True),
        ("differential", 2, False),
        ("differential", 5, False),
        ("unknown", 0, False),
    ]
    assert any(r["tell"] is None for e in expected if e["candidates"] == 5 for r in e["results"][:5])
    assert any("symptom" not in (e["advice"] or "") and "output" in (e["advice"] or "") for e in expected)
    for (text, output), want, have in zip(cases, expected, got, strict=True):
        assert have == want, (text[:120], output is not None)


TELL_LINES = [
    "a=[{a}] b=[{b}]",
    "step {i} | mem {v} | loss 2.3",
]
SIZES = [
    "1",
    "1.",
    "1.5e3",
    "1E-2",
    "0 bytes",
    "12 B",
    "3 KiB",
    "3 kib",
    "2 GB",
    "7 TB",
    "1.25 TiB",
    "512 MiB",
    " 5 MiB ",
    "\u00a05 MiB",
    "3 parsecs",
    "lots",
    "",
    "1.2.3",
    "\u0661\u0662",
    "40.00 GiB",
    "4096.00 GiB",
]
PAIR = r"a=\[(?P<a>[^\]]*)\] b=\[(?P<b>[^\]]*)\]"


def _size(rng: random.Random) -> str:
    """A figure as torch prints one (a number and a size unit) or, one time in four, as it never does."""
    return rng.choice(SIZES) if rng.random() < 0.25 else f"{rng.uniform(0, 80):.2f} {rng.choice(('GiB', 'MiB'))}"


def _tell_cases(rng: random.Random) -> list[tuple[dict[str, Any], list[str]]]:
    """Tells of every kind of condition, each with the lines it is evaluated on."""
    out: list[tuple[dict[str, Any], list[str]]] = []
    for op in (">", ">=", "<", "<="):
        for _ in range(30):
            lines = [f"a=[{_size(rng)}] b=[{_size(rng)}]" for _ in range(rng.randint(0, 3))]
            times = rng.choice((1.0, 0.5, 2.0))
            right: str | float = rng.choice(("b", "b", "b", 1e3, 0.0, "missing"))
            left = rng.choice(("a",) * 9 + ("nope",))
            out.append(
                (
                    {"when": [{"compare": {"match": PAIR, "left": left, "op": op, "right": right, "times": times}}]},
                    lines,
                )
            )
    series = r"mem (?P<value>[\d.]+ (?:[KMG]iB|bytes))"
    for _ in range(120):
        start, points = rng.uniform(0.5, 40.0), rng.randint(0, 8)
        trend = rng.choice((-0.2, 0.0, 0.1, 0.3, 1.0))
        values, lines = [start], []
        for _ in range(points):
            values.append(max(0.0, values[-1] * (1 + trend + rng.uniform(-0.1, 0.1))))
        for i, v in enumerate(values):
            unit = rng.choice(("GiB", "GiB", "MiB", "bytes")) if trend == 1.0 else "GiB"
            shown = v * 1024 if unit == "MiB" else v * 2**30 if unit == "bytes" else v
            lines.append(f"step {i} | mem {shown:.2f} {unit} | loss 2.3")
            if rng.random() < 0.2:
                lines.append(f"eval {i} | mem {shown:.2f} {unit} mem 1.00 GiB")  # two values on one line
        pattern = rng.choice((series,) * 4 + (r"mem (?P<other>[\d.]+ GiB)", r"mem (?P<value>[\d.]+)? ?GiB"))
        out.append(({"when": [{"rises": pattern}]}, lines))
    capture_lines = [text.split("\n") for text in captures().values()]
    for lines in capture_lines:
        for condition in (
            {"line": r"Process \d+ has"},
            {"no_line": r"Process \d+ has"},
            {"line": r"PROCESS \d+ HAS [\d.]+ gib"},  # any case, as signatures
            {"line": r"state\[\"exp_avg(?:_sq)?\"\] = torch\.zeros_like\("},
            {"line": r"(?=x)Tried"},  # RE2 cannot run it: holds nowhere, nor does its absence
            {"no_line": r"(?=x)Tried"},
            {"line": r"^torch\.OutOfMemoryError: CUDA out of memory\.$"},  # "$" ends the line
            {"line": r"^torch\.OutOfMemoryError: CUDA out of memory\."},
            {"line": r"cuda-alloc-conf\)$"},
            {"line": r"\bGPU \d+ has a total capacity of \d+\.\d+ GIB\b"},
        ):
            out.append(({"when": [condition]}, lines))
        out.append(({"when": [{"line": "zeros_like"}, {"no_line": "evaluate"}]}, lines))
    return out


def test_tells_fire_alike(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Each kind of condition gives the same verdict in both engines: figures read as sizes, series, lines."""
    cases = _tell_cases(random.Random(13))
    want = [fired(tell, TellText(lines)) for tell, lines in cases]
    shipped = [{"says": "", "when": [_condition(c) for c in tell["when"]]} for tell, _ in cases]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")
    got = page.evaluate(
        """cases => {
        const engine = new window.TrainkbEngine.Engine(window.TRAINKB_INDEX.search);
        return cases.map(([tell, lines]) => engine.fires(tell, lines));
    }""",
        [[tell, lines] for tell, (_, lines) in zip(shipped, cases, strict=True)],
    )
    page.close()
    kinds = [next(iter(tell["when"][0])) for tell, _ in cases]
    share = {kind: sum(w for w, k in zip(want, kinds, strict=True) if k == kind) / kinds.count(kind) for kind in kinds}
    print(f"\ntells: {sum(want)} of {len(cases)} fire in kb search; share firing by kind {share}")
    assert all(0.15 < part < 0.85 for part in share.values()), share  # both verdicts, for every kind
    for (tell, lines), a, b in zip(cases, want, got, strict=True):
        assert a is b, (tell, lines[:4])


def test_partial_ratio_matches_rapidfuzz(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(7)
    alphabet = "abcde fgh<>_:."
    pairs = []
    for _ in range(300):
        needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 64)))
        hay = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 200)))
        pairs.append([needle, hay])
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate("pairs => pairs.map(p => window.TrainkbEngine.partialRatio(p[0], p[1], 0))", pairs)
    page.close()
    for (a, b), score in zip(pairs, got, strict=True):
        assert score == pytest.approx(fuzz.partial_ratio(a, b), abs=1e-6), (a, b)


def test_alignment_matches_rapidfuzz(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """The aligned windows too, ties included: the sibling-message check reads them."""
    rng = random.Random(11)
    cases = []
    for alphabet in ("ab", "abc ", "abcde fgh<>_:."):
        for _ in range(200):
            needle = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))
            hay = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 160)))
            cases.append([needle, hay, rng.choice((0, 72))])
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate(
        """cases => cases.map(c => {
        const r = window.TrainkbEngine.alignment(c[0], c[1], c[2]);
        return r && [r.score, r.srcStart, r.srcEnd, r.destStart, r.destEnd];
    })""",
        cases,
    )
    page.close()
    for (a, b, cutoff), alignment in zip(cases, got, strict=True):
        want = fuzz.partial_ratio_alignment(a, b, score_cutoff=cutoff)
        assert alignment == (None if want is None else list(want)), (a, b, cutoff)


def _spans(signature: str, text: str) -> list[list[int]]:
    """Character spans of RE2's matches of a signature in ``text`` (it searches UTF-8 bytes)."""
    data, out = text.encode(), []
    for m in compile_signature(signature).finditer(data):
        out.append([len(data[: m.start()].decode()), len(data[: m.end()].decode())])
    return out


def test_regexes_keep_python_meaning(real_catalogue: Catalogue, real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Python's \\w, \\d, \\s, \\b, "." and "$" are Unicode-aware; the exported regexes match the same spans.

    Signatures are matched by RE2 in `kb search` (ASCII classes, one line at a time, "^" and "$" at
    the line's ends) and by the browser line by line: their exported regexes match the spans RE2
    finds in each line, and RE2 over a whole paste finds exactly the per-line spans.
    """
    patterns = [(p.pattern, p.flags) for p in engine_patterns().values()]
    patterns += [(p.pattern, p.flags) for _holder, p in _normalize.MASKS]
    sigs = [s.regex or re.escape(s.literal) for e in real_catalogue.ordered() for s in e.signatures]
    tells = [tell_data(t) for e in real_catalogue.ordered() for t in e.tells] + family_tells()
    sigs += sorted({pattern for tell in tells for _, pattern in tell_patterns(tell)})  # run as the signatures are
    texts = [
        "模型训练报错KeyError: 'prompt'",
        "rank ３ pid ٣٣ at 12:00:01\n",
        "a\u2028b\x85c\u00a0d\n",
        "RuntimeError: CUDA out of memory.\n",
        'Traceback (most recent call last):\n  File "x.py", line 3, in f\n',
        "torch.Size([2, 3]) 错误 ValueError:  ſtate İ\n\n",
        "Parameter indices which did not receive grad for rank ３: 1\n",
        "[W socket.cpp:436] [c10d] The server socket has failed to listen on [::]:29500\n"
        "RuntimeError: Address already in use\n",
    ]
    lines = [line for text in texts for line in text.split("\n")]
    want = [
        [[[m.start(), m.end()] for m in re.compile(src, flags).finditer(t)] for t in texts] for src, flags in patterns
    ]
    want += [[_spans(src, line) for line in lines] for src in sigs]
    for src in sigs:  # per line is what RE2 finds in the whole paste too
        for text in texts:
            joined, offset = [], 0
            for line in text.split("\n"):
                joined += [[a + offset, b + offset] for a, b in _spans(src, line)]
                offset += len(line) + 1
            assert joined == _spans(src, text), src
    jobs = [[js_regex(src, flags), texts] for src, flags in patterns] + [[signature_regex(src), lines] for src in sigs]
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate(
        """jobs => jobs.map(([s, texts]) => texts.map(t => {
        const r = new RegExp(s[0], s[1] + "g"), out = [];
        const at = i => Array.from(t.slice(0, i)).length;
        let m;
        while ((m = r.exec(t)) !== null) {
            out.push([at(m.index), at(m.index + m[0].length)]);
            if (!m[0]) r.lastIndex++;
        }
        return out;
    }))""",
        jobs,
    )
    page.close()
    for src, spans, expected in zip([p for p, _f in patterns] + sigs, got, want, strict=True):
        assert spans == expected, src


def _triage_fixtures() -> list[Path]:
    root = Path(__file__).resolve().parents[1] / "triage" / "fixtures"
    return sorted(root.glob("*/*/combined.log"))


def _triage_view(t: dict | None) -> object:  # type: ignore[type-arg]
    """What the paste box and `kb triage` must agree on: the verdict, each rank's role, the entry."""
    if t is None:
        return None
    return {
        "culprits": t["culprits"],
        "basis": t["basis"],
        "root_cause_rank": t["root_cause_rank"],
        "root_cause_is_victim": t["root_cause_is_victim"],
        "gap_seconds": t["gap_seconds"],
        "collect": t["collect"],
        "entry": t["entry"] and t["entry"]["id"],
        "explained": t["explained_rank"],
        "ranks": [
            [r["rank"], r["role"], r["how"], r["error"], r["line"], r["exitcode"], r["collective"]] for r in t["ranks"]
        ],
    }


def test_browser_triage_agrees_with_kb_triage(real_catalogue: Catalogue, real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    """Every captured multi-rank run (gloo and NCCL), plus single-process text that must yield no triage."""
    from trainkb.triage import to_json, triage_text

    logs = _triage_fixtures()
    assert logs, "no triage fixtures under tests/triage/fixtures"
    texts = [p.read_text(encoding="utf-8") for p in logs] + [c["text"] for c in _cases()[:40]]
    index = Index(build_data(real_catalogue.ordered(), real_catalogue.content_hash()))
    expected = []
    for text in texts:
        t = triage_text(text, catalogue=index)
        expected.append(_triage_view(to_json(t)) if t is not None else None)
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    got = page.evaluate("texts => texts.map(t => window.TrainkbSearch.triage(t))", texts)
    page.close()
    views = [_triage_view(g) for g in got]
    named = sum(1 for e in expected if e is not None)
    same = sum(e == g for e, g in zip(expected, views, strict=True))
    print(f"\ntriage parity: {same}/{len(texts)} identical ({named} multi-rank captures)")
    diffs = [(str(p), e, g) for p, e, g in zip(logs + ["case"] * 40, expected, views, strict=False) if e != g]
    assert same == len(texts), diffs[:2]


def test_paste_box_shows_the_ranks_above_the_matches(real_site: Path, browser) -> None:  # type: ignore[no-untyped-def]
    log = next(p for p in _triage_fixtures() if p.parent.name == "nan-n2-r1" and p.parent.parent.name == "nccl")
    page = browser.new_page()
    page.goto((real_site / "index.html").as_uri())
    page.evaluate("window.TrainkbSearch.ready()")  # the index and engine load on first use
    page.fill("#paste-input", log.read_text(encoding="utf-8"))
    page.click("#paste-go")
    block = page.locator("#paste-results .triage")
    assert block.count() == 1
    text = block.inner_text()
    assert text.startswith("Rank 1 broke first") and "rank 0 victim" in text and "P14" in text
    # the matches (or the causes that print the failing rank's line) still follow the block
    assert page.locator("#paste-results .triage + :is(.verdict, .differential)").count() == 1
    page.fill("#paste-input", "ValueError: one process only")
    page.click("#paste-go")
    assert page.locator("#paste-results .triage").count() == 0
    page.close()
