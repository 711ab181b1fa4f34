"""`kb run -- CMD ARGS…`: run a training command; if it fails or goes quiet, say which entry explains it."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import sys
from collections.abc import Iterator

from .._ownoutput import closing_heading
from .._tail import RUN_TAIL_BYTES
from .._terminal import say as _say  # terminal-safe; a closed or full stderr never costs the exit status
from ._common import catalogue_roots, seconds
from ._exit import UsageError

IDLE_HEADING = "kb run: no output for"  # the heading of the block printed when a command goes quiet


def _at_least(minimum: int) -> argparse._ActionType:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected at least {minimum}, got {text!r}")
        return value

    return parse


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--idle-timeout",
        type=seconds,
        metavar="S",
        help="diagnose a possible hang after S seconds without output (the command keeps running)",
    )
    parser.add_argument("--top", type=_at_least(1), default=3, help="matches to print (default 3)")
    parser.add_argument(
        "--tail-bytes",
        type=_at_least(1024),
        default=RUN_TAIL_BYTES,
        help="how much of the most recent output to keep for diagnosis (default 256 KiB)",
    )
    parser.add_argument("cmd", nargs=argparse.REMAINDER, metavar="-- CMD ARGS", help="the command to run, after `--`")


def run(args: argparse.Namespace) -> int:
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise UsageError("give the command after `--`, e.g. kb run -- python train.py")
    if "/" not in cmd[0] and shutil.which(cmd[0]) is None:  # a path is left to exec: 126 or 127, as a shell says
        _say(f"kb run: {_named(cmd[0])}: command not found\n")
        return 127
    roots = catalogue_roots(args)  # a folder that is not there is refused before the command runs
    from .._advice import advice_block
    from .._present import BANNERS
    from .._runguard import how_it_ended
    from .._runwatch import watch
    from ..triage import triage_block

    def diagnose(tail: str, heading: str, ending: str | None = None, dropped: int = 0, lines: int = 0) -> None:
        _say(triage_block(tail, roots, cmd))  # which rank broke first, before the matches
        if dropped:  # the failure may lie in what was let go (--tail-bytes keeps more)
            _say(
                f"kb run: kept the last {len(tail.encode())} bytes of the output (--tail-bytes), "
                f"not the {dropped} before them\n"
            )
        try:
            advice = advice_block(
                tail,
                top=args.top,
                catalogue=roots,
                heading=heading,
                explain_abstention=True,
                output=tail,  # tells read all kb holds, and the advice never asks for more
                ending=ending,
                first_line=lines + 1,  # evidence numbered as in the command's whole output
            )
        except Exception as exc:  # a broken catalogue must not change the command's outcome
            _say(f"kb run: could not search the catalogue ({type(exc).__name__}: {exc})\n")
            return
        _say(advice or f"── {heading}: {BANNERS['empty']} ──\n")

    def on_idle(tail: str, silent_for: float, dropped: int, lines: int) -> None:
        diagnose(tail, f"{IDLE_HEADING} {silent_for:.0f} s — if this is a hang", dropped=dropped, lines=lines)

    try:
        outcome = watch(cmd, tail_bytes=args.tail_bytes, idle_timeout=args.idle_timeout, on_idle=on_idle)
    except OSError as exc:  # the command could not be started: what a shell reports, and its status
        _say(f"kb run: {_named(cmd[0])}: {exc.strerror or exc}\n")
        return 127 if isinstance(exc, FileNotFoundError) else 126
    if outcome.guard_death is not None:  # the command's own status is unknown: kb ended it, as SIGKILL would
        _say(
            f"kb run: kb's guard process {outcome.guard_death} before {_named(cmd[0])} ended; "
            f"kb killed {_named(cmd[0])} and everything it started\n"
        )
        return 128 + signal.SIGKILL
    if outcome.write_error is not None:  # the output is incomplete: never a success, whatever the command said
        _say(f"kb run: could not write the output of {cmd[0]}: {outcome.write_error}\n")
        return outcome.exit_status or 1
    if outcome.returncode != 0 and not outcome.output_closed:  # a closed pipe ended it, as `yes | head` should
        what = how_it_ended(outcome.returncode)
        if outcome.mid_line:  # the command's last line is unfinished: the block starts on a line of its own
            _say("\n")
        if outcome.interrupted:  # Ctrl-C: the stop was asked for, not a failure to explain
            _say(f"kb run: {_named(cmd[0])} {what} after kb was interrupted (SIGINT); no diagnosis\n")
            return outcome.exit_status
        inner = closing_heading(outcome.tail)
        if inner is not None and not inner.startswith(f"── {IDLE_HEADING}"):  # a kb inside it diagnosed it
            _say(f"── kb run: {_named(cmd[0])} {what}: see the diagnosis above, by the kb it ran ──\n")
            return outcome.exit_status
        with contextlib.suppress(_Stopped), _stoppable(outcome.exit_status, args.whole_process):
            diagnose(
                outcome.tail,
                f"kb run: {cmd[0]} {what}",
                _ending(outcome.returncode),
                outcome.dropped,
                outcome.dropped_lines,
            )
    return outcome.exit_status


# Signals that compiled code raises on itself when it fails: faulthandler prints the Python stack for exactly
# these (https://docs.python.org/3/library/faulthandler.html).
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})


def _ending(returncode: int) -> str | None:
    """What the signal that ended the command says about the failure, for the advice; None for an exit."""
    if returncode >= 0:
        return None
    signum = -returncode
    name = signal.Signals(signum).name if signum in signal.valid_signals() else f"signal {signum}"
    if signum == signal.SIGKILL:  # the kernel's OOM killer logs "Killed process N (name)" (mm/oom_kill.c)
        return (
            "Signal 9 (SIGKILL) cannot be caught, so the run printed nothing about it: most often the host's "
            "OOM killer (the kernel log names the process it killed), else a scheduler's or a launcher's kill."
        )
    if signum in _CRASHES:
        return (
            f"Signal {signum} ({name}) is a native crash: compiled code (an extension, a CUDA library, the "
            "interpreter) failed, not a Python exception; rerun with PYTHONFAULTHANDLER=1 to print the Python "
            "stack at the crash."
        )
    return (
        f"Signal {signum} ({name}) was sent to the command: by a scheduler, a launcher, a user, or the command itself."
    )


def _named(command: str) -> str:
    """The command as an error line names it; an empty name is spelled '' so the line still says which."""
    return command or "''"


class _Stopped(BaseException):
    """Ctrl-C, SIGTERM or SIGHUP while kb diagnoses a command that has already exited."""


@contextlib.contextmanager
def _stoppable(status: int, whole_process: bool) -> Iterator[None]:
    """Let a signal cut the advice short without taking the command's exit status with it: the
    command has ended, so the status kb owes its caller is the command's, not 130 or 143.

    In the `kb` process itself that holds until it has exited: after the advice a signal ends kb
    with that status while kb flushes what it wrote, and is then held back, because the interpreter's
    own exit puts the default handlers back and a SIGTERM there ended kb as -15."""

    def stop(_signum: int, _frame: object) -> None:
        raise _Stopped

    def finish(_signum: int, _frame: object) -> None:
        raise SystemExit(status)

    stoppers = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {signum: signal.getsignal(signum) for signum in stoppers}
    caught = [signum for signum in stoppers if previous[signum] != signal.SIG_IGN]  # ignored (nohup, `&`) stays
    for signum in caught:
        signal.signal(signum, stop)
    try:
        yield
    finally:
        if whole_process:
            for signum in caught:
                signal.signal(signum, finish)
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(OSError, ValueError, AttributeError):
                    stream.flush()
            signal.pthread_sigmask(signal.SIG_BLOCK, caught)  # nothing is left to write: only the exit
        else:  # a library call: the program around it gets its handlers back
            for signum, handler in previous.items():
                if handler is not None:  # None: set outside Python, left as it is
                    signal.signal(signum, handler)
