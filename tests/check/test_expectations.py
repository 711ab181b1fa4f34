"""Every expectation kind, both passing and failing for the right reason."""

from __future__ import annotations

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import load_catalogue
from trainkb.check import RunOptions, environment_block, run_tasks, select_tasks


def run(make_catalogue, pool, *checks, timeout=120.0, jobs=2):
    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*checks))})
    cat = load_catalogue(root)
    assert cat.problems == []
    env = environment_block(pool.env | {"packages": {}}, root)
    return run_tasks(select_tasks(cat), RunOptions(timeout=timeout, jobs=jobs), pool, env)


CASES = [
    ("ok-passes", {"code": "import torch\nassert torch.ones(2).sum() == 2\n", "expect": "ok"}, "passed", "completed"),
    (
        "ok-fails-on-assert",
        {"code": "assert 1 + 1 == 3, 'arithmetic broke'\n", "expect": "ok"},
        "failed",
        "rank 0 raised AssertionError: arithmetic broke (expected a clean exit)",
    ),
    (
        "ok-fails-on-exit-status",
        {"code": "import sys\nsys.exit(3)\n", "expect": "ok"},
        "failed",
        "rank 0 exited with status 3",
    ),
    (
        "raises-passes",
        {
            "code": "import torch\ntorch.ones(2) @ torch.ones(3)\n",
            "expect": {"raises": {"type": "RuntimeError", "match": "size mismatch|inconsistent"}},
        },
        "passed",
        "rank 0 raised RuntimeError as expected",
    ),
    (
        "raises-subclass-passes",
        {"code": "raise FileNotFoundError('gone')\n", "expect": {"raises": {"type": "OSError", "match": "gone"}}},
        "passed",
        "as expected",
    ),
    (
        "raises-wrong-type",
        {"code": "raise KeyError('k')\n", "expect": {"raises": {"type": "ValueError", "match": "k"}}},
        "failed",
        "rank 0 raised KeyError: 'k'; expected ValueError matching /k/",
    ),
    (
        "raises-wrong-message",
        {"code": "raise ValueError('other')\n", "expect": {"raises": {"type": "ValueError", "match": "^wanted"}}},
        "failed",
        "rank 0 raised ValueError: other; expected ValueError matching /^wanted/",
    ),
    (
        "raises-but-did-not",
        {"code": "x = 1\n", "expect": {"raises": {"type": "ValueError", "match": "x"}}},
        "failed",
        "completed without raising; expected ValueError matching /x/",
    ),
    (
        "warns-passes",
        {
            "code": "import warnings\nwarnings.warn('old api', DeprecationWarning)\n",
            "expect": {"warns": {"category": "Warning", "match": "old api"}},
        },
        "passed",
        "warned DeprecationWarning as expected",
    ),
    (
        "warns-torch-cpp-warning",
        {
            "code": "import torch\ntorch.tensor([1.0]).resize_(2)\n"
            "import torch.nn.functional as F\nF.softmax(torch.ones(2, 2))\n",
            "expect": {"warns": {"category": "UserWarning", "match": "dim"}},
        },
        "passed",
        "as expected",
    ),
    (
        "warns-missing",
        {
            "code": "import warnings\nwarnings.warn('something else')\n",
            "expect": {"warns": {"category": "UserWarning", "match": "wanted"}},
        },
        "failed",
        "no UserWarning matching /wanted/ was emitted (saw 1: UserWarning: something else)",
    ),
    (
        "hangs-passes",
        {"code": "import time\ntime.sleep(60)\n", "expect": {"hangs": {"seconds": 1}}},
        "passed",
        "still running after 1 s",
    ),
    (
        "hangs-but-finished",
        {"code": "x = 1\n", "expect": {"hangs": {"seconds": 5}}},
        "failed",
        "expected a hang of 5 s",
    ),
    (
        "timeout",
        {"code": "import time\ntime.sleep(60)\n", "expect": "ok", "timeout": 1},
        "failed",
        "timed out after 1 s",
    ),
    ("segfault", {"code": "import ctypes\nctypes.string_at(0)\n", "expect": "ok"}, "error", "rank 0 died with SIGSEGV"),
    (
        "abort",
        {"code": "import os\nos.abort()\n", "expect": {"raises": {"type": "Exception", "match": "x"}}},
        "error",
        "rank 0 died with SIGABRT",
    ),
]


@pytest.mark.parametrize(("name", "check", "status", "message"), CASES, ids=[c[0] for c in CASES])
def test_expectation(make_catalogue, pool, name, check, status, message):
    [result] = run(make_catalogue, pool, check)
    assert result.status == status, result.message + "\n" + result.output
    assert message in result.message


def test_failure_keeps_output_and_traceback(make_catalogue, pool):
    [result] = run(
        make_catalogue, pool, {"code": "print('hello from the check')\nraise ValueError('boom')\n", "expect": "ok"}
    )
    assert "hello from the check" in result.output
    assert 'File "<D1:c0>", line 2' in result.output


def test_raises_records_the_real_traceback(make_catalogue, pool):
    [result] = run(
        make_catalogue,
        pool,
        {
            "code": "import torch\ntorch.zeros(2, 3).view(4)\n",
            "expect": {"raises": {"type": "RuntimeError", "match": "invalid"}},
        },
    )
    assert result.status == "passed"
    assert result.evidence[0].startswith("Traceback (most recent call last):")
    assert "RuntimeError: shape '[4]' is invalid for input of size 6" in result.evidence[0]


def test_each_check_gets_a_fresh_cwd_and_no_secrets(make_catalogue, pool, monkeypatch):
    code = (
        "import os\nassert os.listdir('.') == [], os.listdir('.')\nopen('x', 'w').write('1')\n"
        "assert 'MY_API_TOKEN' not in os.environ\nassert 'RANK' not in os.environ\n"
    )
    results = run(make_catalogue, pool, {"code": code, "expect": "ok"}, {"code": code, "expect": "ok"})
    assert [r.status for r in results] == ["passed", "passed"], [r.message for r in results]


def test_dataloader_workers_use_fork_not_forkserver(make_catalogue, pool):
    code = "import multiprocessing\nassert multiprocessing.get_start_method() == 'fork'\n"
    [result] = run(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == "passed", result.message


def test_output_flood_is_capped(make_catalogue, pool):
    code = (
        "import sys\nblock = 'x' * (1 << 20) + '\\n'\nfor _ in range(100):\n    sys.stdout.write(block)\nassert False\n"
    )
    [result] = run(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == "failed"
    assert "bytes of output dropped" in result.output
    assert len(result.output) < 100_000


def test_memory_limit_contains_a_runaway_allocation(make_catalogue, pool):
    root = make_catalogue(
        {
            "alpha/D1-sample.yaml": record(
                checks=checks_yaml(
                    {
                        "code": "import torch\nx = torch.empty(8 * 1024**3, dtype=torch.uint8)\nx.fill_(1)\n",
                        "expect": "ok",
                    }
                )
            )
        }
    )
    cat = load_catalogue(root)
    env = environment_block(pool.env | {"packages": {}}, root)
    [result] = run_tasks(select_tasks(cat), RunOptions(timeout=120, memory_bytes=4 * 1024**3), pool, env)
    assert result.status in {"failed", "error"}
    assert "memory" in result.message.lower() or "alloc" in result.message.lower()


def test_classes_defined_in_the_snippet_pickle_like_in_a_script(make_catalogue, pool):
    code = (
        "import pickle, torch\nclass Stats:\n    def __init__(self):\n        self.n = 3\n"
        "torch.save({'s': Stats()}, 'x.pt')\nassert torch.load('x.pt', weights_only=False)['s'].n == 3\n"
        "assert pickle.loads(pickle.dumps(Stats())).n == 3\n"
    )
    [result] = run(make_catalogue, pool, {"code": code, "expect": "ok"})
    assert result.status == "passed", result.message + result.output
