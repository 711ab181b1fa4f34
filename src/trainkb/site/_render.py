"""Catalogue Markdown to safe HTML: raw HTML off, code highlighted, links limited.

Records are written by many hands and rendered on a public site, so nothing in them may
become markup or a script: raw HTML is escaped, images are not rendered (they would load
from outside hosts), and a link survives only when it is http(s) or a relative path.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

__all__ = ["highlight_code", "pygments_css", "render_inline", "render_markdown", "safe_url"]

_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.\-]*:")
_FORMATTER = HtmlFormatter(nowrap=True)


def safe_url(url: str) -> bool:
    """True for http(s) links and relative ones (no scheme, not protocol-relative)."""
    url = url.strip()
    if ":" in re.split(r"[/?#]", url, maxsplit=1)[0]:  # a scheme, however disguised
        return bool(_SCHEME.match(url)) and url.lower().startswith(("http://", "https://"))
    return not url.startswith("//") and "\\" not in url


@lru_cache(maxsize=64)
def _lexer(language: str):  # type: ignore[no-untyped-def]  # pygments lexers are untyped
    try:
        return get_lexer_by_name(language or "text", stripnl=False)
    except ClassNotFound:
        return TextLexer(stripnl=False)


def highlight_code(code: str, language: str = "python") -> str:
    """Pygments spans for ``code``; the template wraps them in <pre><code>."""
    return highlight(code, _lexer(language), _FORMATTER).rstrip("\n")


def _fence(code: str, language: str, _attrs: str) -> str:
    return f'<pre class="highlight"><code>{highlight_code(code, language.split()[0] if language else "")}</code></pre>'


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _fence})
    md.disable("image")
    md.validateLink = safe_url  # type: ignore[method-assign]  # markdown-it's documented hook

    def link_open(renderer, tokens, idx, options, env):  # type: ignore[no-untyped-def]
        if _SCHEME.match(str(tokens[idx].attrGet("href") or "")):
            tokens[idx].attrSet("rel", "noopener noreferrer")
            tokens[idx].attrSet("class", "external")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """HTML of one Markdown field of a record (symptom, root cause, fix, a claim)."""
    return _MD.render(text)


def pygments_css() -> str:
    """Light and dark highlighting rules, the dark set under prefers-color-scheme."""
    light = HtmlFormatter(style="default").get_style_defs(".highlight")
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")
    dark = dark.replace(".highlight { background: #272822; }", ".highlight { background: #1e1f1c; }")
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"


def render_inline(text: str) -> str:
    """HTML of a one-line field (a link's why, a claim, a version note) without a <p>."""
    return _MD.renderInline(text)
