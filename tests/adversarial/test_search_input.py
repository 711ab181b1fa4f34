"""Hostile pastes: noise never answers medium or high, a huge last line keeps its tail, and no
mask regex is quadratic in a line's length."""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
import sys

import pytest
from helpers import cpu_growth

from trainkb._tail import PIPE_TAIL_BYTES, read_tail
from trainkb.search import search

DDP = (
    "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing loss."
)


def _kb_search(data: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "search", "--json", "-"],
        input=data,
        capture_output=True,
        timeout=120,
        env=os.environ.copy(),
    )


def _words(seed: int, count: int) -> str:
    rng = random.Random(seed)
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 4))) for _ in range(count))


def test_fifty_megabytes_of_random_bytes_answer_nothing():
    done = _kb_search(random.Random(0).randbytes(50 * 1024 * 1024))
    assert done.returncode == 1 and b"Traceback" not in done.stderr
    response = json.loads(done.stdout)
    assert response["abstained"] and all(r["confidence"] == "low" for r in response["results"])


@pytest.mark.parametrize("seed", range(6))
def test_random_short_words_answer_nothing(seed):
    response = search(_words(seed, 3000))
    assert response.abstained and all(r.confidence == "low" for r in response.results)


def test_a_known_error_inside_noise_is_still_found():
    response = search(_words(1, 3000) + "\n" + DDP + "\n")
    assert not response.abstained and response.results[0].confidence in ("medium", "high")


def test_one_line_over_four_megabytes_keeps_its_tail():
    """A huge last line ending in a newline used to empty the whole input ("give the text to search")."""
    line = b"x" * (PIPE_TAIL_BYTES + 100_000)
    with_newline, without = _kb_search(line + b"\n"), _kb_search(line)
    assert with_newline.returncode == without.returncode == 1
    answers = [json.loads(done.stdout) for done in (with_newline, without)]
    assert answers[0]["input"].pop("bytes") == answers[1]["input"].pop("bytes") + 1  # the newline
    assert answers[0] == answers[1]
    found = _kb_search(line + b"\n" + DDP.encode() + b"\n")
    assert found.returncode == 0
    assert json.loads(found.stdout)["results"][0]["evidence"][0]["line"] == 2


def test_read_tail_is_bounded_and_counts_lines():
    data = b"".join(f"line {i}\n".encode() for i in range(2_000_000))
    tail, dropped, size = read_tail(io.BytesIO(data), keep=1000)
    assert size == len(data)
    assert len(tail) <= 1000 and tail.startswith(b"line ") and tail.endswith(b"line 1999999\n")
    assert int(tail.split(b"\n", 1)[0].split()[1]) == dropped


def test_dotted_runs_are_masked_in_linear_work():
    assert search("\n".join(["a." * 1000] * 100)).status == "unknown"
    assert cpu_growth(lambda n: search("\n".join(["a." * n] * 100)), 100) < 20  # 8x longer lines: linear work


def test_lone_surrogate_does_not_break_signature_matching():
    response = search("\ud800 " + DDP)
    top = response.results[0]
    assert top.id == "D8" and top.evidence[0].span is not None
    assert top.evidence[0].text[slice(*top.evidence[0].span)].startswith("Expected to have finished")
