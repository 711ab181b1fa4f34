"""The static site: every entry a page, searchable by traceback in the browser, with its verification.

``build_site`` renders the catalogue and the check reports into a folder any static host (or
a browser opening it from disk) can serve; ``make_server`` serves it locally.
"""

from __future__ import annotations

from ._assets import site_dir
from ._build import MARKER, BuildResult, SiteError, build_site, build_stamp
from ._export import export_index, search_data
from ._render import render_markdown, safe_url
from ._serve import make_server

__all__ = [
    "MARKER",
    "BuildResult",
    "SiteError",
    "build_site",
    "build_stamp",
    "export_index",
    "make_server",
    "render_markdown",
    "safe_url",
    "search_data",
    "site_dir",
]
