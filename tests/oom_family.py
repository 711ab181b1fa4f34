"""A small symptom family on real CUDA OOMs: records whose tells use every kind of condition.

The outputs are the GPU checks' captures committed in reports/ (torch 2.11 on an H200): read
from the report, never retyped. Five records print the same OOM line; four have a tell (a
comparison of two figures with a line that must be absent, a frame's source line, a `Process N
has` line, two comparisons one of them against a number) and one has none. D1's tell also fires
on D4's capture (12 MiB reserved against 8 MiB allocated), so that capture shows two tells firing
at once. The site tests build a site of them, and the parity tests run both engines on it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from helpers import record

REPORT = Path(__file__).resolve().parents[1] / "reports" / "cuda-NVIDIA-H200-x2-torch2.11.0.json"
OOM_LINE = "CUDA out of memory. Tried to allocate"
SIZE = r"[\d.]+ (?:[KMGT]iB|bytes)"


def captures() -> dict[str, str]:
    """The report's captured output of each OOM check, by check name."""
    rows = json.loads(REPORT.read_text(encoding="utf-8"))["results"]
    return {row["check"]: row["evidence"] for row in rows if "OutOfMemoryError" in row.get("evidence", "")}


def oom_line(text: str) -> str:
    """The line of a capture that carries the OOM message."""
    return next(line for line in text.splitlines() if OOM_LINE in line)


def _tells() -> dict[str, dict[str, Any]]:
    """Per record: title, fix summary and its tells (each example a line of a capture)."""
    got = captures()
    source = str(REPORT.relative_to(REPORT.parents[1]))
    fragmented, adam = oom_line(got["fragmented-pool-ooms"]), got["first-step-oom-on-gpu"]
    other, shape = oom_line(got["foreign-process-named-in-oom"]), oom_line(got["broadcast-loss-on-gpu"])
    return {
        "D1": {
            "title": "Fragmented cache: reserved but unallocated",
            "fix": "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`.",
            "tells": [
                {
                    "says": "reserved but unallocated is over half the allocated figure, and no other process is named",
                    "when": [
                        {
                            "compare": {
                                "match": f"(?P<allocated>{SIZE}) is allocated by PyTorch, and "
                                f"(?P<reserved>{SIZE}) is reserved by PyTorch but unallocated",
                                "left": "reserved",
                                "op": ">",
                                "right": "allocated",
                                "times": 0.5,
                            }
                        },
                        {"no_line": r"Process \d+ has"},
                    ],
                    "source": source,
                    "example": fragmented,
                }
            ],
        },
        "D2": {
            "title": "Optimizer state on the first step",
            "fix": "Use a smaller optimizer state or shard it.",
            "tells": [
                {
                    "says": "the traceback runs through Adam's state initialisation",
                    "when": [{"line": r'state\["exp_avg(?:_sq)?"\] = torch\.zeros_like\('}],
                    "source": source,
                    "example": next(line for line in adam.splitlines() if "zeros_like(" in line),
                }
            ],
        },
        "D3": {
            "title": "Another process holds the card",
            "fix": "Stop the other process or pick a free card.",
            "tells": [
                {
                    "says": "the message names another process and its memory",
                    "when": [{"line": rf"Process (?P<pid>\d+) has {SIZE} memory in use"}],
                    "source": source,
                    "example": other,
                }
            ],
        },
        "D4": {
            "title": "A shape bug asks for more than the card holds",
            "fix": "Fix the shapes that broadcast into a huge tensor.",
            "tells": [
                {
                    "says": "the request is larger than the whole card, and over a terabyte",
                    "when": [
                        {
                            "compare": {
                                "match": rf"Tried to allocate (?P<request>{SIZE})\. GPU \d+ has a total capacity of "
                                rf"(?P<total>{SIZE})",
                                "left": "request",
                                "op": ">=",
                                "right": "total",
                            }
                        },
                        {
                            "compare": {
                                "match": rf"Tried to allocate (?P<request>{SIZE})",
                                "left": "request",
                                "op": ">",
                                "right": 1e12,
                            }
                        },
                    ],
                    "source": source,
                    "example": shape,
                }
            ],
        },
        "D5": {"title": "Activations of a batch too large", "fix": "Halve the batch.", "tells": []},
    }


def family_tells() -> list[dict[str, Any]]:
    """Every tell of the family, as plain data."""
    return [tell for spec in _tells().values() for tell in spec["tells"]]


def family_records() -> dict[str, str]:
    """The records, as make_catalogue takes them."""
    out = {}
    for entry_id, spec in _tells().items():
        extra: dict[str, Any] = {
            "signatures": [
                {
                    "literal": OOM_LINE,
                    "type": "OutOfMemoryError",
                    "names_cause": False,
                    "example": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 41.79 GiB",
                }
            ]
        }
        if spec["tells"]:
            extra["tells"] = spec["tells"]
        text = record(entry_id, extra=yaml.safe_dump(extra, sort_keys=False, width=1000))
        text = text.replace("title: A sample failure for tests", f"title: {json.dumps(spec['title'])}")
        text = text.replace("fix_summary: Apply the one-line remedy.", f"fix_summary: {json.dumps(spec['fix'])}")
        out[f"alpha/{entry_id}-oom.yaml"] = text
    return out
