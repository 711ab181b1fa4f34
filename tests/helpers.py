"""Data and builders the tests share (fixtures live in the conftest files; data lives here)."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace

from trainkb.catalogue import MODELINE

AREAS = """\
areas:
  - id: alpha
    title: Alpha
    order: 1
    scope: Things that go wrong first.
    sections:
      - {id: one, title: One}
      - {id: two, title: Two}
  - id: beta
    title: Beta
    order: 2
    scope: Things that go wrong later.
    sections:
      - {id: three, title: Three}
"""


def record(
    entry_id: str = "D1",
    area: str = "alpha",
    section: str = "one",
    extra: str = "",
    checks: str | None = None,
    modeline: bool = True,
) -> str:
    """A valid record; ``extra`` is appended as more top-level YAML."""
    body = textwrap.dedent(f"""\
        id: {entry_id}
        title: A sample failure for tests
        area: {area}
        section: {section}
        tags: [sample]
        aliases: [sample alias]
        symptom: Something prints an error.
        root_cause: Something is wrong.
        fix: Do the right thing.
        fix_summary: Apply the one-line remedy.
        """)
    body += checks if checks is not None else "verification: {status: pending, reason: test record}\n"
    body += textwrap.dedent(extra)
    return (MODELINE + "\n" if modeline else "") + body


def build_ahead(root: Path, tmp_path: Path, monkeypatch) -> Path:
    """Build ``root``'s index (and its records' parts) ahead into a folder of its own, as `make setup` does
    for the shipped catalogue, with an empty user cache: the folder."""
    from trainkb.search import _index as index_module
    from trainkb.search._prebuild import prebuild

    folder = tmp_path / "prebuilt"
    monkeypatch.setattr(index_module, "PREBUILT", folder)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    prebuild(root, folder)
    return folder


def checks_yaml(*checks: dict) -> str:
    """A `checks:` block from dicts with at least code and expect (name/claim filled in)."""
    import copy

    import yaml

    full = []
    for i, check in enumerate(checks):
        item = {"name": f"c{i}", "claim": "It behaves as claimed.", "demonstrates": "failure"}
        item.update(copy.deepcopy(check))  # no shared objects: PyYAML would write anchors, which records refuse
        full.append(item)
    return yaml.safe_dump({"checks": full}, sort_keys=False)


# A real two-rank DDP failure as a terminal shows it (the TUI tests paste it).
# a Django traceback as its user posted it (https://github.com/DMOJ/online-judge/issues/1929): not a training failure
DJANGO = (Path(__file__).parent / "fixtures" / "foreign" / "django_operational_error.txt").read_text(encoding="utf-8")
TRACEBACK = """\
Epoch 0:  12%|█▏        | 12/100 [00:03<00:22,  3.9it/s]
[rank1]: Traceback (most recent call last):
[rank1]:   File "/home/me/train.py", line 88, in <module>
[rank1]:     loss = model(batch).sum()
[rank1]: RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one.
"""


# A team layer over the bundled catalogue (tests/test_layers.py, tests/test_precommit.py).
TEAM_AREAS = """\
areas:
  - id: cluster
    title: Our training stack
    order: 50
    scope: Failures of the team's own shard loader and launcher.
    sections:
      - {id: loaders, title: Shard loaders}
"""

# The check prints the signature's wording; the example is what torch 2.13 printed here.
TEAM_RECORD = """\
# yaml-language-server: $schema=../schema.json
id: Q1
title: The shard loader asks torch for a buffer of negative length
area: cluster
section: loaders
tags: [shard-loader]
fix_summary: Check the manifest's end offset against its start before allocating the buffer.
symptom: |
  Loading a shard dies at once with a RuntimeError about a negative dimension.
root_cause: |
  The manifest's end offset precedes its start, so the computed length is below zero.
fix: |
  Validate `end >= start` when the manifest is read and name the shard in the error.
signatures:
  - regex: Trying to create tensor with negative dimension -?[0-9]+
    type: RuntimeError
    example: "RuntimeError: Trying to create tensor with negative dimension -1: [-1]"
    note: printed by torch 2.13
    names_cause: true
checks:
  - name: negative-length-raises
    claim: torch refuses to allocate a tensor whose length is negative.
    demonstrates: failure
    code: |
      import torch
      start, end = 4, 3  # a manifest whose end precedes its start
      torch.empty(end - start)
    expect:
      raises: {type: RuntimeError, match: negative dimension}
"""


def run_sample_checks(make_catalogue, pool, *checks: dict, timeout: float = 60.0, jobs: int = 1) -> list:
    """Run checks of one sample record (D1) in the session's warm pool; their results in order."""
    from trainkb.catalogue import load_catalogue
    from trainkb.check import RunOptions, environment_block, run_tasks, select_tasks

    root = make_catalogue({"alpha/D1-sample.yaml": record(checks=checks_yaml(*checks))})
    cat = load_catalogue(root)
    assert cat.problems == []
    env = environment_block(pool.env | {"packages": {}}, root)
    return run_tasks(select_tasks(cat), RunOptions(timeout=timeout, jobs=jobs), pool, env)


@functools.cache  # one torch start per test process: what it prints does not change within a run
def team_paste() -> str:
    """The failure as torch prints it here (real output, not a copy of the record's example)."""
    run = subprocess.run([sys.executable, "-c", "import torch; torch.empty(3 - 4)"], capture_output=True, text=True)
    assert "negative dimension" in run.stderr
    return run.stderr


def cpu_growth(run: Callable[[int], object], size: int, factor: int = 8) -> float:
    """How many times the CPU time of ``run(size)`` that ``run(size * factor)`` takes: about ``factor``
    when the work grows linearly, ``factor ** 2`` when it grows quadratically.

    A test of how work grows, not of how long it takes: CPU time of this process, best of three,
    and a ratio of two runs made back to back, so other jobs on a loaded machine do not change it.
    """

    def cost(n: int) -> float:
        best = math.inf
        for _ in range(3):
            started = time.process_time()
            run(n)
            best = min(best, time.process_time() - started)
        return best

    run(size)  # warm: the index, caches and lazy imports are not what is measured
    return cost(size * factor) / max(cost(size), 1e-3)


def child_pids(pid: int) -> list[int]:
    """The children of process ``pid`` (every thread's), from /proc; none when it is gone."""
    found: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError):
                found.extend(int(p) for p in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return found


def kill_while_rendering(kb: subprocess.Popen[bytes]) -> None:
    """SIGKILL a `kb site build` once its page-rendering workers run (midway), and let them follow it;
    skips the test when the build finished first."""
    import pytest

    deadline = time.monotonic() + 120
    while not child_pids(kb.pid) and kb.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if kb.poll() is not None:
        pytest.skip("the build finished before it could be killed")
    kb.kill()
    kb.wait()
    time.sleep(1)  # its page-rendering workers follow it


def take_terminal(fd: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child starts a new session whose controlling terminal is the pty on ``fd``."""

    def take() -> None:
        import fcntl
        import termios

        os.setsid()
        fcntl.ioctl(fd, termios.TIOCSCTTY, 0)

    return take


def read_pty_until(master: int, out: bytearray, done: Callable[[bytearray], bool], timeout: float) -> bool:
    """Read a pseudo-terminal's output into ``out`` until ``done(out)``, its last holder closes it, or ``timeout``."""
    deadline = time.monotonic() + timeout
    while not done(out) and time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's last holder closed it
                return done(out)
            if not chunk:
                return done(out)
            out += chunk
    return done(out)


ENTER_ALT, LEAVE_ALT = b"\x1b[?1049h", b"\x1b[?1049l"


@contextlib.contextmanager
def tui_on_pty(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], int, bytearray]]:
    """`kb tui` on a 120x40 pseudo-terminal, its first screen drawn and settled: (process, master fd, output so
    far); killed if still running, and the terminal closed, on the way out."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", XDG_CACHE_HOME=str(tmp_path / "cache"))
    command = [sys.executable, "-m", "trainkb", "tui"]
    tui = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, preexec_fn=take_terminal(0), env=env)
    os.close(slave)
    out = bytearray()
    try:
        assert read_pty_until(master, out, lambda o: ENTER_ALT in o and b"paste" in o.lower(), 120), bytes(out[-2000:])
        read_pty_until(master, out, lambda o: False, 3)  # let the first screen settle
        yield tui, master, out
    finally:
        if tui.poll() is None:
            tui.kill()
            tui.wait()
        os.close(master)


def bare_record(entry_id: str, **fields: object) -> SimpleNamespace:
    """A record with only the fields the index reads, empty unless given: enough for build_data."""
    record = {"title": "", "area": "a", "aliases": [], "tags": [], "symptom": "", "root_cause": ""}
    record |= {"fix": "", "fix_summary": "", "signatures": []}
    return SimpleNamespace(id=entry_id, **(record | fields))
