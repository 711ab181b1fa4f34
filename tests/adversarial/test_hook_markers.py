"""The hook's once-per-job marker: each run of a job advises once, and old markers do not pile up.

The ranks here are started by this test process, as a shell script or a shell loop would start
them: the same launcher for every run, so only the claim's time tells one run from the next.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest
from helpers import record

SIG = """\
signatures:
  - {literal: "is invalid for input of size", type: RuntimeError,
     example: "RuntimeError: shape '[4]' is invalid for input of size 6", names_cause: true}
"""

# Each rank waits for GO before raising, so both are running before either claims the advice.
RANK = """\
import os, sys, time, trainkb
trainkb.install()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
raise RuntimeError("shape '[4]' is invalid for input of size 6")
"""


@pytest.fixture
def job(make_catalogue, tmp_path):
    cat = make_catalogue({"alpha/D1-sample.yaml": record(extra=SIG)})
    markers = tmp_path / "tmp"
    markers.mkdir()
    return {
        **os.environ,
        "TRAINKB_CATALOGUE": str(cat),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(markers),
        "WORLD_SIZE": "2",
        "MASTER_PORT": "29500",  # a fixed port and no run id: consecutive runs look alike
    }


def _run_ranks(env: dict[str, str], go: str, ranks: int) -> list[str]:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RANK, go], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        for _ in range(ranks)
    ]
    time.sleep(0.5)  # every rank has started
    open(go, "w").close()
    errors = [proc.communicate(timeout=120)[1] for proc in procs]
    os.unlink(go)
    return errors


def test_the_same_job_rerun_from_the_same_launcher_advises_each_time(job, tmp_path):
    counts = [_run_ranks(job, str(tmp_path / "go"), 1)[0].count("── kb") for _ in range(3)]
    assert counts == [1, 1, 1]


def test_ranks_running_together_advise_once_per_run(job, tmp_path):
    for _ in range(2):
        errors = _run_ranks(job, str(tmp_path / "go"), 2)
        assert all("is invalid for input of size 6" in err for err in errors)  # both raised
        assert sum(err.count("── kb") for err in errors) == 1, errors
        assert all("Traceback" in err for err in errors)  # the silent rank's own traceback is untouched


def test_old_markers_are_removed_and_new_ones_kept(job, tmp_path):
    folder = tmp_path / "tmp"
    old = folder / "trainkb-hook-0123456789abcdef0123"
    old.write_text("12.000")
    hour_ago = time.time() - 2 * 3600
    os.utime(old, (hour_ago, hour_ago))
    other = folder / f"unrelated-{uuid.uuid4().hex}"
    other.write_text("")
    os.utime(other, (hour_ago, hour_ago))
    _run_ranks(job, str(tmp_path / "go"), 1)
    left = sorted(p.name for p in folder.iterdir())
    assert old.name not in left
    assert other.name in left
    assert sum(name.startswith("trainkb-hook-") for name in left) == 1  # this run's own claim
