"""Search never raises on hostile input (random text, bytes, huge logs, deep chains), and its work grows
linearly with what it reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import cpu_growth
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trainkb.search import Index, search
from trainkb.search._index import load_index
from trainkb.search._input import parse
from trainkb.search._policy import PASTE

FRAGMENTS = st.sampled_from(
    [
        "Traceback (most recent call last):\n",
        '  File "x.py", line 1, in <module>\n',
        "RuntimeError: ",
        "During handling of the above exception, another exception occurred:\n",
        "[rank0]: ",
        "\x1b[31m",
        "\r",
        "Root Cause (first observed failure):\n",
        "  rank      : 1 (local_rank: 1)\n",
        "Bus error",
        "\n",
        "Expected to have finished reduction",
        "torch.Size([1, 2])",
        "0xdeadbeef",
        "Killed\n",
        "UserWarning: ",
    ]
)


@pytest.fixture
def index(catalogue: Path) -> Index:
    return load_index(catalogue)


def _check(response: object) -> None:
    data = response.to_json()  # type: ignore[attr-defined]
    assert data["query_kind"] in {"traceback", "log", "prose"}
    for result in data["results"]:
        assert 0 <= result["score"] <= 100


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text())
def test_random_text_never_raises(index: Index, text: str) -> None:
    _check(search(text, catalogue=index))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=4096))
def test_random_bytes_never_raise(index: Index, data: bytes) -> None:
    _check(search(data, catalogue=index))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(FRAGMENTS, st.text(max_size=20)), max_size=60))
def test_traceback_shaped_noise_never_raises(index: Index, parts: list[str]) -> None:
    _check(search("".join(parts), catalogue=index))


def test_ten_megabyte_log_is_read_from_its_tail(index: Index) -> None:
    line = "2026-01-01 00:00:01 INFO step 123 loss 0.4567 lr 0.0003 tokens/s 12345 grad_norm 1.23\n"
    text = (
        line * (10_000_000 // len(line)) + "RuntimeError: Expected to have finished reduction in the prior "
        "iteration before starting a new one.\n"
    )
    lines = parse(text).lines
    # the tail, numbered as a whole
    assert len(lines) <= PASTE.max_lines + 1 and lines[-1].number == text.count("\n") + 1
    response = search(text, catalogue=index)
    assert response.results[0].id == "D1"
    assert response.results[0].evidence[0].line == text.count("\n")


def test_one_megabyte_single_line(index: Index) -> None:
    for text in ("a(" * 500_000, "RuntimeError: " + "x" * 1_000_000):
        assert max(len(line.text) for line in parse(text).lines) <= PASTE.max_line_chars  # what any regex sees of it
        _check(search(text, catalogue=index))


def test_deeply_nested_exception_chain_costs_linear_work(index: Index) -> None:
    block = (
        'Traceback (most recent call last):\n  File "a.py", line 1, in f\n    f()\nRuntimeError: level {i}\n\n'
        "The above exception was the direct cause of the following exception:\n\n"
    )

    def chain(n: int) -> str:
        return "".join(block.format(i=i) for i in range(n)) + "ValueError: top\n"

    _check(search(chain(2_000), catalogue=index))
    assert cpu_growth(lambda n: search(chain(n), catalogue=index), 150) < 20  # 8x the chain: linear, not quadratic


def test_thousands_of_exception_lines_cost_linear_work(index: Index) -> None:
    words = ["tensor", "grad", "loss", "cuda", "device", "rank", "memory", "batch", "sampler", "epoch", "shape"]

    def distinct(n: int) -> str:
        return "".join(f"RuntimeError: {' '.join(words[i % 7 :] + words[: i % 5])} {i}\n" for i in range(n))

    def repeated(n: int) -> str:
        return "RuntimeError: Expected to have finished reduction in the prior iteration.\n" * n

    for make in (distinct, repeated):
        _check(search(make(5_000), catalogue=index))
        assert cpu_growth(lambda n, make=make: search(make(n), catalogue=index), 250) < 20, make.__name__
