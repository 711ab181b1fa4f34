"""engine.js's rule functions on their own, at their exact edges, for the Node parity test (test_node_parity.py).

Whole pastes reach most rules only through scores and strengths that seldom land exactly on a threshold: a
strength of exactly 60.0, a lead of exactly 3.0, a series whose last value is exactly 1.10 times its first. A
one-character change there (``>=`` to ``>``) gives the same answers on every real paste and still breaks the
rule. Here each rule is called directly with values on, just below and just above every edge it reads, in
kb's Python and in engine.js under Node, and the two verdicts must match: evidence and messages as plain
objects on the Node side, as the dataclasses _score.py uses on the Python side. Whole inputs built from
captured output stand where a search rule's edge needs one: a quoted match of ``why_chars``, an output
opening with kb's block, a multi-rank run that leaves triage's note as all the advice.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import product
from typing import Any

from trainkb._advice import advice_block
from trainkb._ownoutput import OWN
from trainkb._runguard import how_it_ended
from trainkb.catalogue import find_catalogue
from trainkb.search import Index, search
from trainkb.search._input import FAILURE_WEIGHT, Message, parse
from trainkb.search._policy import ANSWER, SCORE
from trainkb.search._ranks import teardown
from trainkb.search._score import (
    Evidence,
    _combined,
    _hits_on_failure,
    _on_the_failure,
    _Paste,
    _symptom_messages,
)
from trainkb.search._search import _confidence
from trainkb.search._tells import TELLS, TellText, fired
from trainkb.search.contract import _condition

Json = Any
Rule = tuple[str, str, list[Json]]  # (label, rule name in node_engines.js, its arguments as JSON)


def _around(*edges: float) -> list[float]:
    """Each edge, a tenth below and a tenth above (scores are rounded to tenths)."""
    return sorted({round(e + d, 1) for e in edges for d in (-0.1, 0.0, 0.1)})


def _owners() -> list[Json]:
    """Four lines: one in no message, a warning, a weak message and the failure the paste ends in."""
    return [
        None,
        {"type": "UserWarning", "line": 1, "weight": FAILURE_WEIGHT},
        {"type": "ValueError", "line": 2, "weight": FAILURE_WEIGHT / 2},
        {"type": "RuntimeError", "line": 3, "weight": FAILURE_WEIGHT},
    ]


def _evidence(strengths: list[float]) -> list[Json]:
    """One piece of evidence per strength and line, some via an alias."""
    out = []
    for n, (strength, at) in enumerate(product(strengths, range(4))):
        out.append(
            {
                "id": n,
                "strength": strength,
                "at": at,
                "via": "alias" if n % 5 == 4 else "signature",
                "signature": f"s{n % 3}",
                "ambiguous": n % 2 == 1,
                "namesCause": n % 3 == 0,
            }
        )
    return out


def _paste(cut: bool) -> Json:
    return {"owners": _owners(), "cut": cut, "noFailure": False}


def rule_cases() -> list[Rule]:
    """Every rule below at every edge it reads."""
    out: list[Rule] = []
    scores = _around(ANSWER.medium, ANSWER.high)
    for score, cause in product(scores, _around(SCORE.some_evidence, SCORE.known_failure)):
        for lead in _around(ANSWER.signature_lead):
            out.append(
                (f"confidence {score} lead {lead} cause {cause}", "confidence", [score, round(score - lead, 1), cause])
            )
    ties = [k / 4 for k in range(-12, 400)]  # every exact tie of round(x, 1) up to 100
    out += [(f"round1 {x}", "round1", [x]) for x in [*ties, 0.05, 0.15, 0.35, 2.675, 1e-9, 99.95, 100.05]]
    for signature, prose in product(_around(SCORE.some_evidence, 100.0), _around(SCORE.unknown_error_cap, 100.0)):
        for capped in (False, True):
            out.append((f"combined {signature} {prose} {capped}", "combined", [signature, prose, capped]))
    strengths = _around(SCORE.some_evidence, SCORE.known_failure)
    evidence = _evidence(strengths)
    out.append(
        (
            "hits on the failure",
            "hitsOnFailure",
            [_owners(), [evidence[: len(evidence) // 2]], [evidence[len(evidence) // 2 :]]],
        )
    )
    for cut in (False, True):
        out.append((f"on the failure, cut {cut}", "onTheFailure", [evidence, _paste(cut)]))
        out.append((f"symptom messages, cut {cut}", "symptomMessages", [evidence, _paste(cut)]))
    for strength in _around(SCORE.some_evidence):  # one strength alone: no stronger witness on the same line
        out.append((f"symptom messages at {strength}", "symptomMessages", [_evidence([strength]), _paste(False)]))
    out += _rises()
    return out


def _rises() -> list[Rule]:
    """Series of figures at the edges of a rise: as many points as it needs and one fewer, a last value exactly
    RISE_RATIO times the first and a little less, rises exactly RISE_MAJORITY times the falls and one fewer,
    a series cut at MAX_SERIES values."""
    tell = {"says": "", "when": [{"rises": r"mem (?P<value>\d+(?:\.\d+)?) GiB"}]}

    def lines(values: list[float]) -> list[str]:
        return [f"step {i} mem {v} GiB" for i, v in enumerate(values)]

    first, ratio, need, majority = 10.0, TELLS.rise_ratio, TELLS.rise_min_points, TELLS.rise_majority
    last = round(first * ratio, 6)
    series = {
        "min points": [first, first + 0.5, first * 2][:need] + [first * 2] * (need - 3),
        "one point short": [first, first * 2, first * 3][: need - 1],
        "last exactly ratio": [first, first + 0.2, first + 0.4, last],
        "last a little under ratio": [first, first + 0.2, first + 0.4, last - 0.01],
    }
    for falls in (1, 2):  # rises exactly majority x falls, and one rise fewer
        for rises in (majority * falls, majority * falls - 1):
            values, v = [first], first
            for _ in range(falls):
                v -= 0.5
                values.append(v)
            for _ in range(rises):
                v += 2.0
                values.append(v)
            series[f"{rises} rises {falls} falls"] = values
    series["cut at max series"] = [first] * (TELLS.max_series - 1) + [first * 3, first * 4]
    series["one inside max series"] = [first] * (TELLS.max_series - 2) + [first * 3, first * 4]
    series["flat at zero"] = [0.0] * need  # no rise at all, though the last value is RISE_RATIO times the first
    series["two values a line"] = [first, first * 2]  # below, each line carries two figures
    out: list[Rule] = []
    for label, values in series.items():
        text = lines(values) if label != "two values a line" else [f"mem {first} GiB mem {v} GiB" for v in values]
        out.append((f"rises: {label}", "fires", [tell, text]))
    return out


def _message(owner: Json) -> Message | None:
    if owner is None:
        return None
    return Message(type=owner["type"], text="", line_index=owner["line"], weight=owner["weight"])


def _as_evidence(e: Json) -> Evidence:
    return Evidence(
        line=e["at"] + 1,
        text="",
        signature=e["signature"],
        span=None,
        strength=e["strength"],
        at=e["at"],
        via=e["via"],
        ambiguous=e["ambiguous"],
        names_cause=e["namesCause"],
    )


def _as_paste(p: Json) -> _Paste:
    return _Paste(
        owners=[_message(o) for o in p["owners"]],
        cut=p["cut"],
        no_failure=p["noFailure"],
        failure_known=False,
        ambiguously_known=False,
        noise=False,
        excluded=frozenset(),
    )


def _built(given: list[Json]) -> tuple[list[Evidence], dict[int, int]]:
    """The evidence as _score.py holds it, and each one's id in the request, by identity."""
    built = [_as_evidence(e) for e in given]
    return built, {id(b): e["id"] for b, e in zip(built, given, strict=True)}


def _hits(own: list[Json], exact: list[list[Json]], fuzzy: list[list[Json]]) -> list[int]:
    built, back = _built([e for evs in [*exact, *fuzzy] for e in evs])
    parts = iter(built)
    exact_hits = {n: [next(parts) for _ in evs] for n, evs in enumerate(exact)}
    fuzzy_hits = {n: [next(parts) for _ in evs] for n, evs in enumerate(fuzzy)}
    return [back[id(ev)] for ev in _hits_on_failure([_message(o) for o in own], exact_hits, fuzzy_hits)]


def _on_it(evidence: list[Json], paste: Json) -> list[int]:
    built, back = _built(evidence)
    return [back[id(b)] for b in _on_the_failure(built, _as_paste(paste))]


PYTHON: dict[str, Callable[..., Json]] = {
    "confidence": _confidence,
    "round1": lambda x: round(x, 1),
    "combined": _combined,
    "hitsOnFailure": _hits,
    "onTheFailure": _on_it,
    "symptomMessages": lambda witnesses, paste: list(
        _symptom_messages([_as_evidence(e) for e in witnesses], _as_paste(paste))
    ),
    "fires": lambda tell, lines: fired(tell, TellText(lines)),
}


def python_rule(name: str, args: list[Json]) -> Json:
    """What kb's Python answers for the rule ``name`` of engine.js on ``args``."""
    return PYTHON[name](*args)


def node_args(name: str, args: list[Json]) -> list[Json]:
    """The arguments as engine.js takes them: a tell's conditions as the contract ships them."""
    if name == "fires":
        tell, lines = args
        return [{"says": "", "when": [_condition(c) for c in tell["when"]]}, lines]
    return args


def why_edges(index: Index) -> list[tuple[str, str]]:
    """Cause-naming lines whose matched words are exactly ``why_chars`` long and one longer: a number inside
    the match of an answered signature example, grown digit by digit (``\\d+`` takes any length)."""
    out: list[tuple[str, str]] = []
    for sig in index.sigs:
        for example in sig.texts[:1]:
            found = _digits_in_why(index, example)
            if found is None:
                continue
            matched, digits = found
            for length in (ANSWER.why_chars, ANSWER.why_chars + 1):
                grow = length - len(matched)
                if grow < 0:
                    continue
                longer = matched[: digits.end()] + "7" * grow + matched[digits.end() :]
                grown = example.replace(matched, longer, 1)
                if search(grown, catalogue=index).status == "answered":
                    out.append((f"why of {length} characters", grown))
            if len(out) >= 6:
                return out
    return out


def _digits_in_why(index: Index, line: str) -> tuple[str, re.Match[str]] | None:
    response = search(line, catalogue=index)
    why = response.why or ""
    quoted = re.search(r"`(.+)`", why)
    if response.status != "answered" or quoted is None or quoted[1].endswith("…") or quoted[1] not in line:
        return None
    digits = re.search(r"\d+", quoted[1])
    return None if digits is None else (quoted[1], digits)


def kb_block_first(index: Index, failed: str, then: str, keep: int) -> str:
    """An output that opens with the block `kb run` printed for the run ``failed`` and goes on with the run
    ``then`` (a log appended to run after run, read from kb's block on). The block quotes the words only
    ``failed``'s cause prints, which that cause's tell reads: blank from the output's first character, or
    the tell fires on kb's own words when ``then``'s last ``keep`` lines are searched."""
    heading = f"kb run: python {how_it_ended(1)}"  # as kb run calls it for a run that exited 1
    said = advice_block(failed, catalogue=find_catalogue(), heading=heading, explain_abstention=True, output=failed)
    whole = said + then
    lines = whole.split("\n")
    tail, first = "\n".join(lines[-keep:]), len(lines) - keep + 1
    read = search(tail, catalogue=index, first_line=first, output=whole.replace(OWN.mark, "-- kb", 1))
    if search(tail, catalogue=index, first_line=first, output=whole).to_json() == read.to_json():
        raise AssertionError("no tell reads kb's block: an output opening with it goes untested")
    return whole


def summary_never_came(index: Index, logs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The captured multi-rank runs cut before torchrun's own traceback and summary (the job killed first). In
    one, a rank died of a signal with no traceback, and once its peers' lines are left out no line of the paste is
    a symptom: search abstains with advice, which is triage's note alone (nothing to paste a rank never printed)."""
    out = []
    for label, log in logs:
        lines = log.splitlines()
        end = next((i for i, line in enumerate(lines) if line.startswith(("Traceback", "===="))), len(lines))
        out.append((f"{label} before the summary", "\n".join(lines[:end]) + "\n"))
    if not any(_note_alone(index, text) for _label, text in out):
        raise AssertionError("no cut run leaves triage's note as all the advice: that rule goes untested")
    return out


def _note_alone(index: Index, text: str) -> bool:
    ranks = teardown(text, parse(text))
    response = search(text, catalogue=index)
    return ranks is not None and response.abstained and response.symptom is None and response.advice == ranks.note
