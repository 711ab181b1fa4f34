"""How `kb run` speaks of the way its command ended: the signal that killed it, a Ctrl-C that was asked
for, and a diagnosis a kb inside the command already printed."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

KB_RUN = [sys.executable, "-m", "trainkb", "run"]
D8 = "Expected to have finished reduction in the prior iteration before starting a new one"


def _headings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("── kb")]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("SEGV", "Signal 11 (SIGSEGV) is a native crash"),
        ("BUS", "Signal 7 (SIGBUS) is a native crash"),
        ("ABRT", "Signal 6 (SIGABRT) is a native crash"),
        ("KILL", "Signal 9 (SIGKILL) cannot be caught, so the run printed nothing about it: most often the host's OOM"),
        ("TERM", "Signal 15 (SIGTERM) was sent to the command"),
    ],
)
def test_the_advice_speaks_of_the_signal_that_ended_the_command(name, says):
    """Every signal death read "An exit by signal 9 is often the host's OOM killer", a SIGSEGV included."""
    proc = subprocess.run([*KB_RUN, "--", "sh", "-c", f"kill -{name} $$"], capture_output=True, text=True, timeout=120)
    signum = signal.Signals[f"SIG{name}"]
    assert proc.returncode == 128 + signum
    assert f"── kb run: sh was killed by signal {int(signum)} (SIG{name})" in proc.stderr
    assert says in proc.stderr
    if name != "KILL":
        assert "signal 9" not in proc.stderr and "OOM killer" not in proc.stderr


def test_ctrl_c_ends_the_command_without_a_diagnosis():
    """A SIGINT to kb reaches the command, which dies of it: a stop the user asked for, not a failure (before,
    `── kb run: python was killed by signal 2 …` followed, with the entry the output's last error matched)."""
    script = (
        f"import sys, time\nprint('RuntimeError: {D8}', file=sys.stderr)\nprint('ready', flush=True)\ntime.sleep(100)\n"
    )
    kb = subprocess.Popen(
        [*KB_RUN, "--", sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert kb.stdout.readline() == "ready\n"
        kb.send_signal(signal.SIGINT)
        assert kb.wait(timeout=120) == 128 + signal.SIGINT  # the command's status, mirrored
        err = kb.stderr.read()
    finally:
        if kb.poll() is None:
            kb.kill()
    assert _headings(err) == [], err
    assert (
        f"kb run: {sys.executable} was killed by signal 2 (SIGINT) after kb was interrupted (SIGINT); no diagnosis\n"
        in err
    )
    assert "D8" not in err


def test_a_kb_run_inside_kb_run_diagnoses_once():
    """The inner kb run diagnoses the failure; the outer one, whose command's output ends with that block,
    points to it in one line instead of printing the same block again."""
    inner = [*KB_RUN, "--", sys.executable, "-c", f"raise RuntimeError({D8!r})"]
    proc = subprocess.run([*KB_RUN, "--", *inner], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1
    heads = _headings(proc.stderr)
    assert heads == [
        f"── kb run: {sys.executable} exited with status 1: this failure matches ──",
        f"── kb run: {sys.executable} exited with status 1: see the diagnosis above, by the kb it ran ──",
    ], proc.stderr
    assert proc.stderr.count("  D8  ") == 1


def test_an_output_ending_in_an_idle_block_is_still_diagnosed():
    """An inner kb's idle block at the end says nothing of how the command ended: the outer kb diagnoses it."""
    script = (
        "print('── kb run: no output for 5 s — if this is a hang: no catalogue entry matches ──')\nraise SystemExit(3)"
    )
    proc = subprocess.run([*KB_RUN, "--", sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3
    assert _headings(proc.stderr) == [
        f"── kb run: {sys.executable} exited with status 3: no catalogue entry matches this output confidently ──"
    ]
