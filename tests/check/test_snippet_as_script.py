"""A snippet runs as the same code run with ``python script.py``: processes it starts with the spawn or
forkserver method re-import ``__main__`` from a real file, so a function it defines can be their target.
"""

from __future__ import annotations

import pytest
from helpers import run_sample_checks


def _run(make_catalogue, pool, *checks):
    return run_sample_checks(make_catalogue, pool, *checks)


WORKER = (
    "import multiprocessing as mp\n"
    "def square(queue, n):\n"
    "    queue.put(n * n)\n"
    "if __name__ == '__main__':\n"
    "    ctx = mp.get_context({method!r})\n"
    "    queue = ctx.Queue()\n"
    "    worker = ctx.Process(target=square, args=(queue, 7))\n"
    "    worker.start()\n"
    "    assert queue.get(timeout=30) == 49\n"
    "    worker.join()\n"
    "    assert worker.exitcode == 0, worker.exitcode\n"
)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_a_worker_started_by_spawn_or_forkserver_runs_a_function_the_snippet_defines(make_catalogue, pool, method):
    [result] = _run(make_catalogue, pool, {"code": WORKER.format(method=method), "expect": "ok"})
    assert result.status == "passed", (result.message, result.output)


def test_main_looks_like_a_script_while_tracebacks_keep_the_checks_name(make_catalogue, pool):
    code = (
        "import os, sys\n"
        "main = sys.modules['__main__']\n"
        "assert os.path.isabs(main.__file__) and main.__file__.endswith('.py'), main.__file__\n"
        "assert sys.argv == [main.__file__], sys.argv\n"
        "assert main.__spec__ is None\n"
        "assert open(main.__file__).read().startswith('import os, sys')\n"
        "raise ValueError('from the script')\n"
    )
    [result] = _run(
        make_catalogue, pool, {"code": code, "expect": {"raises": {"type": "ValueError", "match": "script"}}}
    )
    assert result.status == "passed", (result.message, result.output)
    assert 'File "<D1:c0>", line 7' in result.evidence[0]


def test_a_warning_routed_through_logging_is_still_seen(make_catalogue, pool):
    """``logging.captureWarnings(True)`` replaces ``warnings.showwarning``; a script still shows the warning."""
    code = (
        "import logging, warnings\n"
        "logging.captureWarnings(True)\n"
        "warnings.warn('routed through logging', UserWarning)\n"
    )
    [result] = _run(
        make_catalogue, pool, {"code": code, "expect": {"warns": {"category": "UserWarning", "match": "routed"}}}
    )
    assert result.status == "passed", (result.message, result.output)
    assert "routed through logging" in result.evidence[0]


def test_rebinding_kbs_reporting_code_in_the_snippet_forges_no_verdict(make_catalogue, pool):
    code = (
        "import trainkb.check._child as child\n"
        "child._class_name = lambda cls: 'builtins.ValueError'\n"
        "child._mro_names = lambda cls: ['builtins.ValueError']\n"
        "raise KeyError('forged')\n"
    )
    [result] = _run(
        make_catalogue, pool, {"code": code, "expect": {"raises": {"type": "ValueError", "match": "forged"}}}
    )
    assert result.status == "failed", result.message
    assert "KeyError" in result.message
