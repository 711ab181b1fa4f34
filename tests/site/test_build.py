"""Determinism, the verification matrix, the graph and the `kb site` command."""

from __future__ import annotations

import errno
import json
import os
import shutil
import threading
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import checks_yaml, record

from trainkb.catalogue import find_catalogue, load_catalogue, load_verification
from trainkb.cli import main
from trainkb.site import _build as site_build
from trainkb.site import _inplace as site_inplace
from trainkb.site import build_site, make_server, site_dir
from trainkb.site._inplace import HIDDEN

LINKED = record(
    "D1",
    extra="links: [{id: D2, relation: cause-of, why: the second follows}]\n",
    checks=checks_yaml(
        {
            "name": "raises-it",
            "code": "raise RuntimeError('x')",
            "expect": {"raises": {"type": "RuntimeError", "match": "x"}},
        }
    ),
)
RECORDS = {
    "alpha/D1-one.yaml": LINKED,
    "alpha/D2-two.yaml": record("D2", section="two"),
    "beta/D3-three.yaml": record("D3", "beta", "three", extra="links: [{id: D1, relation: see-also, why: w}]\n"),
}
ROWS = [
    {
        "entry": "D1",
        "check": "raises-it",
        "status": "passed",
        "environment": "cpu-torch2.13.0",
        "seconds": 0.2,
        "message": "",
    }
]


# the real records whose pages the link tests read, and every entry their asserted links point to
LINK_PAGES = ("D25", "D26", "D29", "D35", "D38", "DP5", "E1", "E2", "E3", "M1", "M2", "M8", "O14", "T6")


@pytest.fixture(scope="module")
def linked_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of those real records alone: their own wording, at a fraction of a whole-catalogue build."""
    bundled, root = find_catalogue(), tmp_path_factory.mktemp("linked") / "catalogue"
    root.mkdir()
    shutil.copy(bundled / "areas.yaml", root / "areas.yaml")
    for entry in LINK_PAGES:
        [path] = bundled.glob(f"*/{entry}-*.yaml")
        (root / path.parent.name).mkdir(exist_ok=True)
        shutil.copy(path, root / path.parent.name / path.name)
    out = root.parent / "_site"
    build_site(load_catalogue(root), load_verification(root.parent / "reports"), out, stamp="2000-01-01 00:00 UTC")
    return out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_input_gives_byte_identical_output_but_for_the_stamp(build_small: Callable[..., Path]) -> None:
    first = _files(build_small(RECORDS, ROWS, out="a", stamp="2001-01-01 00:00 UTC"))
    again = _files(build_small(RECORDS, ROWS, out="b", stamp="2001-01-01 00:00 UTC"))
    assert first == again
    later = _files(build_small(RECORDS, ROWS, out="c", stamp="2002-02-02 00:00 UTC"))
    differ = [name for name in first if first[name] != later[name]]
    assert differ == ["index.html"]
    assert first["index.html"].replace(b"2001-01-01", b"2002-02-02") == later["index.html"]


def test_a_rebuild_without_renameat2_replaces_the_site_and_leaves_nothing_beside_it(
    build_small: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the kernel cannot swap two folders in one step, the old site moves aside and is removed."""
    first = _files(build_small(RECORDS))
    monkeypatch.setattr(site_build, "_exchange", lambda _one, _other: False)
    out = build_small(RECORDS)
    assert _files(out) == first
    assert sorted(p.name for p in out.parent.iterdir()) == ["_site", "catalogue"]


def _hidden(out: Path) -> list[str]:
    return [p.name for p in out.iterdir() if HIDDEN.fullmatch(p.name)]


def test_a_mount_point_is_rebuilt_in_place(
    make_catalogue: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A folder that cannot be renamed gets the new entries moved into it: the same site, and one line saying so."""
    root, out = make_catalogue(RECORDS), tmp_path / "out"
    build = ["--catalogue", str(root), "site", "build", "-o", str(out), "--json"]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "946684800")
    assert main(build) == 0
    assert json.loads(capsys.readouterr().out)["in_place"] is False
    first = _files(out)
    monkeypatch.setattr(site_build.os.path, "ismount", lambda path: Path(path) == out)
    assert main(build) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["in_place"] is True
    assert captured.err == f"kb: built in place: {out} is a mount point, so the swap is not atomic\n"
    assert _files(out) == first and _hidden(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue", "out"]


def test_a_rename_refused_as_busy_falls_back_to_an_in_place_swap(
    make_catalogue: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mount point that ``ismount`` misses (a bind mount) is found when the swap's rename says EBUSY."""
    root, out = make_catalogue(RECORDS), tmp_path / "out"
    cat, ver = load_catalogue(root), load_verification(tmp_path / "reports")
    assert not build_site(cat, ver, out, stamp="x").in_place
    first = _files(out)

    def busy(_one: Path, other: Path) -> bool:
        raise OSError(errno.EBUSY, os.strerror(errno.EBUSY), str(other))

    monkeypatch.setattr(site_build, "_exchange", busy)
    result = build_site(cat, ver, out, stamp="x")
    assert result.in_place and "mount point" in result.note
    assert _files(out) == first and _hidden(out) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue", "out"]


def test_an_in_place_swap_that_fails_midway_puts_the_old_site_back(
    make_catalogue: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = make_catalogue(RECORDS), tmp_path / "out"
    build_site(load_catalogue(root), load_verification(tmp_path / "reports"), out, stamp="old")
    first = _files(out)
    monkeypatch.setattr(site_build.os.path, "ismount", lambda path: Path(path) == out)
    real_move, moves = site_inplace.shutil.move, []

    def failing_move(src: Path, dst: Path) -> object:
        moves.append(src)
        if len(moves) == 4:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        return real_move(src, dst)

    monkeypatch.setattr(site_inplace.shutil, "move", failing_move)
    with pytest.raises(OSError, match="No space left"):
        build_site(load_catalogue(root), load_verification(tmp_path / "reports"), out, stamp="new")
    assert len(moves) == 4
    assert _files(out) == first and _hidden(out) == []


def test_verification_matrix_shows_status_and_date(build_small: Callable[..., Path]) -> None:
    site = build_small(RECORDS, ROWS)
    entry = (site / "D1" / "index.html").read_text(encoding="utf-8")
    assert "torch 2.13.0 CPU" in entry and 'class="status-passed"' in entry and "2026-01-02" in entry
    assert "verified on torch 2.13.0 CPU, 1 of 1 checks" in entry
    matrix = (site / "verification" / "index.html").read_text(encoding="utf-8")
    assert 'id="D1-raises-it"' in matrix and "1 passed" in matrix and "pending, test record" in matrix
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "1 of 1 checks that ran passed" in home


def test_area_graph_is_valid_svg_with_links(build_small: Callable[..., Path]) -> None:
    html = (build_small(RECORDS) / "alpha" / "index.html").read_text(encoding="utf-8")
    svg = html[html.index("<svg") : html.index("</svg>") + 6]
    tree = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    nodes = {a.get("href") for a in tree.iterfind(".//s:a", ns)}
    assert nodes == {"../D1/index.html", "../D2/index.html", "../D3/index.html"}  # D3: other area, links in
    assert len(tree.findall(".//s:path[@class='edge rel-cause-of']", ns)) == 1
    assert "<script" not in svg


def test_backlinks_are_rendered(build_small: Callable[..., Path]) -> None:
    page = (build_small(RECORDS) / "D2" / "index.html").read_text(encoding="utf-8")
    assert "Linked from" in page and 'href="../D1/index.html"' in page


def test_cli_build_json_and_refusal(
    make_catalogue: Callable[..., Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_catalogue(RECORDS)
    out = tmp_path / "out"
    assert main(["--catalogue", str(root), "site", "build", "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["entries"] == 3 and report["pages"] == 3 + 2 + 4 and (out / "D1" / "index.html").is_file()
    assert main(["--catalogue", str(root), "site", "build", "-o", str(out)]) == 0  # a rebuild replaces it
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me", encoding="utf-8")
    assert main(["--catalogue", str(root), "site", "build", "-o", str(mine)]) == 2
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep me"
    assert "was not made by `kb site build`" in capsys.readouterr().err


def test_catalogue_may_follow_site_build(make_catalogue: Callable[..., Path], tmp_path: Path) -> None:
    """`kb site build -o S --catalogue L` works as docs/cli.md says `--catalogue` does after any command."""
    out = tmp_path / "out"
    assert main(["site", "build", "-o", str(out), "--catalogue", str(make_catalogue(RECORDS))]) == 0
    assert sorted(p.name for p in out.iterdir() if p.name[0] == "D") == ["D1", "D2", "D3"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["catalogue", "out"]  # no build folder left beside it


def test_cli_base_url_sets_the_404_page(make_catalogue: Callable[..., Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert (
        main(["--catalogue", str(make_catalogue(RECORDS)), "site", "build", "-o", str(out), "--base-url", "trainkb"])
        == 0
    )
    assert 'href="/trainkb/static/style.css"' in (out / "404.html").read_text(encoding="utf-8")
    assert 'href="../static/style.css"' in (out / "D1" / "index.html").read_text(encoding="utf-8")


def test_serve_binds_localhost_and_serves_the_site(build_small: Callable[..., Path]) -> None:
    site = build_small(RECORDS)
    server = make_server(site, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/D1/") as response:
            assert b"A sample failure for tests" in response.read()
    finally:
        server.shutdown()
        server.server_close()


def test_serve_without_a_built_site_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["site", "serve", "-d", str(tmp_path / "nothing")]) == 2


def test_templates_are_found_in_the_checkout() -> None:
    assert (site_dir() / "templates" / "base.html.j2").is_file()
    assert (site_dir() / "static" / "engine.js").is_file()


def test_ids_in_signature_notes_and_unlinked_references_are_links(linked_site: Path) -> None:
    """An id a signature's note or a reference without an address names links to its entry, as in the prose; the
    rest stays as written (no Markdown: `DDP.__init__` keeps its underscores) and `code` is code."""
    m2 = (linked_site / "M2" / "index.html").read_text(encoding="utf-8")
    assert 'same as <a href="../M1/index.html" class="entry-ref">M1</a>&#x27;s; only the history' in m2
    dp5 = (linked_site / "DP5" / "index.html").read_text(encoding="utf-8")
    assert 'host-to-device copies, <a href="../T6/index.html" class="entry-ref">T6</a>)</li>' in dp5
    d38 = (linked_site / "D38" / "index.html").read_text(encoding="utf-8")
    assert "torch/nn/parallel/distributed.py, DDP.__init__)" in d38
    o14 = (linked_site / "O14" / "index.html").read_text(encoding="utf-8")
    assert "print <code>Target 255 is out of bounds</code> for their void label" in o14


def test_ids_in_pairs_ranges_and_the_fix_summary_are_links(linked_site: Path, build_small: Callable[..., Path]) -> None:
    """Ids joined by a slash, a hyphen or an en dash (E1/E2, D1-D2, D29–D35) link each id; so do the fix summary's."""

    def link(entry: str) -> str:
        return f'<a href="../{entry}/index.html" class="entry-ref">{entry}</a>'

    e3 = (linked_site / "E3" / "index.html").read_text(encoding="utf-8")
    assert f"apart from {link('E1')}/{link('E2')}" in e3
    d26 = (linked_site / "D26" / "index.html").read_text(encoding="utf-8")
    assert f"failure: see {link('D29')}\u2013{link('D35')}" in d26
    ranged = record("D3", "beta", "three", extra="links: [{id: D1, relation: see-also, why: one of D1-D2}]\n")
    d3 = (build_small({**RECORDS, "beta/D3-three.yaml": ranged}) / "D3" / "index.html").read_text(encoding="utf-8")
    assert f"one of {link('D1')}-{link('D2')}" in d3
    d25 = (linked_site / "D25" / "index.html").read_text(encoding="utf-8")
    fix = d25[d25.index('<p class="fix-summary">') :]
    assert f"in <code>dmesg</code> ({link('M8')})" in fix[: fix.index("</p>")]
