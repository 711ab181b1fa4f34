"""`kb site serve`: the built site over HTTP on this machine only, unless told otherwise."""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import sys
import threading
import urllib.parse
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = ["make_server"]


IDLE_SECONDS = 30.0  # a client that sends nothing for this long is dropped (it held a thread)
REQUEST_SECONDS = 30.0  # a request that has not fully arrived after this long is dropped (a byte at a time)


class _Handler(SimpleHTTPRequestHandler):
    """Static files with the headers a static host would send, and nothing a static host would not:
    no folder listings, no dotfiles (the build marker), and the site's own 404 page."""

    timeout = IDLE_SECONDS
    request_seconds = REQUEST_SECONDS
    log_failed = False  # stderr refused a log line: the log stops, the serving goes on

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # per instance (typeshed declares extensions_map an instance attribute); the base handles
        # the request inside __init__, so this comes first
        self.extensions_map = {**self.extensions_map, ".js": "text/javascript", ".svg": "image/svg+xml"}
        super().__init__(*args, **kwargs)

    def handle_one_request(self) -> None:
        """Each request gets ``request_seconds`` to arrive: the idle timeout alone lets a client that
        drips one byte at a time hold a thread for ever."""
        self._deadline = threading.Timer(self.request_seconds, self._cut)
        self._deadline.daemon = True
        self._deadline.start()
        try:
            super().handle_one_request()
        finally:
            self._deadline.cancel()

    def parse_request(self) -> bool:
        try:
            return super().parse_request()  # reads the headers
        finally:
            self._deadline.cancel()  # it has arrived: sending the answer is bounded by the idle timeout

    def _cut(self) -> None:
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: Any) -> None:
        """The access log on stderr, as the base writes it; once stderr cannot be written (`kb site serve 2>&1 |
        head -1` closed the pipe) the site is still served, unlogged: a failed log line made every answer empty."""
        if _Handler.log_failed:
            return
        try:
            super().log_message(format, *args)
        except (OSError, ValueError):
            _Handler.log_failed = True

    def end_headers(self) -> None:
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def send_head(self) -> Any:
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if "\0" in path or any(part.startswith(".") for part in path.split("/") if part) or not self._inside():
            self.send_error(HTTPStatus.NOT_FOUND)
            return None
        return super().send_head()

    def _inside(self) -> bool:
        """Whether the file asked for, links followed, lies in the served folder (a link there to
        /etc must not serve /etc)."""
        root = os.path.realpath(self.directory)
        real = os.path.realpath(self.translate_path(self.path))
        return real == root or real.startswith(root.rstrip(os.sep) + os.sep)

    def list_directory(self, path: Any) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        page = Path(self.directory) / "404.html"
        if code != HTTPStatus.NOT_FOUND or not page.is_file():
            super().send_error(code, message, explain)
            return
        body = page.read_bytes()
        self.send_response(code, message)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    """A client that hangs up or goes quiet is the client's business: no traceback per connection."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError, ValueError)):
            return
        super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


def make_server(directory: Path, host: str = "127.0.0.1", port: int = 8000) -> ThreadingHTTPServer:
    """A server for ``directory``; port 0 picks a free port (tests). An IPv6 address (``::1``, or
    ``[::1]`` as a URL writes it) gets an IPv6 socket: the default one binds IPv4 only."""
    handler = functools.partial(_Handler, directory=str(directory))
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return (_Server6 if ":" in bare else _Server)((bare, port), handler)
