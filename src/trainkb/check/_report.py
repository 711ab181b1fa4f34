"""Reports of a check run: JSON (one environment or a merged matrix), JUnit XML, annotations, text."""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._github import inert, workflow_command
from .._terminal import printable, spelled
from ..catalogue import REPORT_FORMAT, REPORT_VERSION, CheckReport, CheckStatus, ReportRow, read_report, torch_release
from ._runner import CheckResult

__all__ = [
    "REPORT_FORMAT",
    "environment_block",
    "environment_name",
    "github_annotations",
    "junit_xml",
    "load_report",
    "make_report",
    "merge_reports",
    "one_line",
    "prune_report",
    "stopped_text",
    "summary_text",
]


def _git_commit(path: Path) -> str | None:
    """The catalogue's commit; $TRAINKB_COMMIT where the tree was copied without .git (a GPU host)."""
    try:
        out = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        out = None
    if out is not None and out.returncode == 0 and out.stdout.strip():
        return out.stdout.strip()
    return os.environ.get("TRAINKB_COMMIT") or None


def environment_name(env: dict[str, Any]) -> str:
    """A short stable label, e.g. 'cpu-torch2.13.0' or 'cuda-NVIDIA-H100-torch2.11.0'."""
    torch = torch_release(env)
    if env.get("cuda_available") and env.get("gpus"):
        device = "cuda-" + str(env["gpus"][0]).replace(" ", "-")
        if len(env["gpus"]) > 1:
            device += f"-x{len(env['gpus'])}"
    else:
        device = "cpu"
    return f"{device}-torch{torch}"


def environment_block(probed: dict[str, Any], catalogue_root: Path) -> dict[str, Any]:
    block = {k: v for k, v in probed.items() if k != "packages"}
    block["packages_missing"] = {k: v for k, v in probed.get("packages", {}).items() if v is not None}
    block["catalogue_commit"] = _git_commit(catalogue_root)
    block["timestamp"] = datetime.now(UTC).isoformat(timespec="seconds")
    block["name"] = environment_name(probed)
    return block


def make_report(env: dict[str, Any], results: list[CheckResult]) -> CheckReport:
    """A report of one run; the same shape as a merged matrix with one environment."""
    rows = []
    for result in results:
        row = ReportRow(
            entry=result.entry,
            check=result.check,
            status=result.status,
            seconds=result.seconds,
            message=result.message,
            demonstrates=result.demonstrates,
            claim=result.claim,
            expect=result.expect,
            environment=env["name"],
        )
        if result.evidence:
            row["evidence"] = result.evidence[0][-8000:]
        if result.output:
            row["output"] = result.output[-8000:]
        rows.append(row)
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "environments": [env],
        "summary": dict(Counter(r.status for r in results)),
        "results": rows,
    }


def load_report(path: Path) -> CheckReport:
    """A check report with the shape merging needs; ValueError or OSError with the reason otherwise."""
    return read_report(path)


def merge_reports(reports: list[CheckReport]) -> CheckReport:
    """Combine runs (shards, environments); for the same check and environment the later report wins."""
    environments: dict[str, dict[str, Any]] = {}
    results: dict[tuple[str, str, str], ReportRow] = {}
    for report in reports:
        for env in report["environments"]:
            environments[env["name"]] = env
        for row in report["results"]:
            results[(row["entry"], row["check"], row["environment"])] = row
    rows = sorted(results.values(), key=lambda r: (r["environment"], r["entry"], r["check"]))
    # part of the matrix came from a run that did not finish: the merge says so (the last such run's signal)
    stopped = [r["stopped"] for r in reports if isinstance(r.get("stopped"), str)]
    merged: CheckReport = {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "environments": list(environments.values()),
        "summary": dict(Counter(r["status"] for r in rows)),
        "results": rows,
        "stopped": stopped[-1] if stopped else None,
    }
    mutants = _merge_mutants(reports, rows)
    if mutants is not None:
        merged["mutants"] = mutants
    return merged


def prune_report(report: CheckReport, known: set[tuple[str, str]]) -> tuple[CheckReport, list[str]]:
    """``report`` without the rows (and mutant rows) of checks not in ``known``, and those checks' ids.

    A check renamed or removed from its record leaves its old rows in every report that ran it; merging
    old and new reports would carry them forever.
    """
    dropped = sorted({f"{r['entry']}:{r['check']}" for r in report["results"] if (r["entry"], r["check"]) not in known})
    pruned: CheckReport = {**report, "results": [r for r in report["results"] if (r["entry"], r["check"]) in known]}
    block = report.get("mutants")
    if isinstance(block, dict) and isinstance(block.get("results"), list):
        rows = [r for r in block["results"] if not isinstance(r, dict) or (r.get("entry"), r.get("check")) in known]
        pruned["mutants"] = block | {"results": rows}
        if isinstance(block.get("coverage"), dict):  # the count of checks it ran is of the checks kept, not gone
            kept = len({(r["entry"], r["check"]) for r in pruned["results"]})
            pruned["mutants"]["coverage"] = block["coverage"] | {"checks": kept}
    return pruned, dropped


def _merge_mutants(reports: list[CheckReport], rows: list[ReportRow]) -> dict[str, Any] | None:
    """The reports' `mutants` blocks as one (None when none has one): each mutant row is tagged with
    its run's environment, and the later report wins for the same check and environment."""
    found: dict[tuple[str, str, str], dict[str, Any]] = {}
    counted: list[int] = []
    for report in reports:
        block = report.get("mutants")
        if not isinstance(block, dict):
            continue
        coverage = block.get("coverage")
        if isinstance(coverage, dict) and isinstance(coverage.get("checks"), int):
            counted.append(coverage["checks"])
        names = [env["name"] for env in report["environments"]]
        default = names[0] if len(names) == 1 else ""
        for row in block.get("results") or []:
            if isinstance(row, dict) and isinstance(row.get("entry"), str) and isinstance(row.get("check"), str):
                environment = row.get("environment") or default
                found[(row["entry"], row["check"], environment)] = row | {"environment": environment}
    if not found and not counted:
        return None
    mutant_rows = sorted(found.values(), key=lambda r: (r["environment"], r["entry"], r["check"]))
    counts = Counter(r.get("status") for r in mutant_rows)
    checks = len({(r["entry"], r["check"]) for r in rows}) or max(counted, default=0)
    with_mutation = len({(r["entry"], r["check"]) for r in mutant_rows})
    return {
        "declared": len(mutant_rows),
        "killed": counts["killed"],
        "survived": counts["survived"],
        "skipped": counts[CheckStatus.SKIPPED],
        "error": counts[CheckStatus.ERROR],
        "coverage": {
            "checks": checks,
            "with_mutation": with_mutation,
            "percent": round(100 * with_mutation / checks, 1) if checks else 0.0,
        },
        "results": mutant_rows,
    }


# What XML 1.0 cannot hold at all (C0 controls but tab, newline and CR; lone surrogates; U+FFFE/U+FFFF):
# a snippet's output or message with one would make the whole JUnit file unreadable.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    return spelled(text, _NOT_XML)


def stopped_text(signame: str) -> str:
    """What a stopped run's outputs say first: its passes and skips are not a finished run's."""
    return f"kb check was stopped by {signame} before every check ran: this run is not a pass"


def junit_xml(results: list[CheckResult], env_name: str, stopped: str | None = None) -> str:
    """The JUnit report; a stopped run carries a `stopped` property and an error test case."""
    counts = Counter(r.status for r in results)
    suite = ET.Element(
        "testsuite",
        name=_xml(f"kb-check ({env_name})"),
        tests=str(len(results) + bool(stopped)),
        failures=str(counts[CheckStatus.FAILED]),
        errors=str(counts[CheckStatus.ERROR] + bool(stopped)),
        skipped=str(counts[CheckStatus.SKIPPED]),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    if stopped:
        properties = ET.SubElement(suite, "properties")
        ET.SubElement(properties, "property", name="stopped", value=_xml(stopped))
        case = ET.SubElement(suite, "testcase", classname="kb-check", name="run finished", time="0.000")
        ET.SubElement(case, "error", type=_xml(stopped), message=_xml(stopped_text(stopped)))
    for result in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_xml(result.entry),
            name=_xml(result.check),
            file=_xml(result.path),
            line=str(result.line),
            time=f"{result.seconds:.3f}",
        )
        if result.status in {CheckStatus.FAILED, CheckStatus.ERROR}:
            tag = "failure" if result.status == CheckStatus.FAILED else "error"
            node = ET.SubElement(case, tag, message=_xml(result.message))
            node.text = _xml(f"claim: {result.claim}\n{result.message}\n{result.output}")
        elif result.status == CheckStatus.SKIPPED:
            ET.SubElement(case, "skipped", message=_xml(result.message))
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def github_annotations(results: list[CheckResult]) -> list[str]:
    lines = []
    for r in results:
        if r.status in {CheckStatus.FAILED, CheckStatus.ERROR}:
            title = f"kb check {r.entry}:{r.check} {r.status}"
            lines.append(
                workflow_command("error", {"file": r.path, "line": r.line, "title": title}, f"{r.claim} — {r.message}")
            )
        elif r.status == CheckStatus.SKIPPED:
            title = f"kb check {r.entry}:{r.check} skipped"
            lines.append(workflow_command("notice", {"file": r.path, "line": r.line, "title": title}, r.message))
    return lines


# what to do about a kind of skip: (words of its reason, the next step)
_NEXT_STEPS = (
    ("needs CUDA", "GPU checks run on a machine with a GPU; `kb show ID` lists the results committed from one"),
    ("GPUs;", "multi-GPU checks run on a machine with that many GPUs (see the reports/ folder for results)"),
    (
        "needs package",
        "install the missing packages into this environment to run those checks; in a checkout, "
        "`make setup CHECKS=1` adds transformers, accelerate, peft, trl, diffusers and lightning",
    ),
)


def one_line(text: str) -> str:
    """A record's path, id or claim, or a snippet's message, on the one line it is printed on: a newline
    or CR in it (a file name may hold one) would start a line of its own, which a CI runner reads as a
    command (``::error ...``)."""
    return printable(text, newlines=False)


def summary_text(results: list[CheckResult], env_name: str, wall: float) -> str:
    counts = Counter(r.status for r in results)
    verdicts = ", ".join(f"{counts[s]} {s}" for s in CheckStatus if counts[s])
    parts = [
        f"kb check on {one_line(env_name)}: {len(results)} checks in {wall:.1f} s"
        + (f" — {verdicts}" if verdicts else "")
    ]
    bad = [r for r in results if r.status in {CheckStatus.FAILED, CheckStatus.ERROR}]
    if bad:
        parts.append("\nFailures:")
        for r in bad:
            parts.append(f"  {r.status.upper()} {one_line(f'{r.entry}:{r.check}  ({r.path}:{r.line})')}")
            parts.append(f"    claim: {one_line(r.claim)}")
            parts.append(f"    what happened: {one_line(r.message)}")
            if r.output:
                tail = r.output.strip().splitlines()[-12:]
                parts.append("    output (tail):\n" + "\n".join("      " + inert(one_line(line)) for line in tail))
    skipped = [r for r in results if r.status == CheckStatus.SKIPPED]
    if skipped:
        reasons = Counter(r.message for r in skipped)
        parts.append("\nSkipped:")
        parts += [f"  {n} × {one_line(reason)}" for reason, n in reasons.most_common()]
        parts += [f"  → {step}" for needs, step in _NEXT_STEPS if any(needs in reason for reason in reasons)]
    ran = sorted((r for r in results if r.status != CheckStatus.SKIPPED), key=lambda r: -r.seconds)[:5]
    if ran:
        parts.append("\nSlowest:")
        parts += [f"  {r.seconds:6.2f} s  {one_line(f'{r.entry}:{r.check}')}" for r in ran]
    return "\n".join(parts)
