"""Whether the browser tests can run here: Debian's Chromium driven by playwright.

On a workstation without them the browser tests are skipped with the reason. In CI (``CI=true``)
they fail instead: a parity test that silently skips would let the JavaScript engine drift from
`kb search` unseen.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def missing_browser() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"needs Debian's chromium at {CHROMIUM}: apt install chromium (CI installs it; see .ci/run)"
    if importlib.util.find_spec("playwright") is None:
        return "needs the playwright python package (pip install playwright)"
    return None


def require_browser() -> None:
    """Skip the calling test when the browser is missing; fail it when ``CI=true``."""
    reason = missing_browser()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but the browser tests cannot run: {reason}", pytrace=False)
    pytest.skip(reason)
