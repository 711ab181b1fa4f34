"""`kb check`: run the selected entries' checks against the torch installed here."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from .._terminal import printable, say
from ._common import open_catalogue, seconds
from ._exit import Exit, UsageError, report_usage_error
from ._output import checked_output, write_atomic

if TYPE_CHECKING:
    from ..catalogue import Catalogue
    from ..check import CheckSession, CheckTask

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMG]?)$", re.IGNORECASE)


_MIN_MEMORY = 64 * 1024**2  # below this not even `import torch` fits: every check would fail
_MAX_MEMORY = 2**50  # a pebibyte: anything larger is a typo, and overflows setrlimit


# Below this a check cannot even start its interpreter's work: a typo (1e-9 for 1e9), never a plan.
MIN_TIMEOUT = 0.1


def _check_seconds(text: str) -> float:
    """--timeout: a duration as `seconds` reads it, and at least MIN_TIMEOUT."""
    value = seconds(text)
    if value < MIN_TIMEOUT:
        raise argparse.ArgumentTypeError(f"a check needs at least {MIN_TIMEOUT} s to run, got {text!r}")
    return value


def _bytes(text: str) -> int | None:
    """--memory-limit: a size, or 'off'; 0 is refused with the other too-small sizes, not read as 'off'."""
    if text.lower() in {"none", "off"}:
        return None
    match = _SIZE.match(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a size such as 8G or 512M, or 'off'; got {text!r}")
    scale = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[match[2].upper()]
    size = int(float(match[1]) * scale)
    if size > _MAX_MEMORY:
        raise argparse.ArgumentTypeError(f"{text!r} is larger than any machine (at most 1048576G), or 'off'")
    if size < _MIN_MEMORY:
        raise argparse.ArgumentTypeError(f"{text!r} is too small to import torch; give at least 64M, or 'off'")
    return size


def _no_torch(why: str) -> str:
    return (
        f"torch is not importable here ({why}); kb check runs the checks against the torch of this environment: "
        f"install the torch you train with into it (https://pytorch.org/get-started/locally/) or run kb from "
        f"the environment that has it ({sys.executable})"
    )


def add_parser(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("ids", nargs="*", metavar="ID", help="entries to check (default: all)")
    parser.add_argument("--area", help="only entries of this area")
    parser.add_argument("--changed-since", metavar="GIT_REF", help="only entries whose record changed since GIT_REF")
    parser.add_argument(
        "--layer", metavar="NAME", help="only entries of this catalogue layer (its catalogue.yaml name or folder name)"
    )
    parser.add_argument(
        "--jobs", "-j", type=int, default=os.cpu_count() or 1, help="checks run in parallel (default: CPU count)"
    )
    parser.add_argument(
        "--timeout",
        type=_check_seconds,
        default=60.0,
        help="seconds per check unless the check sets its own (default 60, at least 0.1)",
    )
    parser.add_argument(
        "--memory-limit",
        type=_bytes,
        default=16 * 1024**3,
        metavar="SIZE",
        help="address-space limit per check process, e.g. 8G; 'off' disables (default 16G)",
    )
    parser.add_argument("--shard", metavar="i/n", help="run only shard i of n (stable split for CI matrices)")
    parser.add_argument("--strict", action="store_true", help="count skipped checks as failures")
    parser.add_argument(
        "--json",
        nargs="?",
        const=True,
        metavar="FILE",
        help="print the JSON report on stdout (progress and summary go to stderr); `--json FILE` is the old "
        "spelling of -o FILE",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write the JSON report to FILE")
    parser.add_argument("--junit", metavar="FILE", help="write a JUnit XML report to FILE")
    parser.add_argument(
        "--format",
        choices=["text", "github"],
        default="text",
        help="github also prints Actions annotations for failures and skips",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no per-check progress")
    parser.add_argument(
        "--no-drift",
        action="store_true",
        help="do not fail when search misses the entry for a check's own error output",
    )
    parser.add_argument(
        "--mutants",
        action="store_true",
        help="also run each check's declared mutation and fail when a mutant still passes",
    )
    parser.add_argument("--mutants-only", action="store_true", help="run only the mutants (while writing mutations)")


def _report_targets(args: argparse.Namespace) -> tuple[bool, str | None]:
    """Whether the JSON report goes to stdout, and the file it is written to.

    ``--json`` once took the report file. A value after it that reads as an entry id is an id to
    check (``kb check --json A7``); any other value is still the file, with a note on stderr.
    """
    from ..catalogue import ENTRY_ID_PATTERN

    output: str | None = args.output
    value = args.json
    if not isinstance(value, str):
        return bool(value), output
    if re.match(ENTRY_ID_PATTERN, value, re.IGNORECASE):
        args.ids.append(value)
        return True, output
    if value == "-":
        say("kb check: `--json -` is now `--json`, which prints the report on stdout\n")
        return True, output
    if output:
        raise UsageError(f"--json {value} and -o {output}: name the report file once, with -o")
    say(f"kb check: `--json FILE` is deprecated; write `-o {value}` (`--json` alone prints it)\n")
    return False, value


def run(args: argparse.Namespace) -> int:
    from .. import check as checker

    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    try:  # every check process is started from here (multiprocessing reads it)
        os.getcwd()
    except FileNotFoundError:
        raise UsageError("the current folder no longer exists; run kb check from one that does") from None
    to_stdout, json_path, junit_path = _report_paths(args)
    tasks, cat = _selected(args)
    _check_hard_memory_limit(args.memory_limit)
    if importlib.util.find_spec("torch") is None:  # before the pool takes seconds to find out
        raise UsageError(_no_torch("No module named 'torch'"))
    if args.whole_process:  # a program that calls main() in-process keeps its environment
        checker.scrub_own_environment()
    options = checker.SessionOptions(
        run=checker.RunOptions(timeout=args.timeout, memory_bytes=args.memory_limit, jobs=args.jobs),
        mutants=args.mutants,
        mutants_only=args.mutants_only,
        drift=not args.no_drift,
        quiet=args.quiet or to_stdout,
    )
    try:
        session = checker.run_session(cat, tasks, options)
    except checker.TorchUnavailable as exc:  # installed, but importing it fails
        raise UsageError(_no_torch(str(exc))) from None
    except checker.ServerUnavailable as exc:  # the forkserver died before the first check
        raise UsageError(f"kb check could not start its check processes: {exc}") from None
    except checker.Stopped as exc:
        say(f"kb check: stopped by {signal.Signals(exc.signum).name}; no check is left running\n")
        if exc.partial is not None:  # the verdicts reached are kept; what did not run says so
            _output(exc.partial, args, to_stdout, json_path, junit_path)
        return 128 + exc.signum
    unwritten = _output(session, args, to_stdout, json_path, junit_path)
    if unwritten:
        return Exit.USAGE
    return Exit.FINDINGS if session.failed(args.strict) else Exit.SUCCESS


def _report_paths(args: argparse.Namespace) -> tuple[bool, Path | None, Path | None]:
    """(whether the JSON report goes to stdout, the -o file, the --junit file), each checked writable."""
    to_stdout, report_file = _report_targets(args)
    if report_file == "-":
        raise UsageError("-o -: give a file name; `--json` prints the report on stdout")
    json_path = checked_output(report_file, "-o" if args.output else "--json") if report_file else None
    junit_path = checked_output(args.junit, "--junit") if args.junit else None
    if json_path is not None and junit_path is not None and _same_file(json_path, junit_path):
        raise UsageError(f"the JSON and the JUnit report both go to {args.junit}: give each its own file")
    return to_stdout, json_path, junit_path


def _selected(args: argparse.Namespace) -> tuple[list[CheckTask], Catalogue]:
    """The checks the options select (ids, area, --changed-since, --layer, --shard) and their catalogue;
    a usage error for an option that names nothing, an invalid catalogue or a mutation that breaks the rules."""
    from .. import check as checker

    ref = args.changed_since
    if ref is not None and (not isinstance(ref, str) or not ref or ref.startswith("-")):
        # argparse hands `--changed-since=--` over as [] (it drops the "--"): that is no ref either
        shown = ref if isinstance(ref, str) else "--"
        raise UsageError(f"--changed-since {shown!r}: give a git ref; one cannot be empty or start with '-'")
    try:
        shard = checker.parse_shard(args.shard) if args.shard else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cat = open_catalogue(args)
    if cat.problems:
        for problem in cat.problems:
            say(f"{problem}\n")
        raise UsageError("the catalogue has invalid records; fix them first (`kb lint`)")
    unknown = [i for i in args.ids if i.upper() not in {e.upper() for e in cat.entries}]
    if unknown:
        raise UsageError(f"unknown entry id(s): {', '.join(unknown)}")
    if args.area and cat.area(args.area) is None:
        raise UsageError(f"unknown area {args.area!r}")
    only = _only(args, cat)
    tasks = checker.select_tasks(cat, args.ids or None, args.area, only, shard)
    if shard is not None:
        selected = checker.select_tasks(cat, args.ids or None, args.area, only)
        _check_shard(shard, len(checker.select_tasks(cat)), len(selected), len(tasks))
    if args.mutants or args.mutants_only:
        from ..catalogue import mutation_problems

        broken = [f"{t.path}:{t.line}: {t.key}: {p}" for t in tasks for p in mutation_problems(t.check)]
        if broken:
            say("\n".join(broken) + "\n")
            raise UsageError("some mutations break the rules; fix them first (`kb lint`)")
    return tasks, cat


def _only(args: argparse.Namespace, cat: Catalogue) -> set[str] | None:
    """The entry ids --changed-since and --layer keep (None: every entry)."""
    from ..check import changed_entry_ids

    only = None
    if args.changed_since:
        try:
            only = changed_entry_ids(cat, args.changed_since)
        except subprocess.CalledProcessError as exc:  # git's own words, not the command line that failed
            said = (exc.stderr or "").strip().splitlines()
            raise UsageError(f"--changed-since {args.changed_since}: {said[-1] if said else exc}") from None
        except Exception as exc:
            raise UsageError(f"--changed-since {args.changed_since}: {exc}") from None
    if args.layer:
        names = [name for name, _root in cat.layers[1:]]
        if args.layer not in names:
            raise UsageError(f"no layer named {args.layer!r}; layers: {', '.join(names) or 'none'}")
        mine = {entry_id for entry_id, name in cat.origin.items() if name == args.layer}
        only = mine if only is None else only & mine
    return only


def _output(
    session: CheckSession, args: argparse.Namespace, to_stdout: bool, json_path: Path | None, junit_path: Path | None
) -> bool:
    """Write the reports, print the JSON, annotations and summary; whether a report could not be written."""
    # A report that cannot be written (a disk filled up during the run) costs that file only:
    # the other report and the summary still come out, and the exit status says what was lost.
    # The files come first: a stdout that fails (full, closed) must not cost them.
    report = json.dumps(session.report(), indent=2)
    unwritten: list[UsageError] = []
    _write_reports(session, report, json_path, junit_path, unwritten)
    if to_stdout:
        print(report)
    if args.format == "github":
        for line in session.annotations():
            print(printable(line))
    summary = printable(session.summary(github=args.format == "github"))
    if to_stdout:  # stdout holds the JSON report alone; a closed stderr loses the summary, not the report
        say(summary + "\n")
    else:
        print(summary)
    for error in unwritten:
        report_usage_error(error)
    return bool(unwritten)


def _check_shard(shard: tuple[int, int], every: int, selected: int, kept: int) -> None:
    """More shards than the catalogue has checks is a typo (a usage error); a shard that a filter left
    empty is said, since a CI matrix of fixed size still wants its reports written."""
    index, count = shard
    if count > every:
        raise UsageError(
            f"--shard {index}/{count}: the catalogue has {every} check(s); split them into at most {every}"
        )
    if not kept:
        say(f"kb check: shard {index}/{count} holds none of the {selected} check(s) selected\n")


def _same_file(one: Path, other: Path) -> bool:
    """Whether two report paths name one file (the second report written would replace the first)."""
    if os.path.realpath(one) == os.path.realpath(other):
        return True
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist yet
        return False


def _write_reports(
    session: CheckSession, report: str, json_path: Path | None, junit_path: Path | None, unwritten: list[UsageError]
) -> None:
    """Write the -o (``report``, the session's JSON) and --junit reports that were asked for; one that
    cannot be written is added to ``unwritten``."""
    if json_path is not None:
        _write_report(json_path, report + "\n", unwritten)
    if junit_path is not None:
        _write_report(junit_path, session.junit(), unwritten)


def _write_report(path: Path, text: str, unwritten: list[UsageError]) -> None:
    try:
        write_atomic(path, text)
    except UsageError as error:
        unwritten.append(error)


def _check_hard_memory_limit(wanted: int | None) -> None:
    """A usage error when this shell's hard address-space limit is below --memory-limit: no check
    could get the limit it asks for, and running them anyway would turn that into false verdicts."""
    import resource

    if wanted is None:
        return
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY and hard < wanted:
        raise UsageError(
            f"the hard address-space limit here (ulimit -v: {hard // 1024**2}M) is below --memory-limit "
            f"({wanted // 1024**2}M); give --memory-limit {hard // 1024**2}M or less, or 'off'"
        )
