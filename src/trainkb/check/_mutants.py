"""Counterfactual mutants: a check's code with the behaviour its claim names edited out.

A check that still meets its expectation once the torch call is replaced, the configuration
flipped or the fix dropped does not depend on its claim. `kb check --mutants` runs each declared
mutant through the same warm pool and sandbox as the checks and requires its expectation to fail.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .._terminal import printable
from ..catalogue import CheckStatus, apply_mutation
from ._runner import CheckResult, RunOptions, run_tasks
from ._tasks import CheckTask
from ._verdict import killed_from_outside

__all__ = [
    "MutantRun",
    "MutantStatus",
    "mutant_report",
    "mutant_run",
    "mutant_summary",
    "mutant_tasks",
    "run_mutants",
]


class MutantStatus(enum.StrEnum):
    """What a mutant's run came to; a mutant that skipped or errored keeps its CheckStatus."""

    KILLED = "killed"  # the check failed on the mutated code: it depends on its claim
    SURVIVED = "survived"  # the check still passed: it does not test what it claims


def mutant_tasks(tasks: list[CheckTask]) -> list[CheckTask]:
    """One task per declared mutation: the mutated code under the check's own requirements and timeout.

    The deadline is the check's own, not a multiple of how long the check just took: a mutant that
    only runs slower (a longer sleep, more steps) is judged when it ends, as `kb check` would judge
    that code, instead of being counted as killed because a shorter deadline passed. A mutant that
    deadlocks is killed at the check's timeout, as the check itself would fail.
    """
    out = []
    for task in tasks:
        mutation = task.check.mutation
        if mutation is None:
            continue
        code = apply_mutation(task.check.code, mutation)
        out.append(replace(task, check=task.check.model_copy(update={"code": code})))
    return out


def _as_mutant(result: CheckResult) -> CheckResult:
    """A check verdict on mutated code, restated: a failed expectation kills the mutant."""
    if result.status == CheckStatus.PASSED:
        return replace(
            result,
            status=MutantStatus.SURVIVED,
            message=f"the check does not depend on its claim: the mutant still passed ({result.message})",
        )
    # A rank that crashed or left without its outcome is the mutant's doing; kb's own faults ("kb could
    # not run rank 0 ...", "kb stopped rank 0 ...") are no evidence either way and stay errors, and so
    # does a death by a signal someone sent (the OOM killer, a memory or CPU limit).
    if result.status == CheckStatus.ERROR and (name := killed_from_outside(result.message)):
        return replace(
            result,
            message=f"{result.message} — a process killed by {name} is no evidence that the check depends "
            "on its claim: not counted as killed",
        )
    broke_in_a_rank = result.status == CheckStatus.ERROR and result.message.startswith("rank ")
    if result.status == CheckStatus.FAILED or broke_in_a_rank:
        return replace(result, status=MutantStatus.KILLED, output="", evidence=[])
    return result  # skipped, or the checker could not run it


@dataclass
class MutantRun:
    """Mutant verdicts, how many checks were selected, and each mutation's ``why``."""

    results: list[CheckResult]
    checks: int
    whys: dict[tuple[str, str], str]

    @property
    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    @property
    def ok(self) -> bool:
        return not any(r.status in {MutantStatus.SURVIVED, CheckStatus.ERROR} for r in self.results)


def run_mutants(
    tasks: list[CheckTask],
    options: RunOptions,
    pool: Any,
    env: dict[str, Any],
    on_result: Callable[[CheckResult], None] | None = None,
) -> MutantRun:
    """Run the mutants of ``tasks`` in ``pool`` (the warm pool the checks used)."""

    def report(result: CheckResult) -> None:
        if on_result is not None:
            on_result(_as_mutant(result))

    raw = run_tasks(mutant_tasks(tasks), options, pool, env, report)
    return mutant_run(tasks, [_as_mutant(r) for r in raw])


def mutant_run(tasks: list[CheckTask], results: list[CheckResult]) -> MutantRun:
    """The run of ``tasks``' mutants from their verdicts (those of an interrupted run included)."""
    whys = {(t.entry_id, t.check.name): t.check.mutation.why for t in tasks if t.check.mutation is not None}
    return MutantRun(results, len(tasks), whys)


def mutant_report(run: MutantRun) -> dict[str, Any]:
    """The `mutants` block of the JSON report."""
    counts = run.counts
    declared = len(run.results)
    return {
        "declared": declared,
        "killed": counts[MutantStatus.KILLED],
        "survived": counts[MutantStatus.SURVIVED],
        "skipped": counts[CheckStatus.SKIPPED],
        "error": counts[CheckStatus.ERROR],
        "coverage": {
            "checks": run.checks,
            "with_mutation": declared,
            "percent": round(100 * declared / run.checks, 1) if run.checks else 0.0,
        },
        "results": [
            {
                "entry": r.entry,
                "check": r.check,
                "status": r.status,
                "seconds": r.seconds,
                "why": run.whys.get((r.entry, r.check), ""),
                "message": r.message,
            }
            for r in run.results
        ],
    }


def mutant_summary(run: MutantRun) -> str:
    counts = run.counts
    declared = len(run.results)
    percent = 100 * declared / run.checks if run.checks else 0.0
    tally = ", ".join(f"{counts[s]} {s}" for s in (*MutantStatus, CheckStatus.ERROR, CheckStatus.SKIPPED) if counts[s])
    parts = [f"mutants: {declared} declared ({percent:.1f}% of {run.checks} checks)" + (f" — {tally}" if tally else "")]
    for r in run.results:
        if r.status in {MutantStatus.SURVIVED, CheckStatus.ERROR}:
            where = f"{r.entry}:{r.check}  ({r.path}:{r.line})"
            parts.append(f"  {r.status.upper()} {printable(where, newlines=False)}")
            parts.append(f"    mutation: {printable(run.whys.get((r.entry, r.check), ''), newlines=False)}")
            parts.append(f"    {printable(r.message, newlines=False)}")
    return "\n".join(parts)
