"""One `kb check` run, from the selected tasks to what it reports: warm pool, signals, checks, mutants, drift.

The command parses and validates its arguments, then hands the tasks here; what comes back holds the
results and renders the JSON report, the JUnit file and the closing summary.
"""

from __future__ import annotations

import contextlib
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalogue import Catalogue, CheckReport, CheckStatus
from ._drift import apply_drift_check
from ._mutants import MutantRun, mutant_report, mutant_run, mutant_summary, run_mutants
from ._process import WarmPool
from ._progress import Progress
from ._report import environment_block, github_annotations, junit_xml, make_report, stopped_text, summary_text
from ._runner import CheckResult, RunOptions, not_run, run_tasks
from ._tasks import CheckTask

__all__ = ["CheckSession", "SessionOptions", "Stopped", "run_session"]


@dataclass(frozen=True)
class SessionOptions:
    """How a run goes beyond each check's own limits (``RunOptions``)."""

    run: RunOptions
    mutants: bool = False  # also run each declared mutation
    mutants_only: bool = False  # run only the mutations
    drift: bool = True  # fail a check whose own error output search does not lead back to its entry
    quiet: bool = False  # no per-check progress


class Stopped(Exception):
    """Ctrl-C, SIGTERM or SIGHUP ended the run; every check, the forkserver and the folders are gone.

    ``partial`` holds the verdicts reached before (the rest reported as not run), so that a report
    can still be written; it is None when the run stopped before the environment was known.
    """

    def __init__(self, signum: int, partial: CheckSession | None = None) -> None:
        super().__init__(signum)
        self.signum = signum
        self.partial = partial


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread so it unwinds exactly like Ctrl-C."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum: int, _frame: object) -> None:
    raise _Terminated(signum)


@contextlib.contextmanager
def _terminate_like_interrupt() -> Iterator[None]:
    """While checks run, SIGTERM and SIGHUP clean up (checks, forkserver, folders) like Ctrl-C.

    A signal kb was started ignoring stays ignored (`nohup kb check` outlives its terminal), as
    Python itself leaves SIGINT ignored in a background job.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {
        signum: signal.signal(signum, _raise_terminated)
        for signum in (signal.SIGTERM, signal.SIGHUP)
        if signal.getsignal(signum) is not signal.SIG_IGN
    }
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@dataclass
class CheckSession:
    """What one run found: check results (drift applied), the environment block, mutant verdicts."""

    results: list[CheckResult]
    env: dict[str, Any]
    mutants: MutantRun | None
    wall: float  # seconds from the first check to the drift check's end
    mutants_only: bool = False
    stopped: str | None = None  # the signal that ended the run before every check ran (SIGTERM ...)

    def report(self) -> CheckReport:
        """The JSON report: one environment, its results, the mutants block when they ran, and
        ``stopped``, so that a stopped run's passes and skips never read as a finished run's."""
        report = make_report(self.env, self.results)
        report["stopped"] = self.stopped
        if self.mutants is not None:
            report["mutants"] = mutant_report(self.mutants)
        return report

    def junit(self) -> str:
        return junit_xml(self.results, self.env["name"], self.stopped)

    def annotations(self) -> list[str]:
        """GitHub Actions workflow commands for failures and skips."""
        return github_annotations(self.results)

    def summary(self, github: bool = False) -> str:
        """The closing text; for GitHub, fenced so that quoted snippet output cannot act as a workflow command."""
        lines = [stopped_text(self.stopped)] if self.stopped else []
        if self.results or not self.mutants_only:
            lines.append(summary_text(self.results, self.env["name"], self.wall))
        if self.mutants is not None:
            lines.append(mutant_summary(self.mutants))
            if self.mutants_only:
                lines.append(f"({self.wall:.1f} s)")
        if github:
            pause = secrets.token_hex(16)
            lines = [f"::stop-commands::{pause}", *lines, f"::{pause}::"]
        return "\n".join(lines)

    def failed(self, strict: bool = False) -> bool:
        """The run was stopped, a check failed or errored (or skipped, when ``strict``), or a mutant
        survived or errored."""
        if self.stopped:
            return True
        bad = {CheckStatus.FAILED, CheckStatus.ERROR} | ({CheckStatus.SKIPPED} if strict else set())
        return any(r.status in bad for r in self.results) or (self.mutants is not None and not self.mutants.ok)


def run_session(cat: Catalogue, tasks: list[CheckTask], options: SessionOptions) -> CheckSession:
    """Run ``tasks`` of ``cat`` (then their mutants) in one warm pool, then the drift check over every layer.

    Stopped when a signal ends the run; TorchUnavailable when torch is installed but importing it fails.
    """
    started = time.monotonic()
    finished = _Finished()
    try:
        with _terminate_like_interrupt():
            results, env, mutants = _run_in_pool(tasks, options, cat.root, finished)
    except KeyboardInterrupt as exc:  # every check, the forkserver and the folders are gone by now
        signum = exc.signum if isinstance(exc, _Terminated) else signal.SIGINT
        partial = finished.session(tasks, options, signal.Signals(signum).name, time.monotonic() - started)
        if partial is not None and options.drift:
            partial.results = _drift_if_let(partial.results, cat)
        raise Stopped(signum, partial) from None
    if options.drift:
        results = apply_drift_check(results, cat, _roots(cat))
    return CheckSession(results, env, mutants, time.monotonic() - started, options.mutants_only)


@dataclass
class _Finished:
    """The environment and every verdict reached so far, kept as they come for a run that is stopped."""

    env: dict[str, Any] | None = None
    checks: dict[tuple[str, str], CheckResult] = field(default_factory=dict)
    mutants: dict[tuple[str, str], CheckResult] = field(default_factory=dict)

    def keeping(self, store: dict[tuple[str, str], CheckResult], progress: Progress) -> Callable[[CheckResult], None]:
        def on_result(result: CheckResult) -> None:
            store[(result.entry, result.check)] = result
            progress(result)

        return on_result

    def session(
        self, tasks: list[CheckTask], options: SessionOptions, signame: str, wall: float
    ) -> CheckSession | None:
        """What the run reached, each task it did not reach reported as not run; None before the environment."""
        if self.env is None:
            return None
        why = f"not run: kb check was stopped by {signame} first (no verdict)"
        results = [] if options.mutants_only else [self.checks.get(_key(t)) or not_run(t, why) for t in tasks]
        mutants = None
        if options.mutants or options.mutants_only:
            declared = [t for t in tasks if t.check.mutation is not None]
            mutants = mutant_run(tasks, [self.mutants.get(_key(t)) or not_run(t, why) for t in declared])
        return CheckSession(results, self.env, mutants, wall, options.mutants_only, signame)


def _roots(cat: Catalogue) -> Path | list[Path]:
    """Where the drift check's search finds the catalogue: every layer, or the one folder."""
    return [root for _name, root in cat.layers] or cat.root


def _drift_if_let(results: list[CheckResult], cat: Catalogue) -> list[CheckResult]:
    """The drift check on a stopped run's results (it judges only checks that ran and passed); a
    second signal meanwhile leaves them as they were."""
    try:
        with _terminate_like_interrupt():
            return apply_drift_check(results, cat, _roots(cat))
    except KeyboardInterrupt:
        return results


def _key(task: CheckTask) -> tuple[str, str]:
    return task.entry_id, task.check.name


def _run_in_pool(
    tasks: list[CheckTask], options: SessionOptions, root: Path, finished: _Finished
) -> tuple[list[CheckResult], dict[str, Any], MutantRun | None]:
    """Start the warm pool, probe the environment, run the tasks (then their mutants, in the same
    pool); every check is stopped on any exit. ``finished`` keeps each verdict as it comes."""
    pool = WarmPool()
    packages = sorted({p for t in tasks for p in t.check.requires.packages})
    try:
        env = finished.env = environment_block(pool.probe(packages), root)
        results = []
        if not options.mutants_only:
            progress = Progress(len(tasks), quiet=options.quiet)
            results = run_tasks(tasks, options.run, pool, env, finished.keeping(finished.checks, progress))
        mutants = None
        if options.mutants or options.mutants_only:
            progress = Progress(sum(t.check.mutation is not None for t in tasks), quiet=options.quiet)
            mutants = run_mutants(tasks, options.run, pool, env, finished.keeping(finished.mutants, progress))
        return results, env, mutants
    finally:
        pool.shutdown()
