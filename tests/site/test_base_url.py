"""`kb site build --base-url` takes a path only: the 404 page writes it before its links."""

from __future__ import annotations

import pytest

from trainkb.cli import main


@pytest.mark.parametrize(
    "base", ["javascript:alert(1)//", "https://example.org/kb/", "//example.org/", "/kb/?x=1", "/kb/#top", '/a"b/']
)
def test_a_base_url_that_is_not_a_path_is_a_usage_error(tmp_path, capsys, base):
    out = tmp_path / "site"
    assert main(["site", "build", "-o", str(out), "--base-url", base]) == 2
    assert "give the path the site is served under, e.g. /trainkb/" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("base", ["/", "/trainkb/", "trainkb", "/org/my-kb_2.0/", "/%7Euser/"])
def test_a_path_is_taken_as_given(base):
    from trainkb.commands.site import _base_path

    assert _base_path(base) == base
