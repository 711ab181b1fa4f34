"""An inline flag or a group name in a signature's regex is syntax, not a word the text must hold.

Search only tries a signature on text holding its required words; reading ``(?i)Trying`` as the word
``itrying`` (or ``(?s)`` as ``s``) made lint call the signature unreachable and search never fire it.
"""

from __future__ import annotations

import pytest
from helpers import TEAM_AREAS, TEAM_RECORD, team_paste

from trainkb.catalogue import ENV_VAR, find_catalogue, load_layers
from trainkb.lint import lint_catalogue
from trainkb.search import search
from trainkb.search._index import load_index

PLAIN = "regex: Trying to create tensor with negative dimension -?[0-9]+"


# each case lints and indexes the bundled catalogue with the layer: a global flag and group names in `make quick`,
# the other flag forms in `make test` too
@pytest.mark.parametrize(
    "regex",
    [
        "(?i)Trying to create tensor with negative dimension -?[0-9]+",
        pytest.param("(?s)Trying to create tensor with negative dimension -?[0-9]+", marks=pytest.mark.slow),
        pytest.param("(?i:Trying) to create (?s:tensor) with negative dimension -?[0-9]+", marks=pytest.mark.slow),
        "(?P<what>Trying) to create tensor with (?P<sign>negative) dimension -?[0-9]+",
    ],
)
def test_flags_and_group_names_do_not_gate_the_signature(regex, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    layer = tmp_path / "team"
    (layer / "cluster").mkdir(parents=True)
    (layer / "catalogue.yaml").write_text("name: team\n", encoding="utf-8")
    (layer / "areas.yaml").write_text(TEAM_AREAS, encoding="utf-8")
    assert PLAIN in TEAM_RECORD
    text = TEAM_RECORD.replace(PLAIN, f"regex: '{regex}'")
    (layer / "cluster" / "Q1-negative-shard-length.yaml").write_text(text, encoding="utf-8")
    findings = lint_catalogue(load_layers([find_catalogue(), layer]))
    assert [f for f in findings if f.rule == "signature-gate"] == []
    response = search(team_paste(), top=3, catalogue=load_index([find_catalogue(), layer], use_cache=False))
    assert response.results[0].id == "Q1"
