"""Catalogue Markdown to safe HTML: raw HTML off, code highlighted, links limited.

Records are written by many hands and rendered on a public site, so nothing in them may
become markup or a script: raw HTML is escaped, images are not rendered (they would load
from outside hosts), and a link survives only when it is http(s) or a relative path.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator, Sequence
from functools import lru_cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

__all__ = [
    "code_spans",
    "highlight_code",
    "linked_line",
    "plain",
    "pygments_css",
    "render_inline",
    "render_markdown",
    "safe_url",
]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_FORMATTER: HtmlFormatter[str] = HtmlFormatter(nowrap=True)
_ID = r"(?:DP|DF|[DPOCLVRXMATGEK])[1-9][0-9]{0,2}"
_ONE_ID = re.compile(_ID)
# an id, or ids joined by "/" or "-" (E1/E2, M1-M4): not part of a path, a file name or a longer word
_ENTRY_ID = re.compile(rf"(?<![\w./-]){_ID}(?:[/\-\u2013]{_ID})*(?![\w/-])")
# ids that are also hardware names (an L4 or T4 GPU, an M1 Mac): linked unless the words around them name hardware
_HARDWARE = frozenset(
    {"A10", "A30", "A40", "A100", "A800", "K80", "L4", "L40", "M1", "M2", "M3", "M4", "P4", "P40", "P100", "T4", "V100"}
)
_GPU_NAMES = r"(?:[AHV]100|H200|RTX|GTX|Turing|Volta|Ampere|Hopper)"
_HARDWARE_BEFORE = re.compile(
    r"(?:\b(?:an?|on|NVIDIA|Nvidia|Tesla|Apple|GeForce|Quadro|emulating|single|one|two|four|eight|\d+\s*x)\s+|[x×]\s?"
    rf"|\b{_GPU_NAMES}\s*(?:[,/]|\bor\b|\band\b)?\s*\(?)$",
    re.IGNORECASE,
)
_HARDWARE_AFTER = re.compile(
    r"^(?:s\b|\s+(?:GPUs?|Macs?|MacBooks?|chips?|cards?|Pro|Max|Ultra|instances?|nodes?|machines?|PCIe|SXM\w*|"
    rf"\d+\s?GB)\b|\s*(?:,|\bor\b|\band\b)\s*(?:{_GPU_NAMES}\b|\d\.\d))",
    re.IGNORECASE,
)


def code_spans(text: str) -> Markup:
    """A one-line field (a title, a fix summary) as HTML: `inline code` becomes <code>, nothing else."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick stays a backtick
        parts[-2:] = ["`".join(parts[-2:])]
    return Markup("".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p) for i, p in enumerate(parts)))


def plain(text: str) -> str:
    """A one-line field without its code-span backticks (a page <title>)."""
    return text.replace("`", "")


def _id_spans(text: str, ids: frozenset[str]) -> Iterator[re.Match[str]]:
    """Every mention of an existing entry id in ``text``, but a hardware name (an L4 GPU, an M1 Mac)."""
    for chain in _ENTRY_ID.finditer(text):
        for match in _ONE_ID.finditer(text, chain.start(), chain.end()):
            found = match.group(0)
            if found not in ids:
                continue
            if found in _HARDWARE and (
                _HARDWARE_BEFORE.search(text[: match.start()]) or _HARDWARE_AFTER.match(text[match.end() :])
            ):
                continue
            yield match


def _id_links(text: str, ids: frozenset[str], root: str) -> list[Token] | None:
    """Text split into text and link tokens at every mention of an existing entry id."""
    out: list[Token] = []
    last = 0
    for match in _id_spans(text, ids):
        found = match.group(0)
        if match.start() > last:
            out.append(_text(text[last : match.start()]))
        link = Token("link_open", "a", 1)
        link.attrSet("href", f"{root}{found}/index.html")
        link.attrSet("class", "entry-ref")
        out += [link, _text(found), Token("link_close", "a", -1)]
        last = match.end()
    if not out:
        return None
    if last < len(text):
        out.append(_text(text[last:]))
    return out


def linked_line(text: str, ids: frozenset[str], root: str = "../") -> Markup:
    """A one-line field of plain text (a signature's note, a reference without a link): `inline code` becomes
    <code> and an entry id a link to its page; nothing else is markup (not Markdown: `__init__` stays as written)."""
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick stays a backtick
        parts[-2:] = ["`".join(parts[-2:])]
    out = []
    for i, part in enumerate(parts):
        if i % 2:
            out.append(f"<code>{html.escape(part)}</code>")
            continue
        last = 0
        for match in _id_spans(part, ids):
            found = match.group(0)
            out += [html.escape(part[last : match.start()]), f'<a href="{root}{found}/index.html" class="entry-ref">']
            out += [found, "</a>"]
            last = match.end()
        out.append(html.escape(part[last:]))
    return Markup("".join(out))


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _entry_links(state: StateCore) -> None:
    """Core rule: entry ids in prose (not in code, not inside a link) link to their pages."""
    ids: frozenset[str] = state.env.get("entry_ids") or frozenset()
    if not ids:
        return
    root = state.env.get("entry_root", "../")
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        children: list[Token] = []
        depth = 0
        for token in block.children:
            depth += token.type == "link_open"
            depth -= token.type == "link_close"
            split = _id_links(token.content, ids, root) if token.type == "text" and depth == 0 else None
            children += split or [token]
        block.children = children


def safe_url(url: str) -> bool:
    """True for http(s) links and relative ones (no scheme, not protocol-relative)."""
    url = url.strip()
    if ":" in re.split(r"[/?#]", url, maxsplit=1)[0]:  # a scheme, however disguised
        return bool(_SCHEME.match(url)) and url.lower().startswith(("http://", "https://"))
    return not url.startswith("//") and "\\" not in url


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer:
    try:
        lexer: Lexer = get_lexer_by_name(language or "text", stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    return lexer


def highlight_code(code: str, language: str = "python") -> str:
    """Pygments spans for ``code``; the template wraps them in <pre><code>."""
    return highlight(code, _lexer(language), _FORMATTER).rstrip("\n")


def _fence(code: str, language: str, _attrs: str) -> str:
    return f'<pre class="highlight"><code>{highlight_code(code, language.split()[0] if language else "")}</code></pre>'


class _SafeLinks(MarkdownIt):
    """markdown-it with this module's link check in its documented hook."""

    def validateLink(self, url: str) -> bool:
        return safe_url(url)


def _parser() -> MarkdownIt:
    md = _SafeLinks("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _fence})
    md.enable("table")  # the commonmark preset leaves GFM tables off; records use them
    md.disable("image")
    md.core.ruler.push("entry_links", _entry_links)

    def link_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        if _SCHEME.match(str(tokens[idx].attrGet("href") or "")):
            tokens[idx].attrSet("rel", "noopener noreferrer")
            tokens[idx].attrSet("class", "external")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


_MD = _parser()


def _env(ids: frozenset[str] | None, root: str) -> dict[str, Any]:
    return {"entry_ids": ids or frozenset(), "entry_root": root}


def render_markdown(text: str, ids: frozenset[str] | None = None, root: str = "../") -> str:
    """HTML of one Markdown field of a record (symptom, root cause, fix); ``ids`` are linked where named."""
    rendered: str = _MD.render(text, _env(ids, root))
    return rendered


def pygments_css() -> str:
    """Light and dark highlighting rules, the dark set under prefers-color-scheme."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")
    dark = dark.replace(".highlight { background: #272822; }", ".highlight { background: #1e1f1c; }")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def render_inline(text: str, ids: frozenset[str] | None = None, root: str = "../") -> str:
    """HTML of a one-line field (a link's why, a claim, a version note) without a <p>."""
    rendered: str = _MD.renderInline(text, _env(ids, root))
    return rendered
