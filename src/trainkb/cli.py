"""`kb`: the command-line entry point. Each subcommand lives in trainkb/commands/<name>.py."""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import importlib
import io
import os
import sys
from collections.abc import Sequence

from . import __version__
from ._tail import piped_stdin
from ._terminal import say
from .commands import Exit, UsageError, report_usage_error

__all__ = ["main"]

CATALOGUE_HELP = (
    f"catalogue folder; repeat it, or give a path list (PATH1{os.pathsep}PATH2), to layer folders "
    "over the first (a folder with catalogue.yaml is a layer over the default catalogue)"
)

COMMANDS = {
    "list": "List entries, optionally of one area.",
    "show": "Show one entry rendered in the terminal.",
    "lint": "Validate every record and the catalogue's cross-references.",
    "schema": "Print (or write) the JSON Schema of a record.",
    "search": "Find the entries that explain a pasted traceback, log or symptom.",
    "triage": "Name the rank of a distributed job that broke first, and the ranks that are only victims.",
    "check": "Run the entries' checks against the installed torch.",
    "report": "Combine check reports from several environments.",
    "run": "Run a training command; if it fails or hangs, name the entries that explain it.",
    "doctor": "Inspect this environment for conditions the catalogue warns about.",
    "tui": "Open the interactive search UI (also: `kb` alone in a terminal).",
    "site": "Build or serve the static site.",
    "new": "Start a record from a failure's output: signatures, check and TODOs to fill in.",
}


def _first_word(argv: Sequence[str]) -> tuple[str | None, bool]:
    """The first word of ``argv`` that is no option's value, and whether only --catalogue options come before it
    (no -h or --help or a prefix of it, --version, ``--`` or mistyped option, which can make argparse list every
    command); (None, False) when there is none."""
    after_catalogue, only_catalogue = False, True
    for word in argv:
        if after_catalogue:
            after_catalogue = False
        elif word == "--catalogue":
            after_catalogue = True
        elif not word.startswith("-"):
            return word, only_catalogue
        elif not word.startswith("--catalogue="):
            only_catalogue = False
    return None, False


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when it plainly names one (the first word that is no option's value)."""
    word, _ = _first_word(argv)
    return word if word in COMMANDS else None


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter at the width argparse gives it (``shutil.get_terminal_size()``'s columns
    less 2), found without importing shutil and the compression modules it loads: every `kb search`
    builds the parser, which makes a formatter per argument, and only `--help` prints with one."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def _columns() -> int:
    """The columns ``shutil.get_terminal_size()`` reports: $COLUMNS when a positive number, else the
    terminal's width (0 counts as unknown), else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80


def _only_catalogue_before(argv: Sequence[str]) -> bool:
    """Whether nothing but --catalogue options comes before the command (``_first_word``)."""
    return _first_word(argv)[1]


def _parser(only: str | None = None, listed: bool = True) -> argparse.ArgumentParser:
    """The whole parser; with ``only``, every other subcommand is listed but its module is not
    imported (`kb search` then loads no other command's code), and unless ``listed`` (nothing will
    print the program's help) not even added: each is a parser to build, on every `kb search`."""
    parser = argparse.ArgumentParser(
        prog="kb",
        description="trainkb: paste a PyTorch training failure, get the entry that explains it.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"kb (trainkb) {__version__}")
    parser.add_argument(
        "--catalogue",
        metavar="PATH",
        action="append",
        help=CATALOGUE_HELP + " (default: $TRAINKB_CATALOGUE, this checkout, the bundled copy)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if not listed and name != only:
            continue
        command = sub.add_parser(name, help=help_text, description=help_text, formatter_class=_Formatter)
        if only is None or name == only:
            importlib.import_module(f"trainkb.commands.{name}").add_parser(command)
        # also after the command, where pre-commit and CI configurations append their arguments
        command.add_argument(
            "--catalogue",
            metavar="PATH",
            action="append",
            dest="command_catalogue",
            default=argparse.SUPPRESS,
            help=CATALOGUE_HELP,
        )
    return parser


def _tolerant_output() -> None:
    """A terminal or pipe that cannot encode a character (PYTHONIOENCODING=ascii, a C locale) gets an
    escape for it instead of a UnicodeEncodeError. A C locale without UTF-8 mode gives stdout
    ``surrogateescape``, which raises on anything outside ASCII too (and would write an undecodable
    byte raw, where kb's own lines spell it out)."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") in ("strict", "surrogateescape"):
            reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    """Run `kb` with ``argv``; return the exit status (``Exit``: 0 success, 1 findings, 2 usage)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        if argv is not None:  # a library call: the program around it decides what Ctrl-C means
            raise
        # Ctrl-C before a command could take it (while kb starts, imports or parses): the user wants out, and
        # a shell reads 128 + SIGINT as "interrupted", as it would for any program it stopped
        return _INTERRUPTED


_INTERRUPTED = 130  # 128 + SIGINT


def _main(argv: Sequence[str] | None) -> int:
    _tolerant_output()
    whole_process = argv is None  # the `kb` program itself, not a library call inside another program
    argv = list(argv) if argv is not None else sys.argv[1:]
    command = _command_in(argv)
    if whole_process and command == "search":
        gc.disable()  # one paste, then exit (commands/search.py says why): from the parser on, not from its run
    parser = _parser(command, listed=command is None or not _only_catalogue_before(argv))
    if whole_process and sys.stdin is None:  # started with stdin closed (`kb search - <&-`)
        sys.stdin = _ClosedInput()
    try:
        args = parser.parse_args(argv)
        if args.command is None and sys.stdin.isatty() and sys.stdout.isatty():
            args = parser.parse_args([*argv, "tui"])
        elif args.command is None and piped_stdin():  # `train.py 2>&1 | kb`, `kb < log`: search it
            parser = _parser("search", listed=False)
            args = parser.parse_args([*argv, "search", "-"])
    except SystemExit as exc:  # argparse exits 2 on usage errors and 0 on --help/--version
        return int(exc.code or 0)
    if args.command is None and isinstance(sys.stdin, _ClosedInput):
        return report_usage_error(UsageError(_ClosedInput.MESSAGE))
    args.catalogue = [*(args.catalogue or []), *getattr(args, "command_catalogue", [])] or None
    if args.command is None:  # no input and no terminal to draw on (CI, `kb | less`)
        parser.print_help()
        return Exit.SUCCESS
    args.whole_process = whole_process
    module = importlib.import_module(f"trainkb.commands.{args.command}")
    if whole_process and sys.stdout is None:  # started with stdout closed (`kb list >&-`)
        sys.stdout = _ClosedOutput()
    try:
        return int(module.run(args))
    except UsageError as error:
        return report_usage_error(error)
    except BrokenPipeError:  # `kb list | head` must not print a traceback
        sys.stderr.close()
        return Exit.SUCCESS
    except OSError as error:
        if not whole_process or not _stdout_failed():
            raise
        say(f"kb: error: cannot write the output: {error.strerror or error}\n")
        return Exit.USAGE


class _ClosedInput(io.TextIOBase):
    """Stands in for a closed stdin: reading it is a usage error of one line, not an AttributeError."""

    MESSAGE = "standard input is closed; give the text, a file or a command (kb --help)"

    def isatty(self) -> bool:
        return False

    def read(self, size: int | None = -1) -> str:
        raise UsageError(self.MESSAGE)

    @property
    def buffer(self) -> io.BufferedIOBase:
        raise UsageError(self.MESSAGE)


class _ClosedOutput(io.TextIOBase):
    """Stands in for a closed stdout: a command's result must not vanish with exit status 0."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")


def _stdout_failed() -> bool:
    """True when stdout cannot take what is written to it (a full disk, a closed descriptor); it is
    closed then, so the buffered rest does not fail a second time at exit."""
    stream = sys.stdout
    try:
        stream.write("")
        stream.flush()
    except (OSError, ValueError):
        with contextlib.suppress(OSError, ValueError):
            stream.close()
        return True
    return False


if __name__ == "__main__":
    sys.exit(main())
