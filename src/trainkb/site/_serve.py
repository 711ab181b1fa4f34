"""`kb site serve`: the built site over HTTP on this machine only, unless told otherwise."""

from __future__ import annotations

import functools
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

__all__ = ["make_server"]


class _Handler(SimpleHTTPRequestHandler):
    """Static files with the headers a static host would send."""

    extensions_map: ClassVar[dict[str, str]] = {**SimpleHTTPRequestHandler.extensions_map,
                                                ".js": "text/javascript", ".svg": "image/svg+xml"}

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``directory``; port 0 picks a free port (tests)."""
    handler = functools.partial(_Handler, directory=str(directory))
    return ThreadingHTTPServer((host, port), handler)
