"""The site's engine.js and triage.js answer exactly as `kb search` and `kb triage` do, under Node.

The browser tier (test_parity.py) drives Chromium and is left out of `make quick`; this module runs
the same two scripts unchanged in one Node process per test session, fed the search-index.js a site
build writes, on every benchmark case, the checks' captured evidence, every signature's own text,
the triage fixtures and seeded variations of all of them (splices, cuts, edits, Unicode, word soups
at the noise rule's edge), and inputs built at the edges of the rules that seeded ones seldom reach
(``_noise_edges``, ``_edge_cases``). Whole responses are compared, field by field: a field either side adds
is a difference until the other side has it too. The exceptions, each with its reason: the fields in
``PYTHON_ONLY``; a rank's time, epoch seconds in the browser (``_node_triage``). Evidence of equal
strength is compared in order too: both engines keep it in signature order. kb's answers also gain
what the browser's carry beyond `--json`: the search's ``symptom`` and each rank's ``last_line``.
Pastes at the edges of triage's rules come from _triage_edges.py; engine.js's rule functions are also called
on their own at their exact edges (_engine_edges.py).

Node is needed (``node`` on PATH; .ci/run installs Debian's nodejs when it is missing). Without it
the module is skipped with the reason, except under ``CI=true``, where it fails, as the browser
tests do.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from _engine_edges import kb_block_first, node_args, python_rule, rule_cases, summary_never_came, why_edges
from _triage_edges import triage_edges

from trainkb._ownoutput import OWN
from trainkb.catalogue import Catalogue
from trainkb.ranklog import READ
from trainkb.search import Index, get_index, search
from trainkb.search._input import parse
from trainkb.search._normalize import normalize, terms
from trainkb.search._policy import PASTE, SCORE
from trainkb.search._score import score_entries
from trainkb.site import export_index
from trainkb.triage import to_json, triage_text
from trainkb.triage._report import _when

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "site" / "static"
DRIVER = Path(__file__).with_name("node_engines.js")
# real pastes kept outside the repository, when TRAINKB_EXTRA_CASES names their JSON-lines file
EXTRA_CASES = [Path(p)] if (p := os.environ.get("TRAINKB_EXTRA_CASES")) else []
CASE_FILES = sorted([*(ROOT / "benchmarks").glob("*cases*.jsonl"), *(ROOT / "benchmarks").glob("real_failures*.jsonl")])
TRIAGE_FIXTURES = sorted((ROOT / "tests" / "triage" / "fixtures").glob("*/*/combined.log"))
OWN_OUTPUT = sorted((ROOT / "tests" / "own_output").glob("*.log"))
SEED = 29

# Fields one side has by design, with what the other side's value must be instead.
# results[].layer: kb search names the catalogue layer of a team record; the site serves one catalogue.
# ranks[].file: kb triage also reads per-rank files; the paste box has only text.
PYTHON_ONLY = {("search", "results", "layer"), ("triage", "ranks", "file")}

Json = Any
Case = tuple[str, str]  # (where it comes from, text)


def _missing_node() -> str | None:
    if shutil.which("node") is None:
        return "needs Node.js (`node` on PATH; .ci/run installs Debian's nodejs)"
    return None


class NodeEngines:
    """One Node process running engine.js and triage.js; requests stream in while Python computes."""

    def __init__(self, index_js: Path, errors: BinaryIO) -> None:
        self.errors = errors  # a file, not a pipe: warnings cannot stall Node
        self.proc = subprocess.Popen(
            ["node", str(DRIVER), str(index_js), str(STATIC)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
        )
        self.next_id = 0

    def ask(
        self, requests: list[dict[str, Json]], meanwhile: Callable[[], list[Json]]
    ) -> tuple[list[Json], list[Json]]:
        """Node's answers to ``requests`` and what ``meanwhile`` returns, computed while Node works."""
        first = self.next_id
        self.next_id += len(requests)
        lines = b"".join(
            json.dumps({**r, "id": first + i}, ensure_ascii=True).encode() + b"\n" for i, r in enumerate(requests)
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None

        def feed() -> None:
            assert self.proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):  # Node died: the reader below says why
                self.proc.stdin.write(lines)
                self.proc.stdin.flush()

        writer = threading.Thread(target=feed, daemon=True)  # Node answers as it reads: both pipes must flow
        writer.start()
        expected = meanwhile()
        answers = []
        for i in range(len(requests)):
            line = self.proc.stdout.readline()
            if not line:
                writer.join(timeout=5)
                self.proc.wait(timeout=5)
                self.errors.seek(0)
                err = self.errors.read().decode(errors="replace")
                pytest.fail(f"node stopped after {i} of {len(requests)} answers:\n{err[-3000:]}", pytrace=False)
            answer = json.loads(line)
            assert answer["id"] == first + i, answer
            answers.append(answer)
        writer.join()
        return answers, expected

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session")
def index(real_catalogue: Catalogue) -> Index:
    """The Python engine's index of the catalogue the site is built from, as `kb search` reads it (prebuilt or
    cached; the site's own copy is built afresh, so the two builds are compared too)."""
    return get_index(real_catalogue.root)


@pytest.fixture(scope="session")
def node(real_catalogue: Catalogue, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeEngines]:
    reason = _missing_node()
    if reason is not None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI=true but the Node parity tests cannot run: {reason}", pytrace=False)
        pytest.skip(reason)
    index_js = tmp_path_factory.mktemp("node") / "search-index.js"
    index_js.write_text(export_index(real_catalogue), encoding="utf-8", newline="\n")
    with (index_js.parent / "node.stderr").open("w+b") as errors:
        engines = NodeEngines(index_js, errors)
        yield engines
        engines.close()


# --- comparison -------------------------------------------------------------------------------


def _diff(want: Json, have: Json, path: tuple[str, ...], where: str, out: list[str]) -> None:
    """Append where ``have`` differs from ``want``: each path, both values (numbers compare by value)."""
    if isinstance(want, dict) and isinstance(have, dict):
        for key in sorted(set(want) | set(have)):
            field = (where, *[p for p in path if not p.isdigit()], key)
            at = (*path, key)
            if key not in have:
                if field in PYTHON_ONLY:
                    if want[key] is not None:
                        out.append(f"{'.'.join(at)}: kb gives {want[key]!r}, which the browser cannot show")
                    continue
                out.append(f"{'.'.join(at)}: only in kb ({want[key]!r})")
            elif key not in want:
                out.append(f"{'.'.join(at)}: only in the browser ({have[key]!r})")
            else:
                _diff(want[key], have[key], at, where, out)
    elif isinstance(want, list) and isinstance(have, list):
        if len(want) != len(have):
            out.append(f"{'.'.join(path)}: {len(want)} items in kb, {len(have)} in the browser")
        for i, (a, b) in enumerate(zip(want, have, strict=False)):
            _diff(a, b, (*path, str(i)), where, out)
    elif isinstance(want, bool) or isinstance(have, bool) or want is None or have is None:
        if want is not have:
            out.append(f"{'.'.join(path)}: kb {want!r}, browser {have!r}")
    elif isinstance(want, int | float) and isinstance(have, int | float):
        if want != have:
            out.append(f"{'.'.join(path)}: kb {want!r}, browser {have!r}")
    elif type(want) is not type(have) or want != have:
        out.append(f"{'.'.join(path)}: kb {want!r}, browser {have!r}")


def _compare(where: str, cases: list[Case], answers: list[Json], expected: list[Json]) -> None:
    """Fail with the first differing cases, each with its first differences and the start of its text."""
    bad = []
    for (label, text), answer, want in zip(cases, answers, expected, strict=True):
        if "error" in answer:
            bad.append(f"{label}: the browser engine threw: {answer['error'][:600]}\n    text: {text[:300]!r}")
            continue
        out: list[str] = []
        _diff(want, answer["result"], (), where, out)
        if out:
            bad.append(f"{label}:\n    " + "\n    ".join(out[:6]) + f"\n    text: {text[:300]!r}")
    print(f"\n{where} parity: {len(cases) - len(bad)}/{len(cases)} identical")
    assert not bad, f"{len(bad)} of {len(cases)} {where} answers differ:\n" + "\n".join(bad[:5])


def _node_triage(view: Json) -> Json:
    """Python's layout for the browser's triage: a rank's time is epoch seconds there, ISO 8601 in kb triage."""
    if view is None:
        return None
    for rank in view.get("ranks", ()):
        if isinstance(rank.get("time"), int | float):
            rank["time"] = _when(rank["time"])
    return view


def _python_triage(text: str, index: Index) -> Json:
    """`kb triage --json` of ``text``, plus each rank's last line, which the browser's result carries too."""
    t = triage_text(text, catalogue=index)
    if t is None:
        return None
    view = to_json(t)
    for rank, verdict in zip(view["ranks"], t.ranks, strict=True):
        rank["last_line"] = verdict.last_line
    return view


# --- inputs ----------------------------------------------------------------------------------


def _benchmark_cases() -> list[Case]:
    """Every benchmark case (the extra cases too when set), the test pastes and every check's captured evidence."""
    cases: list[Case] = []
    for path in [p for p in EXTRA_CASES if p.is_file()] + CASE_FILES:
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                cases.append((f"{path.name}:{case.get('id', n)}", case["text"]))
    for path in sorted((ROOT / "tests" / "fixtures").rglob("*.txt")):
        cases.append((str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")))
    for path in sorted((ROOT / "reports").glob("*.json")):
        for row in json.loads(path.read_text(encoding="utf-8"))["results"]:
            if row.get("evidence"):
                cases.append((f"{path.name}:{row['entry']}:{row['check']}", row["evidence"]))
    return cases


# characters the engines treat specially or count differently: line breaks Python splits on,
# wide and combining characters, astral code points (two UTF-16 units in JS), controls, ANSI
ODD = [
    "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\r", "\r\n", "\t", "\x00", "\x1b[31m", "\x1b[0m",
    "\u00a0", "\u3000", "\u200b", "\ufeff", "\u0301", "\u0130", "\u017f", "\u00df", "\u2126", "\u212a",
    "\uff13", "\u0663", "\u00b2", "\u6a21\u578b", "\u9519\u8bef", "\U0001f3d6\ufe0f", "\U0001d400",
    "\U00010348", "\u05d0", "\u202e", "\u2502", "\u256d", "> ", "[rank1]: ", "[default0]:",
]  # fmt: skip


def _edit(rng: random.Random, text: str) -> str:
    """One to six characters deleted, replaced or inserted, from the odd ones or from plain ASCII."""
    chars = list(text)
    for _ in range(rng.randint(1, 6)):
        at = rng.randint(0, len(chars))
        pool = rng.choice((ODD, list("abcdefghijklmnopqrstuvwxyz0123456789 .:_()[]'\"\n/-=<>")))
        op = rng.random()
        if op < 0.4 and chars:
            del chars[min(at, len(chars) - 1)]
        elif op < 0.7 and chars:
            chars[min(at, len(chars) - 1)] = rng.choice(pool)
        else:
            chars.insert(at, rng.choice(pool))
    return "".join(chars)


def _soup(rng: random.Random, words: int, vocabulary: list[str], known: float) -> str:
    """Short random words, a share of them from the catalogue's own vocabulary: the noise rule's inputs."""
    out = []
    for _ in range(words):
        if vocabulary and rng.random() < known:
            out.append(rng.choice(vocabulary))
        else:
            out.append("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.choice((1, 2, 2, 3, 4, 6)))))
    return " ".join(out)


def _generated(cases: list[Case], vocabulary: list[str], titles: list[str], seed: int) -> list[Case]:
    """Seeded variations of real pastes, and inputs no case holds; the same list every run."""
    rng = random.Random(seed)
    texts = [t for _label, t in cases]
    lines = [line for t in texts for line in t.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line][:4000]
    out: list[Case] = [
        ("empty", ""),
        ("blank", " \n\t\n"),
        ("newlines", "\n" * 6000),
        ("one char", "a"),
        ("header only", "Traceback (most recent call last):"),
        ("header and frame", 'Traceback (most recent call last):\n  File "x.py", line 3, in f\n'),
        ("long line", "RuntimeError: " + "x" * 3000 + " CUDA out of memory."),
        ("over MAX_CHARS", ("step 1 loss 0.5\n" * 13000) + "RuntimeError: CUDA error: out of memory\n"),
        ("odd characters", "".join(ODD)),
    ]
    for n in range(80):
        a, b = rng.choice(texts).splitlines(), rng.choice(texts).splitlines()
        cut_a, cut_b = rng.randint(0, len(a)), rng.randint(0, len(b))
        out.append((f"splice {n}", "\n".join(a[:cut_a] + b[cut_b:])))
    for n in range(80):
        t = rng.choice(texts)
        cut = rng.randint(0, len(t))
        out.append((f"cut {n}", t[:cut] if rng.random() < 0.6 else t[cut:]))
    for n in range(120):
        out.append((f"edit {n}", _edit(rng, rng.choice(texts))))
    for n in range(60):
        t = rng.choice(texts).splitlines()
        op = n % 6
        if op == 0:
            rng.shuffle(t)
        elif op == 1 and t:
            t = t + [rng.choice(t)] * rng.randint(2, 400)
        elif op == 2:
            t = [line for line in t if rng.random() < 0.7]
        elif op == 3:
            t = [line.upper() for line in t]
        elif op == 4:
            t = [f"[rank{rng.randint(0, 3)}]: {line}" for line in t]
        else:
            t = [f"2026-11-26 06:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d},123 INFO {line}" for line in t]
        out.append((f"lines {n}", rng.choice(("\n", "\r\n", "\u2028", "\x85")).join(t)))
    for n in range(50):
        picked = [rng.choice(lines) for _ in range(rng.randint(1, 40))]
        out.append((f"random lines {n}", "\n".join(picked)))
    for n in range(30):
        alphabet = "".join(ODD) + "abcXYZ0123 .:_\n"
        out.append((f"letters {n}", "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 3000)))))
    for n in range(160):  # a description drowned in gibberish: the known share crosses the noise threshold
        words = rng.choice((rng.choice(titles), rng.choice(lines))).split()
        drowned = _soup(rng, round(len(words) * rng.uniform(0.5, 4.0)), [], 0.0).split()
        for word in drowned:
            words.insert(rng.randint(0, len(words)), word)
        out.append((f"drowned {n}", " ".join(words)))
    for n in range(60):
        size = rng.choice((4, 6, 7, 8, 9, 10, 12, 16, 30, 300, 2000))
        soup = _soup(rng, size, vocabulary, rng.choice((0.0, 0.1, 0.2, 0.3, 0.4, 0.6)))
        if n % 2:
            soup = soup + "\n" + rng.choice(errors) + "\n"
        out.append((f"soup {n}", soup))
    return out


def _known_terms(index: Index, text: str) -> tuple[set[str], set[str]]:
    """The paste's distinct words as the noise rule counts them, and those the catalogue uses."""
    counted = {t for t in terms(parse(text).prose) if len(t) >= SCORE.noise_min_chars}
    return counted, {t for t in counted if t in index.idf}


def _cap_shows(index: Index, text: str) -> bool:
    """The cap noise puts on prose would change a score kb shows for ``text``: one of the first ten entries has
    prose above the cap and less than a full score."""
    return any(s.prose > SCORE.unknown_error_cap and s.score < 100 for s in score_entries(index, parse(text))[:10])


def _unknown(rng: random.Random, index: Index, taken: set[str], size: int) -> str:
    """A word of ``size`` letters that is one search term, no word of the catalogue and not yet in ``taken``."""
    while True:
        word = "".join(rng.choice("bcdfghjklmnpqrstvwxz") for _ in range(size))
        if terms(word) == [word] and word not in index.idf and word not in taken:
            taken.add(word)
            return word


def _drowned_to(rng: random.Random, index: Index, text: str, distinct: int, short: int = 0) -> str:
    """``text`` under a line of unknown words that brings its distinct counted words to ``distinct``
    (``short`` of them as short as a counted word may be)."""
    counted, _known = _known_terms(index, text)
    taken = set(counted)
    words = [_unknown(rng, index, taken, SCORE.noise_min_chars) for _ in range(short)]
    words += [_unknown(rng, index, taken, 5) for _ in range(distinct - len(counted) - short)]
    rng.shuffle(words)
    return " ".join(words) + "\n" + text


def _noise_edges(index: Index, cases: list[Case], records: list[tuple[str, list[str]]]) -> list[Case]:
    """The noise rule's three edges where it decides the score: a paste whose prose is above the cap is capped
    only when noisy. A known failure line (real, answered by kb) of k catalogue words under unknown words making
    exactly k / NOISE_KNOWN_SHARE distinct words, one fewer and one more (and with the shortest counted words); and a
    record's own title or alias of at most two catalogue words (no exception: a known failure) under enough
    unknown words to reach NOISE_MIN_TERMS distinct words, and one fewer."""
    rng = random.Random(SEED)
    out: list[Case] = []
    lines = dict.fromkeys(line.strip() for _l, t in cases for line in t.splitlines() if "Error:" in line)
    found = 0
    for line in lines:
        counted, known = _known_terms(index, line)
        edge = round(len(known) / SCORE.noise_known_share)  # exactly the share: the known words are not fewer
        if SCORE.noise_known_share * edge != len(known) or edge < SCORE.noise_min_terms or edge - 4 < len(counted):
            continue
        if not _cap_shows(index, line):
            continue
        if search(line, catalogue=index).status != "answered":
            continue
        for distinct in (edge - 1, edge, edge + 1):
            out.append((f"noise edge {found}: {distinct} words", _drowned_to(rng, index, line, distinct)))
        out.append((f"noise edge {found}: short words", _drowned_to(rng, index, line, edge + 1, short=3)))
        found += 1
        if found == 4:
            break
    found = 0
    for _id, texts in records:
        for text in texts:
            counted, known = _known_terms(index, text)
            if len(known) >= SCORE.noise_known_share * SCORE.noise_min_terms or len(counted) >= SCORE.noise_min_terms:
                continue
            if not _cap_shows(index, text):
                continue
            for distinct in (SCORE.noise_min_terms - 1, SCORE.noise_min_terms):
                out.append((f"noise floor {found}: {distinct} words", _drowned_to(rng, index, text, distinct)))
            found += 1
            break
        if found == 4:
            break
    return out


def _answered_line(index: Index, cases: list[Case]) -> str:
    """The first failure line of the cases that kb answers on its own."""
    for _label, text in cases:
        for line in text.splitlines():
            if "Error: " in line and search(line.strip(), catalogue=index).status == "answered":
                return line.strip()
    raise AssertionError("no benchmark line is answered on its own")


def _cut_signatures(index: Index, size: int, typed: bool) -> list[Case]:
    """Signature texts cut to ``size`` characters (as normalised) that still share enough words to be aligned:
    a line exactly as long as the shortest one aligned, and one character shorter."""
    out: list[Case] = []
    for n, sig in enumerate(index.sigs):
        for length in (size, size - 1):
            cut = sig.texts[0][:length].strip() if sig.texts else ""
            needed = max(SCORE.min_shared_terms, SCORE.shared_terms_share * len(sig.terms))
            if len(normalize(cut)) != length or len(set(terms(cut)) & sig.terms) < needed:
                break
            out.append((f"signature {n} cut to {length}", f"{sig.type}: {cut}" if typed and sig.type else cut))
        if len(out) >= 24:
            break
    return out


def _edge_cases(index: Index, cases: list[Case]) -> list[Case]:
    """Inputs at the parser's and the fuzzy step's limits, built from an answered failure line: as many newlines as
    MAX_LINES (the first line is dropped) and one fewer; a paste over MAX_CHARS whose first newline after the cut is
    NEWLINE_SEARCH characters on (its first line's tail, a failure, is read only when the cut stays there), and one
    fewer; one prefix more than MAX_PREFIXES; a message that runs on for MAX_CONTINUATION lines before another
    failure's words (a line of its own, or one more line of the message); and signature texts cut to the shortest
    lengths aligned, a plain line of them twice (the later copy is the one aligned)."""
    line = _answered_line(index, cases)
    other = next(t for _l, t in cases if "Error: " in t and line not in t).strip().splitlines()[-1].strip()
    out: list[Case] = [
        ("MAX_LINES newlines", line + "\n" * PASTE.max_lines),
        ("MAX_LINES - 1 newlines", line + "\n" * (PASTE.max_lines - 1)),
        ("MAX_PREFIXES + 1 prefixes", "[default1]:[rank1]: > | " + line),
        ("MAX_PREFIXES prefixes", "[default1]:[rank1]: | " + line),
    ]
    filler = ("step 1 loss 0.5 " * (PASTE.max_line_chars // 16))[: PASTE.max_line_chars - 1]
    for reach in (PASTE.newline_search, PASTE.newline_search - 1):
        rest = PASTE.max_chars - reach - 1  # the cut falls ``reach`` characters before the first newline
        body = (filler + "\n") * ((rest - len(line)) // (len(filler) + 1))
        body = "x" * (rest - len(line) - len(body)) + body + line
        first = ("step 1 loss 0.5 " * (reach // 16 + 2) + other)[-(reach + 10) :]  # its failure survives the cut
        out.append((f"newline {reach} past the cut", first + "\n" + body))
    frames = 'Traceback (most recent call last):\n  File "x.py", line 3, in f\n'
    for run in (PASTE.max_continuation, PASTE.max_continuation - 1):
        runs_on = "step 1 loss 0.5\n" * run + other.split(": ", 1)[-1]  # the last, a known message, without its type
        out.append((f"message running on {run} lines", frames + line + "\n" + runs_on))
    out += _cut_signatures(index, SCORE.min_fuzzy_chars, typed=True)
    plain = _cut_signatures(index, SCORE.min_line_chars, typed=False)
    out += plain + [(f"{label}, twice", f"{text}\n\n{text}") for label, text in plain[:6]]
    return out


def _vary_run(rng: random.Random, lines: list[str], logs: list[Case]) -> list[str]:
    """One seeded change to a multi-rank run's lines."""
    op = rng.randrange(11)
    if op == 0:
        return [line for line in lines if rng.random() < 0.8]
    if op == 1:
        return lines[: rng.randint(0, len(lines))]
    if op == 2:  # the tail of the output, as pasted from a terminal
        return lines[rng.randint(0, len(lines)) :]
    if op == 3:
        a, b = rng.sample(range(4), 2)
        swap = {f"rank{a}]": f"rank{b}]", f"rank{b}]": f"rank{a}]", f"Rank {a}": f"Rank {b}", f"Rank {b}": f"Rank {a}"}
        return ["".join(swap.get(part, part) for part in _split_keep(line, swap)) for line in lines]
    if op == 4:  # one rank's clock, or one time stamp (a summary's "time" field), moves: the tie rule's edge
        rank, shift = rng.randint(0, 3), rng.choice((-2, -1, 1, 2))
        tags = (f"[default{rank}]", f"[rank{rank}]")
        stamped = [i for i, line in enumerate(lines) if _CLOCK.search(line)]
        one = rng.choice(stamped) if stamped and rng.random() < 0.5 else -1
        return [
            _shift_seconds(line, shift) if i == one or (one < 0 and line.startswith(tags)) else line
            for i, line in enumerate(lines)
        ]
    if op == 5:
        return [line.replace("[rank", "[default") for line in lines]
    if op == 6:  # per-rank output only: the launcher's summary and its own lines gone
        return [line for line in lines if line.startswith("[")]
    if op == 7:  # one rank says nothing at all
        tags = (f"[default{rng.randint(0, 3)}]", f"[rank{rng.randint(0, 3)}]")
        return [line for line in lines if not line.startswith(tags)]
    if op == 8:  # the launcher's failure summary never came (the job was killed before it)
        end = next((i for i, line in enumerate(lines) if line.startswith(("Traceback", "===="))), len(lines))
        return lines[:end]
    if op == 9:
        other = rng.choice(logs)[1].splitlines()
        return [rng.choice((lines, other))[i] for i in range(min(len(lines), len(other)))]
    return [_edit(rng, line) if rng.random() < 0.1 else line for line in lines]


def _triage_variants(logs: list[Case], seed: int) -> list[Case]:
    """Seeded changes to captured multi-rank runs (one to three each): lines dropped, cut, ranks renamed or
    silenced, clocks shifted, the launcher's summary gone."""
    rng = random.Random(seed)
    out: list[Case] = []
    for n in range(300):
        label, log = rng.choice(logs)
        lines = log.splitlines()
        for _ in range(rng.randint(1, 3)):
            lines = _vary_run(rng, lines, logs)
        out.append((f"{label} variant {n}", "\n".join(lines) + "\n"))
    return out


_RAISING = re.compile(r"^((?:\[(?:default|rank)\d+\]:\s?)+)((?:\w+\.)*\w+Error: .*)$")
_RANK_TAG = re.compile(r"\d+(?=\]:)")


def _raises(line: str) -> re.Match[str] | None:
    """A rank's line raising an error of its own (not a peer's timeout, lost connection or mismatch)."""
    m = _RAISING.match(line)
    victim = (READ.timeout, READ.connection, READ.mismatch, READ.barrier)
    return m if m and not any(p.search(m[2]) for p in victim) else None


def _tie_variants(logs: list[Case]) -> list[Case]:
    """A second rank raising the first one's error, both lines stamped a set gap apart: the edges of the rule
    that names every rank failing on its own within a second of the first (and only the first beyond it)."""
    out: list[Case] = []
    for label, log in logs:
        lines = log.splitlines()
        at = next((i for i, line in enumerate(lines) if _raises(line)), None)
        if at is None:
            continue
        m = _raises(lines[at])
        assert m is not None
        other = _RANK_TAG.sub("7", m[1])  # a rank of its own, above those of the captured runs
        for gap in (0.0, 0.5, 0.999, 1.0, 1.001, 1.5, 2.0):
            first = f"{m[1]}{m[2]} (2026-11-26 06:00:00.000000)"
            second = f"{other}{m[2]} (2026-11-26 06:00:{gap:09.6f})"
            out.append((f"{label} tie {gap}", "\n".join([*lines[:at], first, second, *lines[at + 1 :]]) + "\n"))
    return out


_OTHER_DIGITS = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667\u0668\u0669")
_TAG = re.compile(r"^\[default(\d+)\]:")


def _spelt_otherwise(logs: list[Case]) -> list[Case]:
    """Each captured run with its digits in another script (ranks, counters and clocks read as int() reads them),
    with every clock at its last second, and with every other line tagged by torch instead of torchrun."""
    out: list[Case] = []
    for label, log in logs:
        out.append((f"{label} in Arabic-Indic digits", log.translate(_OTHER_DIGITS)))
        out.append((f"{label} at second 59", _CLOCK.sub(lambda m: f"{m[1]}:{m[2]}:59", log)))
        lines = log.splitlines()
        mixed = [_TAG.sub(r"[rank\1]:", line) if i % 2 else line for i, line in enumerate(lines)]
        out.append((f"{label} with mixed tags", "\n".join(mixed) + "\n"))
    return out


def _split_keep(line: str, words: dict[str, str]) -> list[str]:
    """``line`` cut before and after each occurrence of a key of ``words`` (left to right, longest first)."""
    parts, i, start = [], 0, 0
    while i < len(line):
        hit = next((w for w in sorted(words, key=len, reverse=True) if line.startswith(w, i)), None)
        if hit is None:
            i += 1
            continue
        parts += [line[start:i], hit]
        i += len(hit)
        start = i
    return [*parts, line[start:]]


_CLOCK = re.compile(r"(\d\d):(\d\d):(\d\d)")


def _shift_seconds(line: str, shift: int) -> str:
    """The first hh:mm:ss in ``line`` moved by ``shift`` seconds (wrapping inside the minute)."""
    m = _CLOCK.search(line)
    if not m:
        return line
    seconds = (int(m.group(3)) + shift) % 60
    return f"{line[: m.start(3)]}{seconds:02d}{line[m.end(3) :]}"


# --- tests -----------------------------------------------------------------------------------


def _search_both(node: NodeEngines, index: Index, cases: list[Case], options: list[tuple[int, int]]) -> None:
    requests = [
        {"op": "search", "text": text, "top": top, "first_line": first}
        for (_label, text), (top, first) in zip(cases, options, strict=True)
    ]

    def python() -> list[Json]:
        out = []
        for (_label, text), (top, first) in zip(cases, options, strict=True):
            response = search(text, top=top, catalogue=index, first_line=first)
            view = response.to_json()
            view["symptom"] = response.symptom  # not in --json, but the browser's triage reads it
            out.append(view)
        return out

    answers, expected = node.ask(requests, python)
    _compare("search", cases, answers, expected)


def test_search_agrees_on_every_benchmark_case(node: NodeEngines, index: Index) -> None:
    cases = _benchmark_cases()
    assert len(cases) > 700, f"only {len(cases)} benchmark cases: a case file went missing"
    _search_both(node, index, cases, [(10, 1)] * len(cases))


def test_search_agrees_on_multirank_logs_and_saved_kb_output(node: NodeEngines, index: Index) -> None:
    """The triage fixtures (a silent rank's peers' teardown is left out), also cut before torchrun's summary, and
    logs holding kb's own blocks (left out too), whole and as their tails; the own-output logs do hold blocks that
    change the answer."""
    logs = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in TRIAGE_FIXTURES]
    own = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in OWN_OUTPUT]
    assert own and all(OWN.mark in text for _label, text in own), "no saved output with kb's blocks in tests/own_output"
    kept = [text for _label, text in own if search(text, catalogue=index).to_json() != _unmarked(text, index)]
    assert kept, "no saved kb block changes the answer: the rule that skips them goes untested"
    cases = logs + own + summary_never_came(index, logs)
    cases += [(f"{label} (tail)", "\n".join(text.split("\n")[len(text.split("\n")) // 3 :])) for label, text in cases]
    _search_both(node, index, cases, [(10, 1 + i % 2 * 40) for i in range(len(cases))])


def _unmarked(text: str, index: Index) -> Json:
    """kb's answer to ``text`` with its blocks' heading mark spelt otherwise, so that they are read as output."""
    return search(text.replace(OWN.mark, "-- kb"), catalogue=index).to_json()


def test_search_agrees_on_generated_inputs(node: NodeEngines, index: Index, real_catalogue: Catalogue) -> None:
    """Variations of the cases, titles, each signature's text, odd characters, word soups, the noise rule's edges;
    varied top and first line."""
    titles = [e["title"] for e in index.entries]
    benchmark = _benchmark_cases()
    records = [(r.id, [r.title, *r.aliases]) for r in real_catalogue.ordered()]
    cases = _generated(benchmark, sorted(index.idf), titles, SEED)
    cases += [(f"title of {e['id']}", e["title"]) for e in index.entries]
    cases += [(f"signature {n} of {s.entry}", f"{s.type}: {s.texts[0]}") for n, s in enumerate(index.sigs) if s.texts]
    rng = random.Random(SEED)
    options = [(rng.choice((0, 1, 3, 5, 10, 10)), rng.choice((1, 1, 1, 2, 97, 10_000))) for _ in cases]
    edges = _noise_edges(index, benchmark, records)  # every result shown: the noise rule changes scores
    assert len(edges) >= 16, "too few inputs at the noise rule's edges"
    edges += _edge_cases(index, benchmark)
    whys = why_edges(index)
    assert len(whys) >= 2, "no answered line whose quoted match can grow to why_chars"
    edges += whys
    _search_both(node, index, cases + edges, options + [(10, 1)] * len(edges))


def test_search_agrees_on_a_leading_bom_and_nul_bytes(node: NodeEngines, index: Index) -> None:
    """A saved file's BOM is dropped and a NUL parts the words beside it, in both engines."""
    d8 = "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one"
    cases = [
        ("bom", "\ufeff" + d8 + "\n"),
        ("bom, traceback", '\ufeffTraceback (most recent call last):\n  File "t.py", line 1, in <module>\n' + d8),
        ("nul", "RuntimeError: CUDA error: device-side assert triggered\x00\x00garbage\n"),
        ("bom and nul", "\ufeff" + d8.replace(" ", "\x00")),
    ]
    _search_both(node, index, cases, [(5, 1), (5, 7), (5, 1), (3, 1)])


OOM_CAPTURES = sorted((ROOT / "tests" / "fixtures" / "oom").glob("*.txt"))
OOM_CAUSES = ("m1", "m2", "m3", "m4", "m5", "m7")  # captures whose signs are tells of one OOM family


def test_search_agrees_on_a_tail_read_with_its_whole_output(node: NodeEngines, index: Index) -> None:
    """As `kb run` and the excepthook ask: the last lines as the paste, tells reading the whole output (kb's
    own blocks in it blank, only its last MAX_OUTPUT_CHARS read)."""
    wholes = [p.read_text(encoding="utf-8") for p in [*OOM_CAPTURES, *OWN_OUTPUT, *TRIAGE_FIXTURES[:6]]]
    wholes += [t for _label, t in _benchmark_cases() if t.count("\n") >= 8][:40]
    ooms = {p.stem[:2]: p.read_text(encoding="utf-8") for p in OOM_CAPTURES if p.stem[:2] in OOM_CAUSES}
    wholes += [a + "\n" + b for a, b in itertools.combinations(ooms.values(), 2)]  # two causes' signs: two tells
    wholes += [w[w.index(OWN.mark) :] for w in wholes if OWN.mark in w]  # an output that opens with kb's block
    wholes += [kb_block_first(index, ooms["m7"], ooms["m2"], keep=3)]  # one a tell would read
    filler = "step 1 | mem 9.00 GiB | loss 0.5\n"
    pad = filler * (PASTE.max_output_chars // len(filler) + 1)  # longer than what tells read
    wholes += ["x" * 7 + pad[: -len(filler)] + ooms["m1"]]  # cut inside a line
    wholes += [ooms["m2"] + "\n" + pad + ooms["m1"]]  # a rising series only before the cut
    requests, runs = [], []
    for whole in wholes:
        lines = whole.split("\n")
        for keep in (3, 12):
            tail, first = "\n".join(lines[-keep:]), max(len(lines) - keep, 0) + 1
            requests.append({"op": "search", "text": tail, "top": 10, "first_line": first, "output": whole})
            runs.append((tail, first, whole))

    def python() -> list[Json]:
        out = []
        for tail, first, whole in runs:
            response = search(tail, catalogue=index, first_line=first, output=whole)
            out.append({**response.to_json(), "symptom": response.symptom})
        return out

    answers, expected = node.ask(requests, python)
    _compare("search", [(f"tail {i}", t) for i, (t, _f, _w) in enumerate(runs)], answers, expected)
    assert any(want["status"] != "unknown" for want in expected)


def test_rules_agree_at_their_exact_edges(node: NodeEngines) -> None:
    """Thresholds that whole pastes seldom land on exactly: confidence bands and lead, strengths of exactly
    60 and 40, rounding ties, the combined score's caps, a series' rise."""
    rules = rule_cases()
    requests = [{"op": "rule", "name": name, "args": node_args(name, args)} for _label, name, args in rules]
    answers, expected = node.ask(requests, lambda: [python_rule(name, args) for _label, name, args in rules])
    cases = [(label, json.dumps(args)[:300]) for label, _name, args in rules]
    _compare("rule", cases, answers, expected)
    fired = [want for (_label, name, _args), want in zip(rules, expected, strict=True) if name == "fires"]
    assert any(fired) and not all(fired), "the rise edges must hold on one side and fail on the other"


def test_triage_agrees_on_captured_runs_and_their_variants(node: NodeEngines, index: Index) -> None:
    """Every captured multi-rank run (gloo and NCCL), seeded changes to them, and every single-process case."""
    assert TRIAGE_FIXTURES, "no triage fixtures under tests/triage/fixtures"
    logs = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in TRIAGE_FIXTURES]
    ties = _tie_variants(logs)
    assert len(ties) >= 7, "no captured run has a rank that raises: the tie rule goes untested"
    cases = logs + _triage_variants(logs, SEED) + ties + _spelt_otherwise(logs) + _benchmark_cases() + triage_edges()
    answers, expected = node.ask(
        [{"op": "triage", "text": text} for _label, text in cases],
        lambda: [_python_triage(text, index) for _label, text in cases],
    )
    answers = [{**a, "result": _node_triage(a.get("result"))} for a in answers]
    named = sum(e is not None for e in expected)
    assert named >= len(logs), f"only {named} inputs were read as multi-rank"
    _compare("triage", cases, answers, expected)


def test_a_difference_is_named_by_its_path() -> None:
    """The comparison itself: a new field, a changed score, a bool for an int, a missing item all count."""
    want = {"abstained": False, "results": [{"id": "A1", "score": 80.0, "layer": None, "evidence": [1]}]}
    same = {"abstained": False, "results": [{"id": "A1", "score": 80, "evidence": [1]}]}
    out: list[str] = []
    _diff(want, same, (), "search", out)
    assert out == []
    for have, where in (
        ({"abstained": 0, "results": same["results"]}, "abstained"),
        ({"abstained": False, "results": [{"id": "A1", "score": 80.1, "evidence": [1]}]}, "results.0.score"),
        ({"abstained": False, "results": [{"id": "A1", "score": 80, "evidence": []}]}, "results.0.evidence"),
        ({"abstained": False, "status": "x", "results": same["results"]}, "status"),
    ):
        out = []
        _diff(want, have, (), "search", out)
        assert out and out[0].startswith(where + ":"), (have, out)
    out = []
    _diff({**want, "tells": []}, same, (), "search", out)
    assert out == ["tells: only in kb ([])"]
