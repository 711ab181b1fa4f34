"""The built site links only to itself, completely, and loads nothing from outside hosts."""

from __future__ import annotations

from pathlib import Path

import pytest
from linkcheck import broken_links, is_external, links_from, parse

from trainkb.catalogue import find_catalogue, load_catalogue

pytestmark = pytest.mark.slow  # each run builds the whole catalogue's site first


def test_every_internal_link_and_anchor_resolves(real_site: Path) -> None:
    assert broken_links(real_site) == []


def test_every_entry_is_two_clicks_from_home(real_site: Path) -> None:
    home = real_site / "index.html"
    one = links_from(real_site, home)
    two = set(one)
    for page in one:
        two |= links_from(real_site, page)
    cat = load_catalogue(find_catalogue())
    missing = [e for e in cat.entries if (real_site / e / "index.html").resolve() not in two]
    assert missing == []


def test_stable_urls(real_site: Path) -> None:
    cat = load_catalogue(find_catalogue())
    for entry_id in cat.entries:
        assert (real_site / entry_id / "index.html").is_file()
    for area in cat.areas:
        assert (real_site / area.id / "index.html").is_file()
    assert (real_site / "verification" / "index.html").is_file()
    assert (real_site / "search" / "index.html").is_file()


def test_nothing_is_loaded_from_outside_hosts(real_site: Path) -> None:
    for path in real_site.rglob("*.html"):
        for tag, attr, url in parse(path).refs:
            if tag != "a":  # scripts, styles, images: only files of the site itself
                assert not is_external(url) and not url.startswith("//"), f"{path}: <{tag} {attr}={url}>"
    for path in (real_site / "static").glob("*.css"):
        assert "url(" not in path.read_text(encoding="utf-8") and "@import" not in path.read_text(encoding="utf-8")


def test_pages_have_landmarks_and_labels(real_site: Path) -> None:
    for rel in ("index.html", "D8/index.html", "distributed-launch/index.html", "verification/index.html"):
        html = (real_site / rel).read_text(encoding="utf-8")
        for landmark in ("<header", "<nav", '<main id="main"', "<footer", 'class="skip"', '<html lang="en">'):
            assert landmark in html, (rel, landmark)
    graph = (real_site / "distributed-launch" / "index.html").read_text(encoding="utf-8")
    assert "<title id=" in graph and "<desc id=" in graph and "aria-labelledby" in graph
