"""Smaller hostile inputs: bad output paths and ports, what `serve` must not serve, endless device
files, half-valid reports, hidden load warnings and an ASCII-only terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from helpers import record

from trainkb.cli import main
from trainkb.site import make_server


@pytest.fixture
def cat(make_catalogue, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return make_catalogue({"alpha/D1-sample.yaml": record()})


def _no_traceback(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return captured.err


@pytest.mark.parametrize("target", ["file", "/proc/x/site"])
def test_site_build_into_a_file_or_an_unwritable_place(cat, tmp_path, capsys, target):
    out = tmp_path / "a-file" if target == "file" else Path(target)
    if target == "file":
        out.write_text("not a folder")
    assert main(["--catalogue", str(cat), "site", "build", "-o", str(out)]) == 2
    err = _no_traceback(capsys)
    assert err.startswith("kb: error: ") and str(out) in err


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_site_serve_on_an_impossible_port(tmp_path, capsys, port):
    assert main(["site", "serve", "-d", str(tmp_path), "--port", port]) == 2
    assert "port" in _no_traceback(capsys)


@pytest.fixture
def served(cat, tmp_path: Path):  # type: ignore[no-untyped-def]
    site = tmp_path / "site"
    assert main(["--catalogue", str(cat), "site", "build", "-o", str(site)]) == 0
    server = make_server(site, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", (site / "404.html").read_bytes()
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("path", ["/static/", "/.trainkb-site", "/%2etrainkb-site", "/.nojekyll", "/no/such/page"])
def test_serve_answers_404_with_the_sites_page(served, path):
    base, page = served
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(base + path)
    assert caught.value.code == 404
    assert caught.value.read() == page


def test_serve_still_serves_pages(served):
    base, _page = served
    with urllib.request.urlopen(base + "/D1/") as response:
        assert b"A sample failure for tests" in response.read()


@pytest.mark.slow
def test_doctor_on_an_endless_device_returns(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "doctor", "/dev/zero"],
        capture_output=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode in (0, 1) and b"Traceback" not in done.stderr
    assert b"not read: /dev/zero" in done.stdout  # the device was not read as a source file, and says so


def _report(rows: object) -> dict[str, object]:
    return {"format": "trainkb-check-report", "version": 1, "environments": [{"name": "cpu"}], "results": rows}


@pytest.mark.parametrize("rows", [[{"entry": "D1"}], [1, 2], "none"])
def test_report_merge_on_partly_valid_json(tmp_path, capsys, rows):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(_report([])))
    bad.write_text(json.dumps(_report(rows)))
    assert main(["report", "merge", str(good), str(bad)]) == 2
    err = _no_traceback(capsys)
    assert err.startswith(f"kb: error: {bad}: ")


def test_report_merge_on_truncated_json(tmp_path, capsys):
    bad = tmp_path / "cut.json"
    bad.write_text(json.dumps(_report([]))[:-5])
    assert main(["report", "merge", str(bad)]) == 2
    assert "not valid JSON" in _no_traceback(capsys)


def test_malformed_reports_file_is_reported(cat, tmp_path, capsys):
    reports = tmp_path / "reports"
    reports.mkdir()
    (reports / "broken.json").write_text("{not json")
    (reports / "odd.json").write_text(json.dumps(_report([{"entry": 3}])))
    assert (
        main(["--catalogue", str(cat), "site", "build", "-o", str(tmp_path / "site"), "--reports", str(reports)]) == 1
    )
    err = _no_traceback(capsys)
    assert "broken.json: not valid JSON" in err and "odd.json: results[0] needs" in err


def test_list_json_reports_the_load_warnings(cat, capsys):
    (cat / "alpha" / "D2-bad.yaml").write_text("id: [unclosed\n")
    assert main(["--catalogue", str(cat), "list", "--json"]) == 0
    captured = capsys.readouterr()
    assert [row["id"] for row in json.loads(captured.out)] == ["D1"]
    assert "kb: warning: catalogue/alpha/D2-bad.yaml:" in captured.err


@pytest.mark.parametrize("argv", [["show", "D1"], ["list"], ["search", "sample failure"]])
def test_ascii_only_output_never_raises(cat, argv):
    text = record().replace("A sample failure for tests", "A sample failure — “quoted” ✓ 模型")
    (cat / "alpha" / "D1-sample.yaml").write_text(text, encoding="utf-8")
    env = dict(os.environ, PYTHONIOENCODING="ascii")
    done = subprocess.run(
        [sys.executable, "-m", "trainkb.cli", "--catalogue", str(cat), *argv], capture_output=True, timeout=120, env=env
    )
    assert b"UnicodeEncodeError" not in done.stderr and b"Traceback" not in done.stderr
    assert done.returncode in (0, 1)
    assert b"\\u2014" in done.stdout or b"\\u201c" in done.stdout
