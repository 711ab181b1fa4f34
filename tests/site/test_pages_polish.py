"""What every page carries and how an entry lists its neighbours: an icon of the site's own (no favicon 404, from
a server or from disk) and each related entry once, by its forward relation when the link goes both ways."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from helpers import record

BOTH_WAYS = {
    "alpha/D1-one.yaml": record("D1", extra="links: [{id: D2, relation: cause-of, why: the second follows}]\n"),
    "alpha/D2-two.yaml": record("D2", section="two", extra="links: [{id: D1, relation: see-also, why: back}]\n"),
    "beta/D3-three.yaml": record("D3", "beta", "three", extra="links: [{id: D1, relation: see-also, why: w}]\n"),
}


def test_every_page_links_an_icon_that_ships_with_it(build_small: Callable[..., Path]) -> None:
    site = build_small(BOTH_WAYS)
    pages = [p for p in site.rglob("*.html") if p.name != "404.html"]  # 404's links are absolute, to the base URL
    assert len(pages) >= 5
    for page in pages:
        found = re.search(r'<link rel="icon" href="([^"]+)"', page.read_text(encoding="utf-8"))
        assert found, page
        icon = (page.parent / found[1]).resolve()
        assert icon.is_file() and icon.read_text(encoding="utf-8").startswith("<svg"), (page, icon)
    assert '<link rel="icon" href="/static/favicon.svg"' in (site / "404.html").read_text(encoding="utf-8")


def test_a_link_both_ways_is_listed_once(build_small: Callable[..., Path]) -> None:
    site = build_small(BOTH_WAYS)
    page = (site / "D1" / "index.html").read_text(encoding="utf-8")
    related = page.split('<h2 id="related">', 1)[1].split("</section>", 1)[0]
    targets = re.findall(r'<a href="\.\./(D\d+)/index\.html">', related)
    assert sorted(targets) == ["D2", "D3"], targets  # D2 once (D1 links it, and it links back), D3 linked from
    assert 'Linked from</strong> <a href="../D3/' in related and "the second follows" in related
