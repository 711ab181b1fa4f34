"""`kb site build` renders the static site; `kb site serve` serves a built one on this machine."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from .._status import status
from .._terminal import printable
from ..catalogue import load_verification
from ._common import open_catalogue
from ._exit import Exit, UsageError


def add_parser(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="site_command", metavar="ACTION", required=True)
    build = sub.add_parser(
        "build",
        help="render the catalogue into a static site",
        description="Render every entry, area and the verification matrix into DIR.",
    )
    build.add_argument("-o", "--output", default="_site", metavar="DIR", help="output folder (default _site/)")
    build.add_argument(
        "--base-url",
        type=_base_path,
        default="/",
        metavar="PATH",
        help="path the site is served under, e.g. /trainkb/ (pages link relatively; "
        "this only sets the 404 page's links)",
    )
    build.add_argument(
        "--reports", metavar="DIR", help="check reports to show (default: reports/ beside the catalogue)"
    )
    build.add_argument("--json", action="store_true", help="print {output, pages, entries, seconds} as JSON")
    build.add_argument(  # `kb site build -o S --catalogue L`: as after every other command
        "--catalogue",
        metavar="PATH",
        action="append",
        dest="command_catalogue",
        default=argparse.SUPPRESS,
        help="catalogue folder, as `kb --catalogue PATH` takes it; may be repeated",
    )
    serve = sub.add_parser(
        "serve",
        help="serve a built site over HTTP",
        description="Serve a built site; bound to 127.0.0.1 unless --host says otherwise.",
    )
    serve.add_argument("-d", "--directory", default="_site", metavar="DIR", help="built site (default _site/)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8000, help="port (default 8000; 0 picks a free one)")


# a URL path and nothing else: the 404 page puts it before its links, so a scheme (`javascript:`), a host,
# a query or a quote would make them something other than links into the site
_BASE_PATH = re.compile(r"[A-Za-z0-9._~%+/-]*")


def _base_path(text: str) -> str:
    if not _BASE_PATH.fullmatch(text) or text.startswith("//"):
        raise argparse.ArgumentTypeError(
            f"give the path the site is served under, e.g. /trainkb/ (letters, digits, . _ ~ % + - and /), got {text!r}"
        )
    return text


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0-65535, not {port}")
    return port


def _build(args: argparse.Namespace) -> int:
    from ..site import SiteError, build_site  # jinja2, markdown-it and pygments only for this command

    cat = open_catalogue(args)
    from ..catalogue import layer_reports

    reports = [Path(args.reports)] if args.reports else layer_reports(cat)
    if args.reports and not reports[0].is_dir():
        raise UsageError(f"reports folder not found: {reports[0]}")
    verification = load_verification(reports)
    for problem in verification.problems:
        print(f"kb: warning: report skipped: {printable(problem, newlines=False)}", file=sys.stderr)
    try:
        with status("kb site build") as say:
            result = build_site(cat, verification, Path(args.output), base_url=args.base_url, progress=say)
    except SiteError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UsageError(f"cannot write the site to {args.output}: {exc.strerror or exc}") from None
    if result.in_place:
        print(f"kb: {result.note}", file=sys.stderr)
    if cat.problems:  # the site still shows every entry that loaded; the exit status says it is partial
        print(
            f"kb: {len(cat.problems)} catalogue problem(s) left entries out of the site; run `kb lint`", file=sys.stderr
        )
    if args.json:
        print(
            json.dumps(
                {
                    "output": str(result.out),
                    "pages": result.pages,
                    "entries": len(cat.entries),
                    "seconds": round(result.seconds, 3),
                    "in_place": result.in_place,
                }
            )
        )
    else:
        print(f"built {result.pages} pages ({len(cat.entries)} entries) into {result.out}/ in {result.seconds:.2f} s")
        print(f"open {result.out.resolve() / 'index.html'} or run `kb site serve -d {result.out}`")
    return Exit.FINDINGS if cat.problems or verification.problems else Exit.SUCCESS


def _address(host: str, port: int) -> str:
    """``host:port``, an IPv6 address in brackets as a URL writes it (``::1:0`` reads ambiguously)."""
    return f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"


def _serve(args: argparse.Namespace) -> int:
    from ..site import make_server

    directory = Path(args.directory)
    if not (directory / "index.html").is_file():
        raise UsageError(f"no built site in {directory}/; run `kb site build -o {directory}` first")
    try:
        server = make_server(directory, args.host, args.port)
    except (OSError, OverflowError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise UsageError(f"cannot listen on {_address(args.host, args.port)}: {why}") from None
    host, port = server.socket.getsockname()[:2]
    print(f"serving {directory}/ at http://{_address(host, port)}/ (Ctrl+C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return Exit.SUCCESS


def run(args: argparse.Namespace) -> int:
    if args.site_command == "build":
        return _build(args)
    return _serve(args)
