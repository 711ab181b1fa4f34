"""`kb run` never outlives or orphans its command, and keeps its exit status whatever happens to kb's output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

KB_RUN = [sys.executable, "-m", "trainkb", "run"]


def _pids_running(needle: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/cmdline").read_bytes()  # another program's arguments may be any bytes
                cmd = raw.replace(b"\0", b" ").decode(errors="replace")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            if cmd.startswith("sleep ") and needle in cmd and state != "Z":
                found.append(int(entry))
    return found


@pytest.mark.skipif(sys.platform != "linux", reason="parent-death signal is Linux-only")
def test_sigkill_of_kb_run_takes_its_command_along():
    seconds = str(31000 + os.getpid() % 1000)
    kb = subprocess.Popen([*KB_RUN, "--", "sleep", seconds], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not _pids_running(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running(seconds)
    kb.kill()
    kb.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _pids_running(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _pids_running(seconds) == []


@pytest.mark.parametrize("redirect", [">&-", "2>/dev/full", ">/dev/full 2>&1", "2>&-"])
def test_the_exit_status_survives_a_closed_or_full_output(redirect):
    kb = " ".join([*KB_RUN, "--", "sh", "-c", "'echo out; echo err >&2; exit 7'"])
    script = f"exec 3>&1; {kb} {redirect}; echo status=$? >&3"
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert "status=7" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.parametrize("shebang", ["#!/nonexistent/python\n", "#!/bin/sh\r\necho hi\r\n"])
def test_a_script_that_cannot_start_gives_the_shells_status(tmp_path, shebang):
    script = tmp_path / "train.sh"
    script.write_text(shebang)
    script.chmod(0o755)
    proc = subprocess.run([*KB_RUN, "--", str(script)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 127, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "option",
    [
        ["--idle-timeout", "inf"],
        ["--idle-timeout", "1e300"],
        ["--idle-timeout", "-1"],
        ["--idle-timeout", "nan"],
        ["--top", "0"],
        ["--tail-bytes", "0"],
    ],
)
def test_bad_run_options_are_usage_errors(option):
    proc = subprocess.run([*KB_RUN, *option, "--", "true"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("kind", ["not-executable", "folder"])
def test_a_path_that_cannot_be_executed_gives_126_as_a_shell_does(tmp_path, kind):
    """It used to be 'command not found' with the usage status, for a file that is there."""
    target = tmp_path / "train.sh"
    if kind == "folder":
        target.mkdir()
    else:
        target.write_text("#!/bin/sh\necho hi\n")
        target.chmod(0o644)
    proc = subprocess.run([*KB_RUN, "--", str(target)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 126, proc.stderr
    assert proc.stderr.strip() == f"kb run: {target}: Permission denied"


def _started(needle: str) -> list[int]:
    """The processes whose command line holds ``needle``, once one is running (a minute at most)."""
    deadline = time.monotonic() + 60
    while not (found := _pids_running(needle)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _left_after_kb(needle: str) -> list[int]:
    """What still runs ten seconds after kb died (killed here, so no test leaves it behind)."""
    deadline = time.monotonic() + 10
    while (left := _pids_running(needle)) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in left:
        os.kill(pid, 9)
    return left


LEFT_BEHIND = {
    "a shell's child": "sleep {s}; true",
    "a child in a session of its own (torchrun's workers)": (
        'python3 -c \'import subprocess, time; subprocess.Popen(["sleep", "{s}"], start_new_session=True); '
        "time.sleep(600)'"
    ),
    "a background job of a command still running": "sleep {s} & echo started; sleep 600",
}


@pytest.mark.skipif(sys.platform != "linux", reason="subreaper and parent-death signal are Linux-only")
@pytest.mark.parametrize("shape", LEFT_BEHIND.values(), ids=list(LEFT_BEHIND))
def test_sigkill_of_kb_run_takes_what_its_command_started_along(shape):
    seconds = str(32000 + os.getpid() % 1000)
    script = shape.format(s=seconds)
    kb = subprocess.Popen([*KB_RUN, "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert _started(seconds)
    finally:
        kb.kill()  # kb itself, not the guard it forked
        kb.wait(timeout=30)
        assert kb.stdout is not None
        kb.stdout.close()
    assert _left_after_kb(seconds) == []


def test_a_background_job_outlives_kb_run_when_the_command_ends(tmp_path):
    """What the command leaves running on purpose (`nohup … &`) stays, as it does without kb."""
    seconds = str(33000 + os.getpid() % 1000)
    script = f"nohup sleep {seconds} >/dev/null 2>&1 & echo started"
    proc = subprocess.run([*KB_RUN, "--", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    _started(seconds)  # nohup may not have exec'd sleep yet
    time.sleep(0.5)  # had kb killed it, it would be gone by now
    left = _pids_running(seconds)
    for pid in left:
        os.kill(pid, 9)
    assert proc.returncode == 0 and proc.stdout == "started\n"
    assert len(left) == 1


@pytest.mark.skipif(sys.platform != "linux", reason="subreaper and parent-death signal are Linux-only")
def test_sigkill_of_a_suspended_kb_run_takes_the_stopped_job_along():
    """Ctrl-Z stops the job with kb; killing kb then must not leave it stopped forever."""
    seconds = str(34000 + os.getpid() % 1000)
    # Its own process group, as a job-control shell gives each job: a group whose parent is in another group of
    # the session is not orphaned, so the kernel does not discard the stop (as it would if pytest's group were).
    kb = subprocess.Popen(
        [*KB_RUN, "--", "sh", "-c", f"sleep {seconds}; true"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        process_group=0,
    )
    try:
        [sleeper] = _started(seconds)
        kb.send_signal(signal.SIGTSTP)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{sleeper}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
            assert time.monotonic() < deadline, "the job was never stopped"
            time.sleep(0.05)
    finally:  # a failed step must not leave kb and its job running
        kb.kill()
        kb.wait(timeout=30)
    assert _left_after_kb(seconds) == []


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize(
    "command", ["head -c 1000000 /dev/zero", "yes", f"{sys.executable} -c \"print('x' * 100000)\""]
)
def test_a_full_disk_under_stdout_is_never_a_success(command):
    """`cat blob > /dev/full` fails; through kb run it must fail too (and `yes` must stop), never exit 0."""
    kb = " ".join([*KB_RUN, "--", command])
    proc = subprocess.run(["bash", "-c", f"{kb} >/dev/full"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    last = proc.stderr.splitlines()[-1] if proc.stderr else ""  # above it: what the command itself said
    assert last.startswith("kb run: could not write") and last.endswith("No space left on device"), proc.stderr


def test_a_file_size_limit_under_stdout_is_never_a_success(tmp_path):
    out = tmp_path / "out"
    kb = " ".join([*KB_RUN, "--", "head", "-c", "1000000", "/dev/zero"])
    proc = subprocess.run(["bash", "-c", f"ulimit -f 100; {kb} >{out}"], capture_output=True, text=True, timeout=120)
    assert out.stat().st_size <= 100 * 1024
    assert proc.returncode != 0
    assert proc.stderr.startswith("kb run: could not write") and proc.stderr.count("\n") == 1, proc.stderr


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_the_diagnosis_keeps_the_commands_status(tmp_path, signum):
    """The command has exited with 3: a Ctrl-C while kb still searches cuts the advice, not the status."""
    marker = tmp_path / "exited"
    script = f"echo 'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB'; touch {marker}; exit 3"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}  # a cold index: seconds of diagnosis
    kb = subprocess.Popen(
        [*KB_RUN, "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.3)  # kb has seen the exit and is building the index
    kb.send_signal(signum)
    _out, err = kb.communicate(timeout=120)
    assert kb.returncode == 3, err
    assert "Traceback" not in err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_after_the_advice_keeps_the_commands_status(signum):
    """The advice is out and kb is exiting: a signal then (a scheduler's SIGTERM, a late Ctrl-C) still leaves
    the command's 3, not 143 or 130 (the interpreter's exit used to put the default handler back)."""
    script = "echo 'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB'; exit 3"
    kb = subprocess.Popen(
        [*KB_RUN, "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert kb.stderr is not None
    seen = []
    for line in kb.stderr:  # the advice's last line, then at once the signal, while kb exits
        seen.append(line)
        if line.lstrip().startswith("What would help:"):
            kb.send_signal(signum)
            break
    _out, err = kb.communicate(timeout=120)
    assert seen[-1].lstrip().startswith("What would help:"), "".join(seen)
    assert kb.returncode == 3, "".join(seen) + err


def test_a_job_writing_after_kb_returned_keeps_running_and_is_shown(tmp_path):
    """docs/cli.md: a job the command leaves writing into kb's pipe keeps running and is shown, as without kb."""
    done = tmp_path / "done"
    job = f"(sleep 1; echo still-alive; sleep 1; touch {done}) & echo started; exit 0"
    kb = " ".join([*KB_RUN, "--", "sh", "-c", f'"{job}"'])
    proc = subprocess.run(["bash", "-c", f"{kb} | cat"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout == "started\nstill-alive\n"  # cat ends with the job, as it does without kb
    assert done.exists()


def test_a_job_left_writing_sees_epipe_when_the_reader_goes_away(tmp_path):
    """The copy after kb returned passes a closed reader on to the job, as its own pipe would."""
    failed = tmp_path / "epipe"
    job = (
        f"(trap '' PIPE; sleep 1; while echo late 2>/dev/null; do sleep 0.1; done; touch {failed}) & "
        "echo started; exit 0"
    )
    kb = " ".join([*KB_RUN, "--", "sh", "-c", f'"{job}"'])
    proc = subprocess.run(["bash", "-c", f"{kb} | head -n 2"], capture_output=True, text=True, timeout=120)
    assert proc.stdout == "started\nlate\n"
    deadline = time.monotonic() + 30
    while not failed.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert failed.exists()


def test_a_script_without_a_shebang_runs_under_sh_as_a_shell_runs_it(tmp_path):
    """execvp's ENOEXEC rule: `sh -c ./s` and `env ./s` run a text file without `#!` with /bin/sh."""
    script = tmp_path / "noshebang"
    script.write_text('echo "hi $1"; exit 4\n')
    script.chmod(0o755)
    plain = subprocess.run(["sh", "-c", f"{script} there"], capture_output=True, text=True, timeout=60)
    proc = subprocess.run([*KB_RUN, "--", str(script), "there"], capture_output=True, text=True, timeout=120)
    assert (plain.returncode, plain.stdout) == (4, "hi there\n")
    assert (proc.returncode, proc.stdout) == (plain.returncode, plain.stdout), proc.stderr


def test_a_binary_for_another_machine_keeps_its_exec_format_error(tmp_path):
    """Not run as a script (bash refuses it too): its first line holds a NUL byte."""
    binary = tmp_path / "foreign"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(56) + b"\n")
    binary.chmod(0o755)
    proc = subprocess.run([*KB_RUN, "--", str(binary)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 126
    assert "Exec format error" in proc.stderr


def test_with_stdin_closed_the_command_sees_it_closed_as_without_kb():
    """kb's own pipes may take descriptor 0; the command must still find its stdin closed, not one of them."""
    probe = f"{sys.executable} -c 'import sys; print(sys.stdin is None)'; cat; echo \\$?"
    plain = subprocess.run(["bash", "-c", f'sh -c "{probe}" <&-'], capture_output=True, text=True, timeout=60)
    kb = " ".join([*KB_RUN, "--", "sh", "-c", f'"{probe}"'])
    proc = subprocess.run(["bash", "-c", f"{kb} <&-"], capture_output=True, text=True, timeout=120)
    assert plain.stdout == "True\n1\n"
    assert proc.stdout == plain.stdout and proc.returncode == plain.returncode, proc.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="the guard is Linux-only")
@pytest.mark.parametrize(
    "script",
    ["kill -STOP $PPID; echo stopped; exit 3", "kill -STOP $PPID; sleep 1.5; kill -STOP $PPID; echo stopped; exit 3"],
    ids=["at once", "twice"],
)
def test_a_command_that_stops_the_guard_does_not_hang_kb_run(script):
    """The command's parent is kb's guard; stopped, it would never report the exit: kb sends it SIGCONT."""
    kb = subprocess.Popen([*KB_RUN, "--", "sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out, _ = kb.communicate(timeout=120)
    finally:
        if kb.poll() is None:  # hung: kill kb, whose guard is then woken by its parent-death signal
            kb.kill()
            kb.wait(timeout=30)
    assert kb.returncode == 3
    assert out == b"stopped\n"


GUARD_KILLED = {
    "a shell's background job": "sleep {s} & kill -9 $PPID; wait",
    "a child in a session of its own": (
        'exec python3 -c \'import os, signal, subprocess; subprocess.Popen(["sleep", "{s}"], start_new_session=True); '
        "os.kill(os.getppid(), signal.SIGKILL); signal.pause()'"
    ),
    "a stopped guard killed": "sleep {s} & kill -STOP $PPID; kill -9 $PPID; wait",
}


@pytest.mark.skipif(sys.platform != "linux", reason="subreaper and parent-death signal are Linux-only")
@pytest.mark.parametrize("shape", GUARD_KILLED.values(), ids=list(GUARD_KILLED))
def test_a_killed_guard_takes_the_command_and_what_it_started_along(shape):
    """What the guard leaves comes to kb, a subreaper while the guard lives: kb kills it, says so, exits 137."""
    seconds = str(37000 + os.getpid() % 1000)
    kb = subprocess.Popen(
        [*KB_RUN, "--", "sh", "-c", shape.format(s=seconds)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        _, err = kb.communicate(timeout=120)
    finally:
        if kb.poll() is None:
            kb.kill()
            kb.wait(timeout=30)
        left = _left_after_kb(seconds)
    assert kb.returncode == 137
    assert err.decode().splitlines() == [
        "kb run: kb's guard process was killed by signal 9 (SIGKILL) before sh ended; "
        "kb killed sh and everything it started"
    ]
    assert left == []


def test_a_tail_that_lost_the_exception_says_so():
    """With --tail-bytes cutting the exception away, kb said the run printed none; it printed one, kb let it go."""
    script = (
        "import sys; print('RuntimeError: Expected to have finished reduction in the prior iteration', file=sys.stderr)"
        "; print('x' * 3000, file=sys.stderr); sys.exit(1)"
    )
    done = subprocess.run(
        [*KB_RUN, "--tail-bytes", "1024", "--", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert "kept the last" in done.stderr and "(--tail-bytes)" in done.stderr
    assert "paste" not in done.stderr.lower()  # kb holds the output: it never asks for more of it


def test_the_evidence_is_numbered_as_in_the_whole_output():
    """Past its kept tail, kb numbered the evidence from the tail's start: line 6393 for line 20001."""
    script = (
        "import sys\nfor i in range(20000): print(f'step {i} loss 0.5 ' + 'x' * 20, flush=True)\n"
        "sys.exit('RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one')"
    )
    done = subprocess.run([*KB_RUN, "--", sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "line 20001: RuntimeError: Expected to have finished reduction" in done.stderr, done.stderr[-2000:]
