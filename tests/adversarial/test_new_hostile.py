"""`kb new --from`: a paste holding control characters gives a record its own loader reads back, and
nothing of a paste or another layer's title reaches the terminal as a control character."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from trainkb._newrecord import Draft, render_record
from trainkb._terminal import CONTROL
from trainkb.catalogue import find_catalogue, load_layers
from trainkb.cli import main

# a C1 CSI (clears the screen where C1 is obeyed), a right-to-left override, NEL, a non-character
HOSTILE = "\u009b2J\u202egnp.exe\u0085\ufffe"
PASTE = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 3, in <module>\n'
    f"ValueError: manifest shard 17 has negative length {HOSTILE} end\n"
)


def _layer(tmp_path: Path) -> Path:
    layer = tmp_path / "team"
    layer.mkdir()
    (layer / "catalogue.yaml").write_text("name: team\n", encoding="utf-8")
    return layer


def test_a_record_from_a_paste_with_control_characters_loads_and_keeps_them(tmp_path, capsys):
    crash = tmp_path / "crash.log"
    crash.write_text(PASTE, encoding="utf-8")
    layer = _layer(tmp_path)
    assert main(["new", "--catalogue", str(layer), "--from", str(crash), "--area", "runtime-errors"]) == 0
    out = capsys.readouterr().out
    written = Path(re.search(r"^wrote (.+)$", out, re.M)[1])
    text = written.read_text(encoding="utf-8")
    assert not CONTROL.search(text.replace("\n", ""))  # the file holds escapes, not the characters
    data = yaml.safe_load(text)
    assert HOSTILE in data["signatures"][0]["example"]  # read back exactly as pasted
    cat = load_layers([find_catalogue(), layer])
    assert not cat.problems
    assert any(entry.id == data["id"] for entry in cat.ordered())


def test_dry_run_prints_no_control_character(tmp_path, capsys):
    crash = tmp_path / "crash.log"
    crash.write_text(PASTE, encoding="utf-8")
    layer = _layer(tmp_path)
    args = ["new", "--catalogue", str(layer), "--from", str(crash), "--area", "runtime-errors", "--dry-run"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert not CONTROL.search(out.replace("\n", ""))


@pytest.mark.parametrize("title", ["\x1b]0;retitled\x07 shard", "\u009b2J shard", "line\nbreak"])
def test_another_layers_title_in_a_comment_is_spelled_out(title):
    draft = Draft(id="Q1", area="runtime-errors", section="s", title="t", slug="t", candidates=[("Q0", "low", title)])
    text = render_record(draft)
    comment = next(line for line in text.splitlines() if line.startswith("#   Q0"))
    assert not CONTROL.search(comment)
    assert yaml.safe_load(text)["id"] == "Q1"  # and the record still parses


def test_a_full_disk_leaves_no_partial_record_and_the_rerun_writes_it(tmp_path):
    crash = tmp_path / "crash.log"
    crash.write_text(PASTE, encoding="utf-8")
    layer = _layer(tmp_path)
    kb = [sys.executable, "-m", "trainkb", "new", "--catalogue", str(layer), "--from", str(crash)]
    kb += ["--area", "runtime-errors", "--id", "G20"]
    limited = subprocess.run(["bash", "-c", 'ulimit -f 1; exec "$@"', "kb", *kb], capture_output=True, text=True)
    assert limited.returncode == 2 and "File too large" in limited.stderr, limited.stderr
    assert list((layer / "runtime-errors").iterdir()) == []  # no truncated record, no temporary file
    again = subprocess.run(kb, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    [written] = (layer / "runtime-errors").iterdir()
    assert written.stat().st_size > 1024 and yaml.safe_load(written.read_text(encoding="utf-8"))["id"] == "G20"
    assert subprocess.run(kb, capture_output=True, text=True).returncode == 2  # still never overwritten


# each case loads the bundled catalogue: the path that climbs out in `make quick`, the other two in `make test` too
@pytest.mark.parametrize(
    "typed",
    [
        "../../../../tmp/kb/pwn",
        pytest.param("Q9/x", marks=pytest.mark.slow),
        pytest.param("q1x", marks=pytest.mark.slow),
    ],
)
def test_an_invalid_id_is_refused_and_quoted_as_typed(tmp_path, capsys, typed):
    crash = tmp_path / "crash.log"
    crash.write_text(PASTE, encoding="utf-8")
    layer = _layer(tmp_path)
    args = ["new", "--catalogue", str(layer), "--from", str(crash), "--id", typed, "--area", "runtime-errors"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"kb: error: {typed!r} is not an entry id" in err and typed.upper() not in err
    assert [p.name for p in layer.rglob("*.yaml")] == ["catalogue.yaml"]  # no record written
