"""A small link checker for a built site: every internal href, src and #anchor must resolve."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.refs: list[tuple[str, str, str]] = []  # (tag, attribute, value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.refs.append((tag, name, value))


def parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def is_external(url: str) -> bool:
    return bool(urlsplit(url).scheme)


def target(page: Path, url: str) -> tuple[Path, str]:
    """The file and anchor a relative ``url`` on ``page`` points to."""
    rest, anchor = urldefrag(url)
    if not rest:
        return page, anchor
    path = (page.parent / unquote(rest)).resolve()
    return (path / "index.html" if path.is_dir() else path), anchor


def broken_links(site: Path) -> list[str]:
    """'page: url (why)' for every internal reference that does not resolve."""
    pages = {p.resolve(): parse(p) for p in site.rglob("*.html") if p.name != "404.html"}
    problems = []
    for path, page in sorted(pages.items()):
        for _tag, _attr, url in page.refs:
            if is_external(url):
                continue
            file, anchor = target(path, url)
            if not file.is_file():
                problems.append(f"{path.relative_to(site.resolve())}: {url} (no such file)")
            elif anchor and file.suffix == ".html" and anchor not in pages[file].ids:
                problems.append(f"{path.relative_to(site.resolve())}: {url} (no #{anchor})")
    return problems


def links_from(site: Path, page: Path) -> set[Path]:
    return {
        target(page.resolve(), url)[0]
        for _t, _a, url in parse(page).refs
        if not is_external(url) and url.split("#")[0].endswith(".html")
    }
