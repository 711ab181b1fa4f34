"""`kb check` under a low open-file limit says the limit is the cause, its value, and the way out."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest


def _soft_limit_32() -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (32, hard))


# the way out kb names is test_the_way_out_is_one_that_exists (quick); kb reading its own low limit needs a
# real kb check process started under it
@pytest.mark.slow
def test_a_low_open_file_limit_is_named(tmp_path: Path) -> None:
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard == resource.RLIM_INFINITY or hard >= 1024, "the test needs a hard limit it can raise to"
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "trainkb", "check", "D8", "--no-drift", "-j", "4", "-o", str(tmp_path / "r.json")]
    done = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=600, preexec_fn=_soft_limit_32, cwd=tmp_path
    )
    assert "ERROR" in done.stdout, "32 descriptors no longer run out at -j 4: lower the limit this test sets"
    # the system's words first (what a search for the error finds), then the limit and the way out
    named = "the open-file limit (32, `ulimit -n`) is too low for -j 4; raise it (`ulimit -n 1024`)"
    assert f"Too many open files: {named}" in done.stdout


def test_the_way_out_is_one_that_exists(monkeypatch) -> None:
    """At -j 1 the message said to lower --jobs, which cannot go lower."""
    import errno

    from trainkb.check import _runner

    full = OSError(errno.EMFILE, "Too many open files")
    monkeypatch.setattr(_runner.resource, "getrlimit", lambda _which: (20, resource.RLIM_INFINITY))
    assert _runner._could_not_run(full, 1).endswith("is too low for -j 1; raise it (`ulimit -n 1024`)")
    assert _runner._could_not_run(full, 4).endswith("raise it (`ulimit -n 1024`) or lower --jobs")
    monkeypatch.setattr(_runner.resource, "getrlimit", lambda _which: (20, 20))
    assert _runner._could_not_run(full, 4).endswith("is too low for -j 4; lower --jobs")
    assert _runner._could_not_run(full, 1).endswith("its hard limit (20) allows no more: run where it is higher")
