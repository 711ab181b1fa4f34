"""`kb site serve` answers hostile or vanishing clients without a traceback and drops idle ones."""

from __future__ import annotations

import select
import socket
import threading
import time
from pathlib import Path

import pytest

from trainkb.site import _serve


@pytest.fixture
def server(tmp_path, monkeypatch, capfd):
    (tmp_path / "index.html").write_text("<p>hi</p>")
    (tmp_path / "404.html").write_text("<p>missing</p>")
    monkeypatch.setattr(_serve._Handler, "timeout", 1.0)
    srv = _serve.make_server(tmp_path, port=0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def _request(srv, raw: bytes) -> bytes:
    with socket.create_connection(srv.server_address[:2], timeout=10) as sock:
        sock.sendall(raw)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_nul_in_the_path_is_a_404_not_a_dropped_connection(server, capfd):
    answer = _request(server, b"GET /%00 HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.0 404")
    time.sleep(0.2)
    assert "Traceback" not in capfd.readouterr().err


def test_clients_that_hang_up_leave_no_traceback(server, capfd):
    for _ in range(20):
        with socket.create_connection(server.server_address[:2]) as sock:
            sock.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n")  # never finished
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    time.sleep(1.5)
    assert "Traceback" not in capfd.readouterr().err


def test_the_handler_has_an_idle_timeout():
    assert _serve._Handler.timeout is not None and 0 < _serve._Handler.timeout <= 120


def test_an_idle_client_is_dropped(server):
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        assert sock.recv(1) == b""  # the server closed it (its timeout is 1 s here; the socket gives up at 10)


@pytest.mark.parametrize("stage", ["request line", "headers"])
def test_a_client_dripping_its_request_is_dropped(server, monkeypatch, stage):
    """One byte every 0.3 s never trips the 1-s idle timeout; the request's own deadline (2 s here) does."""
    monkeypatch.setattr(_serve._Handler, "request_seconds", 2.0, raising=False)
    began = time.monotonic()
    with socket.create_connection(server.server_address[:2]) as sock:
        sock.sendall(b"GET /index.html HTTP/1.1\r\n" if stage == "headers" else b"GET /")
        while time.monotonic() - began < 8:
            try:
                sock.sendall(b"a")
                if select.select([sock], [], [], 0)[0] and sock.recv(65536) == b"":
                    break  # the server closed it
            except OSError:  # reset: closed as well
                break
            time.sleep(0.3)
    assert time.monotonic() - began < 8


def test_a_link_out_of_the_served_folder_is_not_followed(server, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("not for the web")
    root = server.RequestHandlerClass.keywords["directory"]
    (Path(root) / "leak").symlink_to(outside)
    (Path(root) / "leak.txt").symlink_to(outside / "secret.txt")
    for path in (b"/leak/secret.txt", b"/leak.txt"):
        answer = _request(server, b"GET " + path + b" HTTP/1.0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.0 404") and b"not for the web" not in answer
    assert _request(server, b"GET /index.html HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200")


class _ClosedPipe:
    """stderr after `kb site serve 2>&1 | head -1` has exited: every write fails."""

    def write(self, text: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_log_pipe_stops_the_log_not_the_site(server, monkeypatch):
    monkeypatch.setattr(_serve._Handler, "log_failed", False, raising=False)
    monkeypatch.setattr("sys.stderr", _ClosedPipe())
    for _ in range(2):  # the first answer meets the failed log line, the next ones are not logged at all
        answer = _request(server, b"GET /index.html HTTP/1.0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"<p>hi</p>")
    assert _serve._Handler.log_failed
