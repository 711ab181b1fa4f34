"""What the committed check reports say about each entry: the verification matrix for readers."""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

if TYPE_CHECKING:  # readers of reports must not pay for pydantic
    from ._schema import Entry

__all__ = [
    "REPORT_FORMAT",
    "REPORT_VERSION",
    "CheckReport",
    "CheckStatus",
    "ReportRow",
    "ReportedResult",
    "VerificationMatrix",
    "load_verification",
    "read_report",
    "torch_release",
]

REPORT_FORMAT = "trainkb-check-report"  # written by `kb check --json`, read here
REPORT_VERSION = 1  # of that format: written by this kb, and the newest it reads
# A file-size cap, not a paste limit: a merged matrix of every check in a dozen environments is a few MB;
# a file far larger is not a report, and is refused before it is read whole.
MAX_REPORT_BYTES = 64 * 1024 * 1024
_ROW_FIELDS = ("entry", "check", "environment", "status")
_MUTANT_FIELDS = ("entry", "check", "status")  # a mutant row's environment may be left to its report's one


class CheckStatus(enum.StrEnum):
    """What one check came to in one environment: written by `kb check`, shown by the TUI and the site.

    A check that runs past its time limit FAILED (its message says it timed out), unless it was
    expected to hang.
    """

    PASSED = "passed"
    FAILED = "failed"  # the claim did not hold: the snippet raised, warned or finished otherwise than declared
    ERROR = "error"  # the check could not be judged: the snippet or its process broke before it could say
    SKIPPED = "skipped"  # its requirements (CUDA, several GPUs, a package) are not met here


class ReportRow(TypedDict):
    """One check in one environment, as `kb check --json` writes it and every reader reads it."""

    entry: str
    check: str
    environment: str
    status: str  # a CheckStatus; a report written by another version may hold one this version does not know
    seconds: float
    message: str
    demonstrates: str
    claim: str
    expect: str
    evidence: NotRequired[str]  # the tail of the traceback or warning the check produced
    output: NotRequired[str]  # the tail of what a check that did not pass printed


class CheckReport(TypedDict):
    """A check report: one run, or a matrix merged from several environments (`kb report`)."""

    format: str
    version: int
    environments: list[dict[str, Any]]
    summary: dict[str, int]
    results: list[ReportRow]
    mutants: NotRequired[dict[str, Any]]  # what `kb check --mutants` found
    stopped: NotRequired[str | None]  # the signal that stopped the run early; None when it finished


def torch_release(env: dict[str, Any]) -> str:
    """'2.13.0' from an environment block's '2.13.0+cpu' (the local build tag dropped)."""
    return str(env.get("torch", "?")).split("+")[0]


@dataclass(frozen=True)
class ReportedResult:
    """One check's row of one report, as the matrix keeps it."""

    environment: str
    status: str
    seconds: float | None
    message: str
    timestamp: str | None


@dataclass
class VerificationMatrix:
    """Results per (entry, check) across every environment found in the reports."""

    environments: list[dict[str, Any]] = field(default_factory=list)
    results: dict[tuple[str, str], list[ReportedResult]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # report files that were not read, and why

    def for_check(self, entry_id: str, check_name: str) -> list[ReportedResult]:
        return self.results.get((entry_id, check_name), [])

    def environment(self, name: str) -> dict[str, Any]:
        return next((e for e in self.environments if e.get("name") == name), {"name": name})

    def label(self, name: str) -> str:
        """'torch 2.13.0 CPU' or 'torch 2.11.0 CUDA (NVIDIA H100 80GB HBM3)'."""
        env = self.environment(name)
        torch = torch_release(env)
        if env.get("cuda_available"):
            gpus = env.get("gpus") or ["GPU"]
            return f"torch {torch} CUDA ({gpus[0]})"
        return f"torch {torch} CPU"

    def summary(self, entry: Entry) -> list[str]:
        """One line per environment, plus a line for CUDA checks no report covers."""
        if not entry.checks:
            if entry.verification is not None:
                return [f"{entry.verification.status}: {entry.verification.reason}"]
            return []
        lines = []
        names = [e["name"] for e in self.environments]
        for name in names:
            statuses = [s for c in entry.checks for s in self.for_check(entry.id, c.name) if s.environment == name]
            ran = [s for s in statuses if s.status != CheckStatus.SKIPPED]
            if not ran:
                continue
            passed = sum(s.status == CheckStatus.PASSED for s in ran)
            verdict = "verified" if passed == len(ran) else "FAILING"
            lines.append(f"{verdict} on {self.label(name)}, {passed} of {len(ran)} checks")
        cuda_checks = [c for c in entry.checks if c.requires.cuda]
        for check in cuda_checks:
            ran_on_gpu = [s for s in self.for_check(entry.id, check.name) if s.status != CheckStatus.SKIPPED]
            if not ran_on_gpu:
                lines.append(f"CUDA check `{check.name}`: not run here (no CUDA report covers it)")
        if not lines:
            lines.append("checks not yet run in any committed report")
        return lines

    def entry_lines(self, entry: Entry) -> list[str]:
        """The summary, then every check with its claim and its status in each environment."""
        lines = self.summary(entry)
        for check in entry.checks:
            seen = (
                ", ".join(f"{s.status} on {self.label(s.environment)}" for s in self.for_check(entry.id, check.name))
                or "not run yet"
            )
            lines.append(f"`{check.name}` ({check.demonstrates}): {check.claim} — {seen}")
        return lines


def _shape_problem(data: Any) -> str | None:
    """What makes ``data`` not a check report `kb` can read, or None."""
    if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
        return "not a trainkb check report"
    environments, results = data.get("environments"), data.get("results")
    if not isinstance(environments, list) or not isinstance(results, list):
        return "a report needs 'environments' and 'results' lists"
    for i, env in enumerate(environments):
        if not isinstance(env, dict) or not isinstance(env.get("name"), str):
            return f"environments[{i}] needs a 'name'"
        problem = _environment_problem(env)
        if problem is not None:
            return f"environments[{i}].{problem}"
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= REPORT_VERSION:
        return f"version {version!r}: this kb reads check reports of version 1 to {REPORT_VERSION}"
    names = {env["name"] for env in environments}
    statuses = {status.value for status in CheckStatus}
    for i, row in enumerate(results):
        if not isinstance(row, dict) or not all(isinstance(row.get(key), str) for key in _ROW_FIELDS):
            return f"results[{i}] needs the text fields {', '.join(_ROW_FIELDS)}"
        if row["status"] not in statuses:  # a merge would count it as a fifth kind of verdict
            return f"results[{i}].status {row['status']!r} is not one of {', '.join(sorted(statuses))}"
        if row["environment"] not in names:  # a row no environment block describes: where did it run?
            return f"results[{i}].environment {row['environment']!r} is not among the report's environments"
    if "mutants" in data:
        return _mutants_problem(data["mutants"])
    return None


# What readers of an environment block take from it (labels, skips, the site's dates), and the JSON type
# each must have; a key kb does not know is kept as it is (a newer kb may record more).
_ENVIRONMENT_TYPES: dict[str, tuple[type, ...]] = {
    "torch": (str,),
    "cuda_available": (bool,),
    "gpu_count": (int,),
    "timestamp": (str, type(None)),
    "catalogue_commit": (str, type(None)),
    "packages_missing": (dict,),
}


def _environment_problem(env: dict[str, Any]) -> str | None:
    for key, types in _ENVIRONMENT_TYPES.items():
        if key in env and not isinstance(env[key], types):
            return f"{key} is {type(env[key]).__name__}, not {' or '.join(t.__name__ for t in types)}"
    gpus = env.get("gpus", [])
    if not isinstance(gpus, list) or not all(isinstance(gpu, str) for gpu in gpus):
        return "gpus must be a list of device names"
    return None


def _mutants_problem(block: Any) -> str | None:
    """What makes a report's `mutants` block (`kb check --mutants`) unreadable, or None."""
    if not isinstance(block, dict):
        return f"mutants is {type(block).__name__}, not an object"
    rows = block.get("results", [])
    if not isinstance(rows, list):
        return f"mutants.results is {type(rows).__name__}, not a list"
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not all(isinstance(row.get(key), str) for key in _MUTANT_FIELDS):
            return f"mutants.results[{i}] needs the text fields entry, check, status"
        if not isinstance(row.get("environment", ""), str):
            return f"mutants.results[{i}].environment is not text"
    coverage = block.get("coverage", {})
    if not isinstance(coverage, dict) or not isinstance(coverage.get("checks", 0), int):
        return "mutants.coverage needs a whole number of checks"
    return None


def _no_constant(name: str) -> Any:
    """Python's json reads NaN and Infinity, which JSON has not: a report holding one is refused,
    or `kb report merge` would write them back out."""
    raise ValueError(f"{name} is not a JSON number")


def read_report(path: Path) -> CheckReport:
    """A check report, validated; ValueError (or OSError) with the reason when it is not one."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_REPORT_BYTES + 1)
    if len(raw) > MAX_REPORT_BYTES:
        raise ValueError(f"{path}: larger than {MAX_REPORT_BYTES // (1024 * 1024)} MB; not a check report")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:  # arrays or objects nested thousands deep: no report is shaped so
        raise ValueError(f"{path}: JSON nested too deeply; not a check report") from None
    problem = _shape_problem(data)
    if problem is not None:
        raise ValueError(f"{path}: {problem}")
    return cast(CheckReport, data)


def load_verification(reports_dir: Path | Sequence[Path]) -> VerificationMatrix:
    """Every report under ``reports_dir`` (or each of several folders, later ones winning); a file
    that is not one is listed in ``problems``, never fatal."""
    found = VerificationMatrix()
    folders = [reports_dir] if isinstance(reports_dir, Path) else list(reports_dir)
    seen: dict[str, dict[str, Any]] = {}
    for path in [p for folder in folders if folder.is_dir() for p in sorted(folder.glob("*.json"))]:
        try:
            data = read_report(path)
        except (OSError, ValueError) as exc:
            found.problems.append(str(exc) if isinstance(exc, ValueError) else f"{path}: {exc.strerror or exc}")
            continue
        for env in data["environments"]:
            seen[env["name"]] = env
        for row in data["results"]:
            key = (row["entry"], row["check"])
            status = ReportedResult(
                row["environment"],
                row["status"],
                row.get("seconds"),
                row.get("message", ""),
                seen.get(row["environment"], {}).get("timestamp"),
            )
            found.results.setdefault(key, [])
            found.results[key] = [s for s in found.results[key] if s.environment != status.environment] + [status]
    found.environments = list(seen.values())
    return found
