"""`kb doctor` says what is wrong with launcher variables a script cannot use, instead of showing them as info."""

from __future__ import annotations

import pytest

from trainkb._doctor import Context, run_probes


def _d3(environ: dict[str, str]):  # type: ignore[no-untyped-def]
    (finding,) = [f for f in run_probes(ctx=Context(environ=environ, torch=None)) if f.probe == "local_rank"]
    return finding


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({"LOCAL_RANK": "abc", "RANK": "0"}, "LOCAL_RANK='abc' is not a whole number"),
        ({"RANK": "-1", "LOCAL_RANK": "0"}, "RANK=-1 is negative"),
        ({"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE=0; a job has at least one process"),
        ({"RANK": "4", "LOCAL_RANK": "0", "WORLD_SIZE": "4"}, "RANK=4 is not below WORLD_SIZE=4"),
    ],
)
def test_invalid_launcher_values_are_a_warning(environ, said):
    finding = _d3(environ)
    assert finding.status == "warn" and said in finding.observed


def test_the_reported_combination_names_every_fault():
    observed = _d3({"LOCAL_RANK": "abc", "RANK": "-1", "WORLD_SIZE": "0"}).observed
    assert "LOCAL_RANK='abc'" in observed and "RANK=-1" in observed and "WORLD_SIZE=0" in observed


def test_a_valid_job_stays_info():
    assert _d3({"RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "8"}).status == "info"
