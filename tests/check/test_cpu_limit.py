"""A check's CPU-time limit never ends it before kb would on wall time, so a spinning hang reaches its seconds."""

from __future__ import annotations

import os

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check import RunOptions, environment_block, run_tasks, select_tasks
from trainkb.check._runner import cpu_seconds

HANG = 20

# Every core it may use kept busy for the whole declared hang must stay under the soft CPU limit.
READS_ITS_LIMIT = f"""\
import os, resource, time
soft, _hard = resource.getrlimit(resource.RLIMIT_CPU)
assert soft >= {HANG} * len(os.sched_getaffinity(0)), soft
time.sleep(600)
"""


def _task(make_catalogue, check):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(check))})
    cat = load_catalogue(root)
    assert cat.problems == []
    return root, select_tasks(cat)


def test_the_limit_covers_every_core_until_the_timeout_or_the_hang(make_catalogue):
    cores = max(2, len(os.sched_getaffinity(0)))
    _root, [hang] = _task(make_catalogue, {"code": "pass", "expect": {"hangs": {"seconds": 60}}, "timeout": 5})
    assert cpu_seconds(hang.check, 5.0) >= 60 * cores
    _root, [plain] = _task(make_catalogue, {"code": "pass", "expect": "ok"})
    assert cpu_seconds(plain.check, 45.0) >= 45 * cores


# the limit's value is test_the_limit_covers_every_core_until_the_timeout_or_the_hang's (quick); that the check's
# process gets it shows only by waiting out a hang long enough to tell the limits apart (HANG seconds)
@pytest.mark.slow
def test_a_hang_check_runs_under_a_limit_that_lets_it_reach_its_seconds(make_catalogue, pool):
    check = {"code": READS_ITS_LIMIT, "expect": {"hangs": {"seconds": HANG}}, "timeout": 1}
    root, tasks = _task(make_catalogue, check)
    env = environment_block(pool.env | {"packages": {}}, root)
    [result] = run_tasks(tasks, RunOptions(timeout=1.0, jobs=1), pool, env)
    assert result.status == "passed", (result.message, result.output)
