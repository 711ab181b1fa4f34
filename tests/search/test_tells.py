"""Tells and the three answers: one cause, a differential with what decides, or nothing recognised.

The outputs are real: torch 2.11 on an H200, captured by the M4 and M7 GPU checks
(reports/cuda-NVIDIA-H200-x2-torch2.11.0.json).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import record

from trainkb.catalogue import load_catalogue
from trainkb.lint import lint_catalogue
from trainkb.search import search
from trainkb.search._tells import TellText, fired, size_value

FRAGMENTED = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 62.68 GiB. GPU 0 has a total capacity of "
    "139.80 GiB of which 13.93 GiB is free. Including non-PyTorch memory, this process has 125.87 GiB memory in "
    "use. Of the allocated memory 69.64 GiB is allocated by PyTorch, and 55.72 GiB is reserved by PyTorch but "
    "unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation."
)
ADAM = """\
Traceback (most recent call last):
  File "<M7:first-step-oom-on-gpu>", line 8, in <module>
    opt.step()                                               # two more copies do not fit
  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/optim/adam.py", line 182, in _init_group
    state["exp_avg_sq"] = torch.zeros_like(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 41.79 GiB. GPU 0 has a total capacity of \
139.80 GiB of which 13.84 GiB is free. Including non-PyTorch memory, this process has 125.96 GiB memory in use. \
Of the allocated memory 125.36 GiB is allocated by PyTorch, and 3.79 MiB is reserved by PyTorch but unallocated.
"""
OOM_LINE = "CUDA out of memory. Tried to allocate"
RESERVED = (
    r"(?P<allocated>[\d.]+ (?:[KMG]iB|bytes)) is allocated by PyTorch, and "
    r"(?P<reserved>[\d.]+ (?:[KMG]iB|bytes)) is reserved by PyTorch but unallocated"
)


def _member(entry_id: str, tells: str) -> str:
    signature = textwrap.dedent(f"""\
        signatures:
          - literal: {OOM_LINE}
            type: OutOfMemoryError
            names_cause: false
            example: "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 41.79 GiB"
        """)
    return record(entry_id, extra=signature + tells)


FRAGMENT_TELL = f"""\
tells:
  - says: most of the card is reserved by PyTorch but unallocated, so the cache is fragmented
    when:
      - compare: {{match: '{RESERVED}', left: reserved, op: '>', right: allocated, times: 0.5}}
    source: check:fragmented-pool-ooms
    example: "{FRAGMENTED}"
"""
ADAM_TELL = """\
tells:
  - says: the traceback runs through Adam's first step, so optimizer state filled the card
    when:
      - line: 'state\\["exp_avg(?:_sq)?"\\] = torch\\.zeros_like\\('
    source: check:first-step-oom-on-gpu
    example: '    state["exp_avg_sq"] = torch.zeros_like('
"""


@pytest.fixture
def family(make_catalogue: Callable[..., Path]) -> Path:
    return make_catalogue(
        {
            "alpha/D1-fragmented.yaml": _member("D1", FRAGMENT_TELL),
            "alpha/D2-adam.yaml": _member("D2", ADAM_TELL),
        }
    )


def test_sizes_read_as_bytes() -> None:
    assert size_value("55.72 GiB") == pytest.approx(55.72 * 2**30)
    assert size_value("3.79 MiB") == pytest.approx(3.79 * 2**20)
    assert size_value("0 bytes") == 0
    assert size_value("12") == 12
    assert size_value("2 GB") == 2e9
    assert size_value("lots") is None
    assert size_value("3 parsecs") is None


def test_compare_reads_the_figures_of_the_line() -> None:
    tell = {
        "when": [{"compare": {"match": RESERVED, "left": "reserved", "op": ">", "right": "allocated", "times": 0.5}}]
    }
    assert fired(tell, TellText([FRAGMENTED]))
    assert not fired(tell, TellText(ADAM.splitlines()))  # 3.79 MiB against 125.36 GiB
    assert not fired(tell, TellText(["no figures here"]))
    missing_group = {"when": [{"compare": {"match": RESERVED, "left": "nope", "op": ">", "right": 1.0}}]}
    assert not fired(missing_group, TellText([FRAGMENTED]))


def test_line_and_no_line() -> None:
    lines = TellText(ADAM.splitlines())
    assert fired({"when": [{"line": r"optim[/\\]adam\.py"}]}, lines)
    assert not fired({"when": [{"no_line": r"optim[/\\]adam\.py"}]}, lines)
    assert fired({"when": [{"no_line": r"evaluate"}, {"line": "zeros_like"}]}, lines)
    assert not fired({"when": [{"line": "(unclosed"}]}, lines)  # RE2 cannot run it: never holds
    assert not fired({"when": [{"no_line": "(unclosed"}]}, lines)


@pytest.mark.parametrize(
    ("values", "rises"),
    [
        ([10.0, 11.0, 12.5, 14.0], True),
        ([10.0, 10.5], False),  # too few points
        ([10.0, 10.2, 10.4, 10.5], False),  # under 10% overall
        ([10.0, 14.0, 9.0, 15.0, 8.0, 16.0, 12.0], False),  # as many falls as rises
        ([14.0, 12.0, 11.0, 10.0], False),
    ],
)
def test_rises(values: list[float], rises: bool) -> None:
    lines = [f"step {i} | mem {v:.2f} GiB | loss 2.3" for i, v in enumerate(values)]
    assert fired({"when": [{"rises": r"mem (?P<value>[\d.]+ GiB)"}]}, TellText(lines)) is rises


def test_a_symptom_alone_is_a_differential_with_what_decides(family: Path) -> None:
    response = search("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB", catalogue=family)
    assert response.status == "differential"
    assert response.abstained
    assert response.candidates == 2
    assert {r.id for r in response.results[:2]} == {"D1", "D2"}
    assert all(r.tell is not None and not r.tell.fired for r in response.results[:2])
    assert response.advice is not None and "sign that decides" in response.advice
    data = response.to_json()
    assert data["status"] == "differential" and data["candidates"] == 2 and data["why"] is None
    assert data["results"][0]["tell"]["fired"] is False


@pytest.mark.parametrize(("paste", "expected"), [(FRAGMENTED, "D1"), (ADAM, "D2")])
def test_the_tell_that_fires_answers(family: Path, paste: str, expected: str) -> None:
    response = search(paste, catalogue=family)
    assert response.status == "answered"
    assert not response.abstained
    first = response.results[0]
    assert first.id == expected
    assert first.confidence == "medium"
    assert first.tell is not None and first.tell.fired
    assert response.why == first.tell.says
    assert response.to_json()["why"] == first.tell.says


def test_tells_read_the_whole_output(family: Path) -> None:
    """`kb run` and the hook hold everything the run printed: the frame above the tail still decides."""
    tail = ADAM.splitlines()[-1]
    assert search(tail, catalogue=family).status == "differential"
    response = search(tail, catalogue=family, output=ADAM)
    assert response.status == "answered" and response.results[0].id == "D2"
    assert "paste" not in (search(tail, catalogue=family, output=tail).advice or "")


def test_an_unknown_failure_is_unknown(family: Path) -> None:
    response = search("KeyError: 'input_ids'", catalogue=family)
    assert response.status == "unknown"
    assert response.to_json()["status"] == "unknown"


def _lint_rules(root: Path) -> list[tuple[str, str]]:
    return [(f.rule, f.path) for f in lint_catalogue(load_catalogue(root))]


def test_lint_wants_a_tell_for_every_family_member(make_catalogue: Callable[..., Path]) -> None:
    root = make_catalogue(
        {"alpha/D1-fragmented.yaml": _member("D1", FRAGMENT_TELL), "alpha/D2-adam.yaml": _member("D2", "")}
    )
    assert [rule for rule, path in _lint_rules(root) if "D2" in path] == ["family-tell"]


def test_lint_refuses_a_tell_that_fires_on_a_sibling(make_catalogue: Callable[..., Path]) -> None:
    loose = textwrap.dedent("""\
        tells:
          - says: the message names a request of some size, which proves nothing
            when:
              - line: 'Tried to allocate'
            source: check:fragmented-pool-ooms
            example: "CUDA out of memory. Tried to allocate 62.68 GiB"
        """)
    root = make_catalogue(
        {"alpha/D1-fragmented.yaml": _member("D1", loose), "alpha/D2-adam.yaml": _member("D2", ADAM_TELL)}
    )
    assert ("tell-sibling", "D1") in [(rule, Path(path).name[:2]) for rule, path in _lint_rules(root)]


def test_lint_checks_a_tell_against_its_example_and_groups(make_catalogue: Callable[..., Path]) -> None:
    wrong = textwrap.dedent("""\
        tells:
          - says: a figure the regex never captures decides nothing at all
            when:
              - compare: {match: 'is (?P<x>[\\d.]+ GiB) free', left: x, op: '>', right: y}
            source: check:fragmented-pool-ooms
            example: "nothing like it"
        """)
    root = make_catalogue(
        {"alpha/D1-fragmented.yaml": _member("D1", wrong), "alpha/D2-adam.yaml": _member("D2", ADAM_TELL)}
    )
    rules = {rule for rule, path in _lint_rules(root) if "D1" in path}
    assert {"tell-groups", "tell-example"} <= rules


def test_a_cut_cause_naming_message_asks_for_the_whole_line() -> None:
    """The README's old example, D8's message cut short: no shared symptom, so the advice must not say that
    several causes print it; it asks for the complete line (real catalogue)."""
    response = search("RuntimeError: Expected to have finished reduction in the prior iteration")
    assert response.results[0].id == "D8"
    assert response.advice is not None
    assert "part of a longer message" in response.advice and "Several root causes" not in response.advice


# https://github.com/milesial/Pytorch-UNet/issues/258: the device-side assert is O14's symptom line, but the
# kernel's own assertion (a line V5 claims) carries V5's tell
SEGMENTATION_ASSERT = (
    "when I have 3 classes, the net pred maximum label =  tensor(3.0743, device='cuda:0', grad_fn=<MaxBackward1>)\n\n"
    "RuntimeError: CUDA error: device-side assert triggered\n\n"
    "/pytorch/aten/src/THCUNN/SpatialClassNLLCriterion.cu:106: cunn_SpatialClassNLLCriterion_updateOutput_kernel: "
    "block: [0,0,0], thread: [725,0,0] Assertion `t >= 0 && t < n_classes` failed"
)
# https://github.com/visinf/da-sac/issues/12: an illegal access in a validation loop; M3's eval-loop tell holds,
# but M3 matched only a frame many causes share, so it is not an answer
VALIDATION_ILLEGAL_ACCESS = """\
Traceback (most recent call last):
  File "/disk1/hl/da-sac/train.py", line 378, in validation
    masks_all = eval_batch(batch)
  File "/disk1/hl/da-sac/train.py", line 151, in step
    losses_ret[key] = val.mean().item()
RuntimeError: CUDA error: an illegal memory access was encountered
CUDA kernel errors might be asynchronously reported at some other API call,so the stacktrace below might be incorrect.
For debugging consider passing CUDA_LAUNCH_BLOCKING=1.
"""


def test_a_tell_of_an_entry_recognised_on_another_line_answers() -> None:
    """No member of the symptom's family has a tell that holds, but V5's own line and tell do (real catalogue)."""
    response = search(SEGMENTATION_ASSERT)
    assert response.status == "answered"
    first = response.results[0]
    assert first.id == "V5" and first.tell is not None and first.tell.fired
    assert response.why == first.tell.says


def test_a_tell_alone_does_not_answer_for_an_entry_matched_on_a_shared_frame() -> None:
    response = search(VALIDATION_ILLEGAL_ACCESS)
    assert response.status != "answered"
    assert "M3" not in [r.id for r in response.results[: response.candidates]]
