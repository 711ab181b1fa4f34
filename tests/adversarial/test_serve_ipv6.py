"""`kb site serve --host ::1` listens on IPv6 (the default server socket is IPv4 only) and says so clearly."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from helpers import record

from trainkb.cli import main


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as probe:
            probe.bind(("::1", 0))
    except OSError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _ipv6_loopback(), reason="this machine has no IPv6 loopback")


def test_serve_on_ipv6_loopback(make_catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cat = make_catalogue({"alpha/D1-sample.yaml": record()})
    site = tmp_path / "site"
    assert main(["--catalogue", str(cat), "site", "build", "-o", str(site)]) == 0
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parents[2] / "src"), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "trainkb", "site", "serve", "-d", str(site), "--host", "::1", "--port", "0"]
    server = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith(f"serving {site}/ at http://[::1]:"), (
            line + server.stderr.read() if server.poll() else line
        )
        url = line.split(" at ", 1)[1].split("/ ", 1)[0]
        with urllib.request.urlopen(url + "/D1/", timeout=60) as response:
            assert b"A sample failure for tests" in response.read()
    finally:
        server.terminate()
        server.wait(timeout=60)


def test_a_taken_ipv6_port_is_named_in_brackets(make_catalogue, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    cat = make_catalogue({"alpha/D1-sample.yaml": record()})
    site = tmp_path / "site"
    assert main(["--catalogue", str(cat), "site", "build", "-o", str(site)]) == 0
    capsys.readouterr()
    with socket.socket(socket.AF_INET6) as taken:
        taken.bind(("::1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        started = time.monotonic()
        assert main(["site", "serve", "-d", str(site), "--host", "::1", "--port", str(port)]) == 2
        assert time.monotonic() - started < 60
    err = capsys.readouterr().err
    assert err.startswith(f"kb: error: cannot listen on [::1]:{port}: ") and "Traceback" not in err
